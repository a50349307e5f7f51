/**
 * Every environment variable toolsel reads, listed explicitly (variable → config path and type).
 * Only the config loader reads `process.env`.
 * @module
 */
import { writeFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { closestName } from './closest-name.ts'

/** `list`: comma-separated strings. */
export type EnvValueType = 'string' | 'integer' | 'number' | 'boolean' | 'list'

export interface EnvVar {
  path: string
  type: EnvValueType
  description: string
}

export const ENV_VARS: Record<string, EnvVar> = {
  TOOLSEL_HOST: { path: 'server.host', type: 'string', description: 'Interface to listen on' },
  TOOLSEL_PORT: { path: 'server.port', type: 'integer', description: 'TCP port' },
  TOOLSEL_WORKERS: {
    path: 'server.workers',
    type: 'integer',
    description: 'Server processes sharing the port (0: one per core)',
  },
  TOOLSEL_INDEX_WATCH_MS: {
    path: 'server.indexWatchMs',
    type: 'integer',
    description: 'How often a server looks for indexes other processes committed (0: never)',
  },
  TOOLSEL_INDEX_RETRY_LIMIT: {
    path: 'server.indexRetryLimit',
    type: 'integer',
    description: 'Tries again of a committed index that failed to load, before giving up',
  },
  TOOLSEL_BODY_LIMIT_BYTES: {
    path: 'server.bodyLimitBytes',
    type: 'integer',
    description: 'Largest request body',
  },
  TOOLSEL_IMPORT_WORKER_MIN_CHARS: {
    path: 'server.importWorkerMinChars',
    type: 'integer',
    description: 'Library uploads this long or longer are imported in a worker thread (0: all)',
  },
  TOOLSEL_REQUEST_TIMEOUT_MS: {
    path: 'server.requestTimeoutMs',
    type: 'integer',
    description: 'Per-request time limit',
  },
  TOOLSEL_READS_PER_MINUTE: {
    path: 'server.readsPerMinute',
    type: 'integer',
    description: 'Requests a minute one client may send to the read routes (0: no limit)',
  },
  TOOLSEL_WRITES_PER_MINUTE: {
    path: 'server.writesPerMinute',
    type: 'integer',
    description: 'Requests a minute one client may send to the write (admin) routes (0: no limit)',
  },
  TOOLSEL_TRUSTED_PROXIES: {
    path: 'server.trustedProxies',
    type: 'list',
    description:
      'Reverse proxies (addresses, CIDRs) whose forwarding header names the client, comma-separated',
  },
  TOOLSEL_FORWARDED_HEADER: {
    path: 'server.forwardedHeader',
    type: 'string',
    description: 'The header the trusted proxies write: x-forwarded-for or forwarded',
  },
  TOOLSEL_ADMIN_KEY: {
    path: 'auth.adminKey',
    type: 'string',
    description: 'Admin API key (writes); 16+ characters',
  },
  TOOLSEL_READ_KEYS: {
    path: 'auth.readKeys',
    type: 'list',
    description: 'Read API keys, comma-separated',
  },
  TOOLSEL_INSECURE_NO_AUTH: {
    path: 'auth.insecureNoAuth',
    type: 'boolean',
    description: 'Allow a non-loopback address without keys',
  },
  TOOLSEL_ALLOWED_HOSTS: {
    path: 'server.allowedHosts',
    type: 'list',
    description: 'Host names answered (DNS-rebinding protection), comma-separated',
  },
  TOOLSEL_CORS_ORIGINS: {
    path: 'server.corsOrigins',
    type: 'list',
    description: 'Browser origins allowed (CORS), comma-separated',
  },
  TOOLSEL_LIBRARY: {
    path: 'library.default',
    type: 'string',
    description: 'Default library: index name, tool file or directory',
  },
  TOOLSEL_INDEX_DIR: {
    path: 'library.indexDir',
    type: 'string',
    description: 'Directory of built indexes',
  },
  TOOLSEL_MAX_FILE_BYTES: {
    path: 'library.maxFileBytes',
    type: 'integer',
    description: 'Largest tool file read from disk, in bytes',
  },
  TOOLSEL_MAX_TOOLS: {
    path: 'library.maxTools',
    type: 'integer',
    description: 'Most tools one import may produce (and records one tool file may hold)',
  },
  TOOLSEL_SNAPSHOT_DIR: {
    path: 'library.snapshotDir',
    type: 'string',
    description: 'Directory POST /v1/snapshots writes snapshots into',
  },
  TOOLSEL_RETRIEVER: {
    path: 'retrieve.retriever',
    type: 'string',
    description: 'Default retriever',
  },
  TOOLSEL_BUILD_RETRIEVER: {
    path: 'retrieve.build',
    type: 'string',
    description:
      'Retriever parts built when not told, a comma list: bm25, dense, hybrid, regex, dense:<embedder>, hybrid:<part>+<part>',
  },
  TOOLSEL_EMBEDDER: {
    path: 'retrieve.dense.embedder',
    type: 'string',
    description: 'Embedding model: use-lite, onnx:<dir>, static[:glove-100d] or hashing[:<dims>]',
  },
  TOOLSEL_DENSE_INDEX: {
    path: 'retrieve.dense.index',
    type: 'string',
    description: 'Vector index of new builds: hnsw or flat',
  },
  TOOLSEL_EMBED_THREADS: {
    path: 'retrieve.dense.threads',
    type: 'integer',
    description: 'use-lite worker threads for index builds (0: main thread)',
  },
  TOOLSEL_DEVICE: {
    path: 'retrieve.dense.device',
    type: 'string',
    description: 'Where onnx embedders run: cpu or cuda (falls back to cpu)',
  },
  TOOLSEL_K: { path: 'retrieve.k', type: 'integer', description: 'Candidates per step' },
  TOOLSEL_TAU: { path: 'retrieve.bm25.tau', type: 'number', description: 'BM25 score threshold' },
  TOOLSEL_PLANNER: { path: 'plan.planner', type: 'string', description: 'Default planner' },
  TOOLSEL_SELECTOR: { path: 'select.selector', type: 'string', description: 'Default selector' },
  TOOLSEL_OPENAI_BASE_URL: {
    path: 'models.openai.baseUrl',
    type: 'string',
    description: 'OpenAI-compatible server root, e.g. http://localhost:8000/v1',
  },
  TOOLSEL_OPENAI_API_KEY: {
    path: 'models.openai.apiKey',
    type: 'string',
    description: 'Bearer token for it',
  },
  TOOLSEL_OPENAI_TIMEOUT_MS: {
    path: 'models.openai.timeoutMs',
    type: 'integer',
    description: 'Time limit per call to it, in ms (a call that times out fails the request)',
  },
  TOOLSEL_OPENAI_MAX_RETRIES: {
    path: 'models.openai.maxRetries',
    type: 'integer',
    description: 'Retries of a call on 429, 5xx and network errors',
  },
  TOOLSEL_OPENAI_MAX_RETRIES_PER_REQUEST: {
    path: 'models.openai.maxRetriesPerRequest',
    type: 'integer',
    description: 'Retries all the calls of one request may make together (along a fallback list)',
  },
  TOOLSEL_OPENAI_CHOICE_MODE: {
    path: 'models.openai.choiceMode',
    type: 'string',
    description:
      "How the selector's answer is constrained: json_schema, structured_outputs, guided_choice or logprobs",
  },
  TOOLSEL_OPENAI_SEND_THINKING_SWITCH: {
    path: 'models.openai.sendThinkingSwitch',
    type: 'boolean',
    description: "Send Qwen3's thinking switch (off for servers that refuse unknown fields)",
  },
  TOOLSEL_ONNX_DEVICE: {
    path: 'models.onnx.device',
    type: 'string',
    description: 'cpu or cuda for onnx: language models',
  },
  TOOLSEL_ONNX_DTYPE: {
    path: 'models.onnx.dtype',
    type: 'string',
    description: 'Weight file of onnx: language models',
  },
  TOOLSEL_ONNX_SCORE_BATCH_SIZE: {
    path: 'models.onnx.scoreBatchSize',
    type: 'integer',
    description: 'Choices scored per forward pass of onnx: language models',
  },
  TOOLSEL_DATA_DIR: { path: 'bench.dataDir', type: 'string', description: 'Benchmark data root' },
  TOOLSEL_MCP_LIBRARY: {
    path: 'mcp.library',
    type: 'string',
    description: 'Default library of the MCP tools',
  },
  TOOLSEL_MCP_TOKENIZER_DIR: {
    path: 'mcp.tokenizerDir',
    type: 'string',
    description: 'Directory with a tokenizer.json for token accounting',
  },
  TOOLSEL_GATEWAY_LIBRARY: {
    path: 'gateway.library',
    type: 'string',
    description: 'Name of the gateway library',
  },
  TOOLSEL_GATEWAY_SYNC_INTERVAL_MS: {
    path: 'gateway.syncIntervalMs',
    type: 'integer',
    description: 'Re-sync interval of the upstream tool lists',
  },
  TOOLSEL_GATEWAY_LIST_DEADLINE_MS: {
    path: 'gateway.listDeadlineMs',
    type: 'integer',
    description: 'Time limit for one whole tools/list of an upstream, every page',
  },
  TOOLSEL_GATEWAY_LIST_COMPILE_BUDGET_MS: {
    path: 'gateway.listCompileBudgetMs',
    type: 'integer',
    description:
      "Most time one tools/list of an upstream may spend compiling its tools' output schemas",
  },
  TOOLSEL_GATEWAY_RELIST_GAP_MS: {
    path: 'gateway.relistGapMs',
    type: 'integer',
    description: 'Least time between two listings of an upstream',
  },
  TOOLSEL_GATEWAY_RELIST_GAP_FACTOR: {
    path: 'gateway.relistGapFactor',
    type: 'number',
    description: "Gap after a listing, at least, in times that listing's own time",
  },
  TOOLSEL_GATEWAY_CONNECT_CONCURRENCY: {
    path: 'gateway.connectConcurrency',
    type: 'integer',
    description: 'Most upstreams connecting at once',
  },
  TOOLSEL_GATEWAY_MAX_TOOLS_PER_SERVER: {
    path: 'gateway.maxToolsPerServer',
    type: 'integer',
    description: 'Most tools one upstream may list',
  },
  TOOLSEL_GATEWAY_MAX_LIST_CHARS: {
    path: 'gateway.maxListChars',
    type: 'integer',
    description: 'Most characters of tools one listing of an upstream keeps, every page together',
  },
  TOOLSEL_LOG_LEVEL: { path: 'log.level', type: 'string', description: 'Log level' },
  TOOLSEL_ACCESS_LOG: {
    path: 'log.access',
    type: 'string',
    description: 'Access log: off, or the level of its one JSON line per request (info, debug)',
  },
  TOOLSEL_LOG_FORMAT: {
    path: 'log.format',
    type: 'string',
    description: 'Log lines as text (default) or json (one JSON object each)',
  },
}

/** The variable naming a JSON config file (read before the other variables are applied). */
export const CONFIG_FILE_ENV = 'TOOLSEL_CONFIG'

/**
 * Set by `serve --workers N`'s primary for a worker it starts in place of one that died while
 * another serves: that worker listens once it is ready (cli/serve-command.ts). Not a setting.
 */
export const LISTEN_WHEN_READY_ENV = 'TOOLSEL_WORKER_LISTEN_WHEN_READY'

/**
 * Set to `1` by `serve --workers N`'s primary for one worker at a time (the first, then the
 * replacement of that one): it logs the load warnings that every worker would repeat (odd tool
 * ids); the others log them at debug (cli/serve-command.ts). Not a setting.
 */
export const LOAD_WARNINGS_ENV = 'TOOLSEL_WORKER_LOAD_WARNINGS'

/**
 * Set by `serve --workers N`'s primary when the saved demo's files changed (or it records no
 * fingerprint of them): `first` for the one worker started first, which rebuilds (or records) it
 * and says so once its default library is loaded; `as-saved` for the others, started then, which
 * load what it saved without checking again (cli/serve-command.ts). Not a setting.
 */
export const DEMO_CHECK_ENV = 'TOOLSEL_WORKER_DEMO_CHECK'

/**
 * Test-only switches, all in one place (name → what setting it does): each makes a process stop
 * (SIGSTOP), crash or fail at one chosen point, so that a test can see what a kill or a fault there
 * leaves, or shortens a wait that a test would otherwise sit through in real time (bounded: never
 * beyond its default) or holds it until the test lets it go on. Each is off unless set (unset or
 * empty: off), and is read from this process's environment only, through testSwitch or
 * testStopPoint: never from a request, a config file or an argument. README ("Command line") names
 * them by their prefix (`TOOLSEL_TEST_…`, not for use).
 */
export const TEST_SWITCHES = {
  TOOLSEL_TEST_STOP_IN_FILE_WRITE:
    '`1`: writeFilesAtomically stops once its temporary files are written, before their renames (write-file-atomically.ts).',
  TOOLSEL_TEST_STOP_IN_INDEX_WRITE:
    '`1`: an index write stops once its work directory holds the tools file, before the manifest (store/index-store.ts).',
  TOOLSEL_TEST_STOP_IN_SNAPSHOT_WRITE:
    '`1`: a snapshot write stops once its first library is in the temporary directory (store/snapshot.ts).',
  TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES:
    '`<n>`: a restore stops right after its n-th library is renamed into place (store/index-store.ts).',
  TOOLSEL_TEST_STOP_BEFORE_READY_FILE:
    '`<file>`: of the workers of `serve --workers N`, the one that removes the file stops before it says it is ready (a replacement: before it listens), as a worker slow to load would, until the test lets it go on (SIGCONT; cli/serve-command.ts).',
  TOOLSEL_TEST_CRASH_AFTER_READY_FILE:
    '`<file>`: a worker of `serve --workers N` that is ready while the file exists exits (code 70) once it said so (cli/serve-command.ts).',
  TOOLSEL_TEST_SYNC_FAULT:
    "`<library>`: a worker of `serve --workers N` applying another worker's change to that library fails to, as a disk or load failure would (service/cluster-sync.ts).",
  TOOLSEL_TEST_INDEX_RETRY_BASE_MS:
    '`<ms>`, an integer 100-2,000 (another value fails the start): the first wait before a committed index that failed to load is tried again, doubled each try as always, in place of 2 s (service/index-dir-watch.ts).',
  TOOLSEL_TEST_WORKER_REPLACE_BASE_MS:
    '`<ms>`, an integer 100-1,000 (another value fails the start): the first wait of the backoff on which `serve --workers N` replaces workers that died again after they were ready or failed to start, doubled each time as always, in place of 1 s (cli/serve-command.ts).',
  TOOLSEL_TEST_FIRST_SYNC_WAIT_MS:
    "`<ms>`, an integer 100-5,000 (another value fails the start): how long a search, selection, schema load or tool call over the gateway library waits for the gateway's first sync before it answers with a `syncing` note, in place of 5 s (mcp/mcp-context.ts).",
  TOOLSEL_TEST_LAUNCHER_POLL_MS:
    '`<ms>`, an integer 50-500 (another value fails the start): how often a server started by npm looks whether its launcher is still there, in place of 500 ms (cli/serve-command.ts).',
  TOOLSEL_TEST_INDEX_RETRY_HOLD_FILE:
    "`<file>`: while the file exists, a server's tries again of committed indexes that failed to load wait, untried and uncounted, and a poll that holds them writes `held` into it (so a test knows no try is under way); the first poll after its removal makes those due (service/index-dir-watch.ts).",
  TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE:
    "`<file>`: while the file exists, an index write holds once its work directory holds the tools file, before the other files (writing `held` into it, so a test knows), as a slow disk would; its abort (a stopping server's) ends the hold (store/index-store.ts).",
  TOOLSEL_TEST_HOLD_IN_INDEX_COMMIT_FILE:
    "`<file>`: while the file exists, an index write's commit holds under the library's lock, past its last abort check and before its renames (writing `held` into it), as a slow rename would; no abort ends the hold: a stopping server finishes such a write or, past its second wait, exits without it (store/index-store.ts).",
  TOOLSEL_TEST_METRICS_FAULT_FILE:
    "`<file>`, read at each scrape: `reject`, `hang` or `malformed` (worker 2's metrics) or `primary-silent` (server/cluster-metrics.ts).",
} as const

/** The name of a test-only switch (TEST_SWITCHES). */
export type TestSwitch = keyof typeof TEST_SWITCHES

/** The value of test switch `name`, or undefined when it is off (unset or empty). */
export function testSwitch(name: TestSwitch): string | undefined {
  const value = process.env[name]
  return value === undefined || value === '' ? undefined : value
}

/**
 * The value of test switch `name`, a wait in ms that it shortens: undefined when it is off, else
 * an integer from `min` to `max` (the default it replaces: never longer); another value throws.
 */
export function testSwitchMs(name: TestSwitch, min: number, max: number): number | undefined {
  const value = testSwitch(name)
  if (value === undefined) return undefined
  const ms = Number(value)
  if (!Number.isInteger(ms) || ms < min || ms > max)
    throw new Error(
      `${name} is ${JSON.stringify(value)}: an integer ${min}-${max} (ms) is expected (a test-only switch)`,
    )
  return ms
}

/**
 * A point where a test stops this process (SIGSTOP) to kill it there or let it go on: when test
 * switch `name` is `at` (`1` by default; a restore's rename count for
 * TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES). Does nothing while the switch is off.
 */
export function testStopPoint(name: TestSwitch, at: string = '1'): void {
  if (testSwitch(name) === at) process.kill(process.pid, 'SIGSTOP')
}

/**
 * A point where work holds while the file that test switch `name` names exists (writing `held`
 * into it, so that the test knows it got there), polled every 20 ms: the process runs on (its
 * timers, its signals), unlike a stop point's SIGSTOP. `signal`'s abort ends the hold (its reason
 * is thrown). Does nothing while the switch is off.
 */
export async function testHoldPoint(name: TestSwitch, signal?: AbortSignal): Promise<void> {
  const file = testSwitch(name)
  if (file === undefined) return
  // Written only where it exists (r+): its removal lets the work go on.
  while (
    await writeFile(file, 'held', { flag: 'r+' }).then(
      () => true,
      () => false,
    )
  ) {
    signal?.throwIfAborted()
    await sleep(20)
  }
}

/**
 * `TOOLSEL_` variables that are not settings but are read elsewhere: `bin/toolsel.mjs`
 * (`TOOLSEL_RUN_SOURCE`), the clients of examples/ (`TOOLSEL_URL`, `TOOLSEL_API_KEY`), which
 * their READMEs export in the shell that may also start the server, the test suite's
 * `TOOLSEL_KEEP_TEST_TMP` (test/setup: keeps its temporary directory; set for a whole `npm test`,
 * so every command a test runs saw it, and warned), a worker's LISTEN_WHEN_READY_ENV,
 * LOAD_WARNINGS_ENV and DEMO_CHECK_ENV, and the TEST_SWITCHES. README ("Command line") names
 * each, the internal ones by their prefix (TOOLSEL_WORKER_…, TOOLSEL_TEST_…).
 */
export const OTHER_VARS: ReadonlySet<string> = new Set([
  CONFIG_FILE_ENV,
  'TOOLSEL_RUN_SOURCE',
  'TOOLSEL_URL',
  'TOOLSEL_API_KEY',
  'TOOLSEL_KEEP_TEST_TMP',
  LISTEN_WHEN_READY_ENV,
  LOAD_WARNINGS_ENV,
  DEMO_CHECK_ENV,
  ...Object.keys(TEST_SWITCHES),
])

/**
 * A warning for every `TOOLSEL_*` variable of `env` that toolsel does not read (a typo such as
 * `TOOLSEL_PROT` was ignored without a word), naming the closest known one. A warning, not an
 * error: the variable may belong to something else run from the same environment.
 */
export function unknownEnvVarWarnings(env: Record<string, string | undefined>): string[] {
  const known = [...Object.keys(ENV_VARS), ...OTHER_VARS]
  return Object.keys(env)
    .filter((name) => name.startsWith('TOOLSEL_') && !Object.hasOwn(ENV_VARS, name))
    .filter((name) => !OTHER_VARS.has(name))
    .sort()
    .map((name) => {
      const closest = closestName(name, known)
      const guess = closest === undefined ? '' : ` (did you mean ${closest}?)`
      return `Environment variable ${name} is not a toolsel setting and is ignored${guess}; README, "Command line", lists the variables.`
    })
}
