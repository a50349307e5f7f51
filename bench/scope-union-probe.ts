/**
 * Client-chosen unions of real servers (bench/README "Round 27"): one library of `<size>` tools
 * of 200 servers (bench/scope-library.ts), served in process; one client asks `search_tools`
 * over `<count>` distinct unions of `<width>` servers each (`/mcp?library=big&servers=srvA,…`),
 * one after another.
 * Per union it prints the status, the wall ms, the process's CPU ms (main thread and workers)
 * and the heap after it; then the totals. Each new union builds its own BM25 view.
 *
 *   node --import tsx bench/scope-union-probe.ts [size, default 50000] [count, 40] [width, 2]
 * @module
 */
import { loadavg } from 'node:os'
import { benchArgs, usageError } from './bench-args.ts'

const { positionals: args } = benchArgs(import.meta.url, { options: {}, allowPositionals: true })
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { serveScopeLibrary } = await import('./scope-library.ts')
const size = Number(args[0] ?? 50000)
if (!Number.isFinite(size) || size < 1)
  usageError(import.meta.url, `<size> (first argument) must be a positive number, got "${args[0]}"`)
const count = Number(args[1] ?? 40)
if (!Number.isFinite(count) || count < 1)
  usageError(
    import.meta.url,
    `<count> (second argument) must be a positive number, got "${args[1]}"`,
  )
const width = Number(args[2] ?? 2)
if (!Number.isFinite(width) || width < 1)
  usageError(
    import.meta.url,
    `<width> (third argument) must be a positive number, got "${args[2]}"`,
  )
const server = await serveScopeLibrary(size)
const call = server.search
try {
  await call('servers=srv199')
  console.log(`load ${loadavg()[0].toFixed(2)}; ${size} tools, ${count} unions of ${width} servers`)
  console.log('| union | status | answer | wall ms | CPU ms | heap MB |')
  console.log('| ---: | ---: | --- | ---: | ---: | ---: |')
  let wall = 0
  let cpu = 0
  const refused = { count: 0 }
  for (let union = 0; union < count; union += 1) {
    const servers = Array.from({ length: width }, (_, i) => `srv${(union * width + i) % 199}`)
    const started = performance.now()
    const before = process.cpuUsage()
    const answer = await call(`servers=${servers.join(',')}`)
    const used = process.cpuUsage(before)
    const ms = performance.now() - started
    const cpuMs = (used.user + used.system) / 1000
    wall += ms
    cpu += cpuMs
    const error = /"code\\?":\\?"([A-Z_]+)/.exec(answer.text)?.[1]
    if (error) refused.count += 1
    const heap = process.memoryUsage().heapUsed / 2 ** 20
    console.log(
      `| ${union + 1} | ${answer.status} | ${error ?? 'results'} | ${ms.toFixed(0)} | ${cpuMs.toFixed(0)} | ${heap.toFixed(0)} |`,
    )
  }
  console.log(
    `total: wall ${wall.toFixed(0)} ms, CPU ${cpu.toFixed(0)} ms, ${refused.count} of ${count} refused`,
  )
} finally {
  await server.close()
}
