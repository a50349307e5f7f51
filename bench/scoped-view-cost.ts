/**
 * What one scoped MCP view costs (not a test): loads a saved index with a checkout's modules
 * (`--root`, default this one; e.g. /work/ci-r14 for the code before round 9), builds the view
 * an MCP client with that scope gets (`ScopedLibraries.view`), and prints the build time, the
 * process's peak RSS (which includes the load) and the JS heap kept after a full collection
 * with the view held. Run it once per checkout, each in its own process, to compare.
 *
 *   node --expose-gc --import tsx bench/scoped-view-cost.ts --index-dir DIR
 *     (--server NAME | --tag TAG) [--root CHECKOUT]
 *
 * DIR: a saved index, e.g. bench/perf.ts's `--out` (`perf-100000` under it).
 * @module
 */
import { resolve } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    'index-dir': { type: 'string' },
    server: { type: 'string' },
    tag: { type: 'string' },
    root: { type: 'string', default: '.' },
  },
})
if (
  values['index-dir'] === undefined ||
  (values.server === undefined) === (values.tag === undefined)
) {
  usageError(
    import.meta.url,
    '--index-dir DIR (a saved index) and one of --server NAME or --tag TAG are required.',
  )
}
if (typeof globalThis.gc !== 'function') throw new Error('Run node with --expose-gc.')
const source = resolve(values.root, 'src')
const { defaultConfig } = await import(`${source}/config/schema.ts`)
const { loadIndexedLibrary } = await import(`${source}/store/index-store.ts`)
const { ScopedLibraries } = await import(`${source}/mcp/scoped-libraries.ts`)
const config = defaultConfig()
const indexed = await loadIndexedLibrary(resolve(values['index-dir']), config)
const scope =
  values.server !== undefined
    ? { servers: [values.server], tags: [] }
    : { servers: [], tags: [values.tag!] }
globalThis.gc()
const heapBefore = process.memoryUsage().heapUsed
const started = performance.now()
const view = await new ScopedLibraries(config).view(indexed, scope)
const milliseconds = performance.now() - started
globalThis.gc()
const heapAfter = process.memoryUsage().heapUsed
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
console.log(
  `${source}: a view of ${view.library.size} of ${indexed.library.size} tools built in ` +
    `${milliseconds.toFixed(0)} ms; peak RSS ${mib(process.resourceUsage().maxRSS * 1024)} MiB; ` +
    `JS heap kept with the view ${mib(heapAfter)} MiB (${mib(heapBefore)} before it)`,
)
