/**
 * What a hostile MCP upstream puts into the gateway's process and log (bench/README "Round 39:
 * what a hostile upstream, a request path and the environment reach"): a stdio upstream (the
 * node fixture test/mcp/fixtures/node-upstream.mjs) connected through `UpstreamConnection` with
 * a memory logger, as test/mcp/gateway/upstream-connection.test.ts does.
 *
 * - `--case init-error`: it answers `initialize` with an error of `--repeat` x "failed!\n"
 *   (default 524,288: 4 MiB): prints the status, the kept `lastError`'s length and each log
 *   line's length.
 * - `--case descriptions`: it lists `--tools` tools with `--chars`-character descriptions,
 *   `--page` a page: prints the time, what description text is kept, heap and RSS (run node with
 *   `--expose-gc` for the heap figure).
 * - `--case schemas`: it lists `--tools` tools whose inputSchema holds a `--chars`-character
 *   property description, `--page` a page: prints the time, the status, the tools and schema
 *   text kept, the last error, heap and the process's peak RSS (what one listing held at its
 *   height: gateway.maxListChars and MAX_UPSTREAM_SCHEMA_CHARS bound it).
 * - `--case relists`: it lists `--tools` tools each with an outputSchema (a `--chars`-character
 *   property description; default 200 here: past MAX_UPSTREAM_SCHEMA_CHARS, 65,536, every tool
 *   is skipped and nothing is compiled), `--page` a page, and the gateway lists them again
 *   `--relists` times (as on list_changed or the sync TTL, RELIST_GAP_MS apart): prints the heap
 *   after the first listing and after the re-lists (run node with `--expose-gc`), and the status.
 *   Before round 41 the client's one Ajv kept every output schema it compiled: it grew at each
 *   re-list. A listing that fails (the server down) ends it with status 1 and the last error:
 *   before round 48 the default 1 MiB schemas made 7 MiB pages, a page past listTimeoutMs on a
 *   busy host left the server down, and the re-list's gap (an unref'd timer, as the retry's)
 *   was all that was left: node exited 13 (an unsettled top-level await), saying nothing.
 * - `--case storm`: it lists `--tools` tools, `--page` a page, each with an outputSchema of
 *   `--properties` string properties (slow to compile: ~2-10 ms a property on a busy host), and
 *   from its first page's answer on sends list_changed 4,000 times a second. For `--window` ms
 *   from the connect on, prints the CPU time the gateway's process used (its compiles), the
 *   listings that completed, the longest stall of the event loop, the status and the last error.
 *   Before round 42 nothing but `listDeadlineMs` (60 s) bounded the compiling of one listing, a
 *   list_changed during the connect's listing started a second one beside it, and a reconnect
 *   after a failed listing listed again 1 s later: a core was held the whole window.
 *   `--budget` sets gateway.listCompileBudgetMs (a checkout before round 42 has none). `--same`
 *   gives every tool the same outputSchema: before round 43 it was compiled once per tool.
 * - `--case shared-schema`: no server: compiles `--tools` outputSchemas that are all the same one
 *   of `--properties` string properties, each JSON-parsed apart as from a listing, through one
 *   listing's OutputSchemaCompiler: prints the CPU and wall time and the compiler's compiledMs.
 *   Before round 43 the schema was compiled once per tool.
 *
 * `--root <checkout>` runs another checkout's src/ (a "before"); the fixture is always this
 * checkout's (it has the knobs).
 *
 *   node --expose-gc --import tsx bench/hostile-upstream.ts --case init-error [--repeat 524288]
 *   node --expose-gc --import tsx bench/hostile-upstream.ts --case descriptions [--tools 100]
 *     [--chars 1048576] [--page 7] [--root /work/ci-base]
 *   node --expose-gc --import tsx bench/hostile-upstream.ts --case schemas --tools 2000
 *     --chars 60000 --page 130 [--root /work/ci-base]
 *   node --expose-gc --import tsx bench/hostile-upstream.ts --case relists --tools 1000
 *     --chars 200 --page 1000 --relists 20 [--root /work/ci-base]
 *   node --import tsx bench/hostile-upstream.ts --case storm --tools 120 --page 40
 *     --properties 1000 --window 60000 [--budget 10000] [--same] [--root /work/ci-base]
 *   node --import tsx bench/hostile-upstream.ts --case shared-schema --tools 120
 *     --properties 1000 [--root /work/ci-base]
 * @module
 */
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchArgs, usageError } from './bench-args.ts'
import { median } from './lib/measure.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    case: { type: 'string', default: 'init-error' },
    repeat: { type: 'string', default: String((4 * 1024 * 1024) / 8) },
    tools: { type: 'string', default: '100' },
    // Per case: 200 for relists, else 1 MiB (below).
    chars: { type: 'string' },
    page: { type: 'string', default: '7' },
    relists: { type: 'string', default: '20' },
    properties: { type: 'string', default: '1000' },
    window: { type: 'string', default: '60000' },
    budget: { type: 'string' },
    same: { type: 'boolean', default: false },
    root: { type: 'string' },
  },
})
if (
  !['init-error', 'descriptions', 'schemas', 'relists', 'storm', 'shared-schema'].includes(
    args.case,
  )
) {
  usageError(
    import.meta.url,
    `--case must be init-error, descriptions, schemas, relists, storm or shared-schema, got "${args.case}"`,
  )
}
for (const flag of [
  'repeat',
  'tools',
  'chars',
  'page',
  'relists',
  'properties',
  'window',
  'budget',
] as const) {
  if (args[flag] !== undefined && !/^[1-9]\d*$/.test(args[flag])) {
    usageError(import.meta.url, `--${flag} must be a positive number, got "${args[flag]}"`)
  }
}

