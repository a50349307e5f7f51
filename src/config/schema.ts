/**
 * The one schema for every setting. Defaults live here; `load-config.ts` merges
 * defaults < config file < environment < CLI flags and validates the result against it.
 * @module
 */
import { z } from 'zod'

const ServerSchema = z
  .object({
    /** Interface to listen on. Default `0.0.0.0`. */
    host: z.string().default('0.0.0.0'),
    /** TCP port. Default `8080`. */
    port: z.number().int().min(0).max(65535).default(8080),
    /** Largest accepted request body in bytes (library uploads included). Default 32 MiB. */
    bodyLimitBytes: z
      .number()
      .int()
      .positive()
      .default(32 * 1024 * 1024),
    /** Longest accepted instruction or query, in characters. Default 8,000. */
    maxInstructionChars: z.number().int().positive().default(8000),
    /** Largest `k` a request may ask for. Default 100. */
    maxK: z.number().int().positive().default(100),
    /** Time limit per request in milliseconds; the request's AbortSignal fires then. Default 30,000. */
    requestTimeoutMs: z.number().int().positive().default(30_000),
    /** Time limit for a library upload (import + index build), in milliseconds. Default 600,000. */
    buildTimeoutMs: z.number().int().positive().default(600_000),
    /** Milliseconds to wait for in-flight requests on shutdown before closing anyway. Default 10,000. */
    shutdownGraceMs: z.number().int().nonnegative().default(10_000),
  })
  .strict()

const LibrarySchema = z
  .object({
    /**
     * Library served when a request names none: a built index name under `indexDir`, a tool file,
     * or a directory of tool files. Default `demo` (the embedded demo library).
     */
    default: z.string().default('demo'),
    /** Directory that holds built indexes, one sub-directory per library. Default `indexes`. */
    indexDir: z.string().default('indexes'),
    /** Load every index found in `indexDir` at start, not only the default one. Default true. */
    loadAll: z.boolean().default(true),
  })
  .strict()

const Bm25Schema = z
  .object({
    /** Keep candidates scoring above this (the paper's tau). Default 3. Sensible 0-10. */
    tau: z.number().min(0).default(3),
    /** BM25 term-frequency saturation. Recommended 1.2-2. Default 1.2. */
    k1: z.number().positive().default(1.2),
    /** BM25 length normalisation, 0-1. Default 0.75. */
    b: z.number().min(0).max(1).default(0.75),
    /** Relative weight of each indexed field. Defaults name 3, description 1, parameters 1, namespace 1. */
    fieldWeights: z
      .object({
        name: z.number().positive().default(3),
        description: z.number().positive().default(1),
        parameters: z.number().positive().default(1),
        namespace: z.number().positive().default(1),
      })
      .strict()
      .default({ name: 3, description: 1, parameters: 1, namespace: 1 }),
  })
  .strict()

const RetrieveSchema = z
  .object({
    /** Retriever used when a request names none: `bm25`, `dense` or `hybrid`. Default `bm25`. */
    retriever: z.string().default('bm25'),
    /** Candidates kept per step (the paper's K). Default 15. */
    k: z.number().int().positive().default(15),
    bm25: Bm25Schema.default(Bm25Schema.parse({})),
  })
  .strict()

const PlanSchema = z
  .object({
    /** Planner used when a request names none: `rule`, `none`, or `llm:<model id>`. Default `rule`. */
    planner: z.string().default('rule'),
    /** Most steps a plan may have; longer plans are cut. Default 8. */
    maxSteps: z.number().int().positive().default(8),
  })
  .strict()

const SelectSchema = z
  .object({
    /** Selector used when a request names none: `top1` or `llm:<model id>`. Default `top1`. */
    selector: z.string().default('top1'),
  })
  .strict()

const BenchSchema = z
  .object({
    /** Root of the benchmark data (see ../shared/data/README.md). Default `../shared/data`. */
    dataDir: z.string().default('../shared/data'),
    /** Where reports are written. Default `bench/out`. */
    outDir: z.string().default('bench/out'),
  })
  .strict()

const LogSchema = z
  .object({
    /** `debug`, `info`, `warn`, `error` or `silent`. Default `info`. */
    level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  })
  .strict()

export const ConfigSchema = z
  .object({
    server: ServerSchema.default(ServerSchema.parse({})),
    library: LibrarySchema.default(LibrarySchema.parse({})),
    retrieve: RetrieveSchema.default(RetrieveSchema.parse({})),
    plan: PlanSchema.default(PlanSchema.parse({})),
    select: SelectSchema.default(SelectSchema.parse({})),
    bench: BenchSchema.default(BenchSchema.parse({})),
    log: LogSchema.default(LogSchema.parse({})),
  })
  .strict()

export type Config = z.infer<typeof ConfigSchema>

/** The configuration with every default applied. */
export function defaultConfig(): Config {
  return ConfigSchema.parse({})
}
