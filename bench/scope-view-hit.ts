/**
 * A scoped MCP request's view lookup when its scope was asked for before (the common case: a
 * client keeps its `/mcp?servers=…` scope): µs per `ScopedLibraries.view` over a library of
 * `<size>` tools of 200 servers (bench/server-tools.ts, the library of bench/scope-probe.ts), two
 * scopes alternating, three rounds of 2,000 calls.
 *
 *   node --import tsx bench/scope-view-hit.ts [size, default 100000]
 * @module
 */
import { benchArgs, usageError } from './bench-args.ts'

const { positionals: args } = benchArgs(import.meta.url, { options: {}, allowPositionals: true })
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { parseConfig } = await import('../src/config/load-config.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { buildIndexedLibrary } = await import('../src/store/library-lifecycle.ts')
const { ScopedLibraries } = await import('../src/mcp/scoped-libraries.ts')
const { serverTools } = await import('./server-tools.ts')
const size = Number(args[0] ?? 100000)
if (!Number.isFinite(size) || size < 1)
  usageError(import.meta.url, `<size> (first argument) must be a positive number, got "${args[0]}"`)
const tools = serverTools(size)
const config = parseConfig({})
const indexed = await buildIndexedLibrary(new ToolLibrary('big', tools as never), config)
const views = new ScopedLibraries(config)
const scopes = [
  { servers: ['srv1'], tags: [] },
  { servers: ['srv2', 'srv3'], tags: ['t1'] },
]
for (const s of scopes) await views.view(indexed, s)
for (let round = 0; round < 3; round++) {
  const t = process.hrtime.bigint()
  for (let i = 0; i < 2000; i++) await views.view(indexed, scopes[i % 2])
  console.log(
    `${size} tools: ${(Number(process.hrtime.bigint() - t) / 2000 / 1e3).toFixed(1)} µs per cached scoped view()`,
  )
}