args.chars ??= args.case === 'relists' ? '200' : String(1 << 20)

const here = resolve(fileURLToPath(import.meta.url), '../..')
const root = resolve(args.root ?? here)
const from = (path: string) => import(pathToFileURL(resolve(root, path)).href)
if (args.case === 'shared-schema') {
  const { OutputSchemaCompiler } = await from('src/mcp/gateway/upstream-output-schemas.ts')
  const properties = Array.from({ length: Number(args.properties) }, (_, p) => [
    `field_${p}`,
    { type: 'string', minLength: 1 },
  ])
  const text = JSON.stringify({ type: 'object', properties: Object.fromEntries(properties) })
  const compiler = new OutputSchemaCompiler()
  const cpu = process.cpuUsage()
  const wall = performance.now()
  for (let k = 0; k < Number(args.tools); k += 1) compiler.compile(JSON.parse(text))
  const used = process.cpuUsage(cpu)
  console.log(`root: ${root}`)
  console.log(
    `${args.tools} tools sharing one ${args.properties}-property outputSchema: CPU ${Math.round((used.user + used.system) / 1000)} ms, ` +
      `wall ${Math.round(performance.now() - wall)} ms, compiledMs ${Math.round(compiler.compiledMs)}`,
  )
  process.exit(0)
}
const { parseConfig } = await from('src/config/load-config.ts')
const { createMemoryLogger } = await from('src/log.ts')
const { UpstreamConnection } = await from('src/mcp/gateway/upstream-connection.ts')

const env: Record<string, string> =
  args.case === 'storm'
    ? {
        UPSTREAM_TOOLS: args.tools,
        UPSTREAM_PAGE_SIZE: args.page,
        UPSTREAM_OUTPUT_SCHEMA_PROPERTIES: args.properties,
        ...(args.same && { UPSTREAM_OUTPUT_SCHEMA_SAME: '1' }),
        UPSTREAM_LIST_CHANGED_MS: '5',
      }
    : args.case === 'init-error'
      ? {
          UPSTREAM_INIT_ERROR: JSON.stringify('failed!\n'),
          UPSTREAM_INIT_ERROR_REPEAT: args.repeat,
        }
      : {
          UPSTREAM_TOOLS: args.tools,
          [args.case === 'schemas'
            ? 'UPSTREAM_SCHEMA_CHARS'
            : args.case === 'relists'
              ? 'UPSTREAM_OUTPUT_SCHEMA_CHARS'
              : 'UPSTREAM_DESCRIPTION_CHARS']: args.chars,
          UPSTREAM_PAGE_SIZE: args.page,
        }
const config = parseConfig({
  gateway: {
    spawnTimeoutMs: 120_000,
    ...(args.budget !== undefined && { listCompileBudgetMs: Number(args.budget) }),
    servers: {
      hostile: {
        command: process.execPath,
        args: [resolve(here, 'test/mcp/fixtures/node-upstream.mjs')],
        env,
      },
    },
  },
})
const logger = createMemoryLogger()
let tools: ReadonlyArray<{ description?: string; parameters?: unknown }> = []
const upstream = new UpstreamConnection('hostile', config.gateway.servers.hostile, {
  settings: config.gateway,
  logger,
  onTools: () => {
    tools = upstream.tools
  },
})
if (args.case === 'storm') {
  // Listings that completed: each sets lastSyncAt.
  let listings = 0
  let seenSync: unknown = null
  const counted = upstream
  const cpu = process.cpuUsage()
  const began = performance.now()
  let last = began
  let stall = 0
  const tick = setInterval(() => {
    stall = Math.max(stall, performance.now() - last)
    last = performance.now()
  }, 20)
  const watch = setInterval(() => {
    const synced = counted.state().lastSyncAt
    if (synced !== seenSync) {
      seenSync = synced
      if (synced !== null && synced !== undefined) listings += 1
    }
  }, 20)
  void counted.connect()
  await new Promise((settle) => setTimeout(settle, Number(args.window)))
  clearInterval(tick)
  clearInterval(watch)
  const used = process.cpuUsage(cpu)
  const wall = performance.now() - began
  const state = counted.state()
  console.log(`root: ${root}`)
  console.log(
    `storm: ${args.tools} tools x ${args.properties} output properties${args.same ? ' (one schema)' : ''}, ${args.page} a page, list_changed 4,000/s; ` +
      `over ${Math.round(wall)} ms: CPU ${Math.round((used.user + used.system) / 1000)} ms ` +
      `(${Math.round((100 * (used.user + used.system)) / 1000 / wall)}% of a core), ${listings} listings completed, ` +
      `longest event-loop stall ${Math.round(stall)} ms, status ${state.status}, outages ${state.outages}`,
  )
  if (state.lastError) console.log(`lastError: ${state.lastError}`)
  await counted.close()
  process.exit(0)
}
const before = process.memoryUsage()
const started = performance.now()
await upstream.connect().catch((error: Error) => {
  console.log(`connect failed: ${String(error.message).length} characters of message`)
})
const ms = Math.round(performance.now() - started)
if (args.case === 'init-error') await new Promise((settle) => setTimeout(settle, 500))
globalThis.gc?.()
const after = process.memoryUsage()
const state = upstream.state()
console.log(`root: ${root}`)
if (args.case === 'init-error') {
  console.log(`status ${state.status}, lastError ${state.lastError?.length ?? 0} characters`)
  console.log(
    `log lines (characters): ${logger.lines.map((line: string) => line.length).join(', ')}`,
  )
} else if (args.case === 'relists') {
  const heap = () => Math.round(process.memoryUsage().heapUsed / 2 ** 20)
  const first = heap()
  const relisted = performance.now()
  const listings: number[] = []
  // The gap before each re-list is an unref'd timer (so is a reconnect's): held open here, and a
  // server gone down ends the run saying why, not node's exit 13 of an unsettled await.
  const alive = setInterval(() => {}, 1000)
  for (let turn = 0; turn < Number(args.relists); turn += 1) {
    if (!upstream.serving) {
      const { status, lastError } = upstream.state()
      console.log(
        `${args.tools} tools with outputSchemas (${args.chars} characters), ${args.page} a page: ` +
          `listing ${turn} left the server ${status}: ${lastError ?? 'no error'}`,
      )
      await upstream.close()
      process.exit(1)
    }
    await upstream.sync()
    listings.push(upstream.state().lastLatencyMs ?? Number.NaN)
  }
  clearInterval(alive)
  const each = Math.round((performance.now() - relisted) / Number(args.relists))
  globalThis.gc?.()
  console.log(
    `${args.tools} tools with outputSchemas (${args.chars} characters), ${args.page} a page: connect ${ms} ms, heap ${first} MiB; ` +
      `after ${args.relists} re-lists (each: listing median ${median(listings)} ms, ${each} ms with the gap) heap ${heap()} MiB, status ${upstream.state().status}, ${tools.length} tools`,
  )
} else if (args.case === 'schemas') {
  const kept = tools.reduce((sum, tool) => sum + JSON.stringify(tool.parameters ?? {}).length, 0)
  const peak = Math.round(process.resourceUsage().maxRSS / 1024)
  console.log(
    `${args.tools} tools x ${args.chars}-character schemas, ${args.page} a page: ${ms} ms, status ${state.status}, ` +
      `${tools.length} tools, ${kept} schema characters kept, heap +${Math.round((after.heapUsed - before.heapUsed) / 2 ** 20)} MiB, peak RSS ${peak} MiB`,
  )
  if (state.lastError) console.log(`lastError: ${state.lastError}`)
} else {
  const kept = tools.reduce((sum, tool) => sum + (tool.description?.length ?? 0), 0)
  console.log(
    `${args.tools} tools x ${args.chars} characters, ${args.page} a page: ${ms} ms, status ${state.status}, ` +
      `${tools.length} tools, ${kept} description characters kept, heap +${Math.round((after.heapUsed - before.heapUsed) / 2 ** 20)} MiB, RSS ${Math.round(after.rss / 2 ** 20)} MiB`,
  )
}
await upstream.close()
