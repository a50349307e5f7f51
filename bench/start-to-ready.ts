/**
 * Start to ready (not a test): spawns `toolsel serve` as a user starts it (`node bin/toolsel.mjs
 * serve --library <name> --index-dir <dir>`, default configuration; without `--library`, the
 * embedded demo library, built at start as `npm start` builds it), polls `/readyz` every 50 ms,
 * and prints per run the seconds from spawn to the first ready answer, the CPU seconds the server
 * had used by then (user + system, all its threads: what the load of a shared machine does not
 * stretch), the server's RSS then and its peak (VmHWM), and the medians over the runs.
 *
 *   node --import tsx bench/start-to-ready.ts --library perf-1000000 --index-dir /tmp/p1m [--runs 3]
 *     [--config FILE]
 *   node --import tsx bench/start-to-ready.ts --build bm25 --build hybrid --runs 5
 *
 * `--build <parts>` sets TOOLSEL_BUILD_RETRIEVER for the server (README: "Building the demo with
 * hybrid at start"); given more than once, the runs alternate between them and each gets its own
 * medians.
 *
 * The 1M index: `node --expose-gc --import tsx bench/perf.ts --child 1000000 --out /tmp/p1m
 * --data ../shared/data` (bench/README.md, "Up to 1,000,000 tools").
 * @module
 */
import { spawn } from 'node:child_process'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    library: { type: 'string' },
    'index-dir': { type: 'string' },
    runs: { type: 'string', default: '3' },
    config: { type: 'string' },
    build: { type: 'string', multiple: true },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { freePort, processRssMiB, waitUntilReady } = await import('./perf/http-load.ts')
const { cpuSeconds, loadAverage: load, median } = await import('./lib/measure.ts')
if ((values.library === undefined) !== (values['index-dir'] === undefined)) {
  process.stderr.write(
    'Usage: bench/start-to-ready.ts [--library <name> --index-dir <dir>] [--build <parts>]... [--runs 3] [--config FILE]\n',
  )
  process.exit(2)
}
const runs = Number(values.runs)
const builds: Array<string | undefined> = values.build?.length ? values.build : [undefined]
const measured = new Map(
  builds.map((build) => [build, { seconds: [] as number[], cpu: [] as number[] }]),
)

process.stdout.write(`load average at start: ${load()}\n`)
for (let run = 1; run <= runs; run += 1) {
  for (const build of builds) {
    const port = await freePort()
    const args = ['bin/toolsel.mjs', 'serve', '--host', '127.0.0.1', '--port', String(port)]
    if (values.library) args.push('--library', values.library, '--index-dir', values['index-dir']!)
    args.push('--log-level', 'warn')
    if (values.config) args.push('--config', values.config)
    const env: NodeJS.ProcessEnv = { ...process.env, TOOLSEL_LIBRARY: '' }
    if (build !== undefined) env.TOOLSEL_BUILD_RETRIEVER = build
    else delete env.TOOLSEL_BUILD_RETRIEVER
    const started = performance.now()
    const server = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], env })
    try {
      await waitUntilReady(`http://127.0.0.1:${port}`, server, 300_000, 50)
      const elapsed = (performance.now() - started) / 1000
      const cpu = await cpuSeconds(server.pid!)
      measured.get(build)!.seconds.push(elapsed)
      measured.get(build)!.cpu.push(cpu)
      const rss = await processRssMiB(server.pid!)
      const peak = await processRssMiB(server.pid!, 'VmHWM')
      process.stdout.write(
        `run ${run}${build === undefined ? '' : ` (build ${build})`}: start to ready ${elapsed.toFixed(2)} s, CPU ${cpu.toFixed(2)} s, RSS at ready ${rss.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB; load ${load()}\n`,
      )
    } finally {
      server.kill('SIGTERM')
      await new Promise((resolve) => server.once('exit', resolve))
    }
  }
}
for (const [build, { seconds, cpu }] of measured) {
  process.stdout.write(
    `${build === undefined ? '' : `build ${build}: `}median ${median(seconds).toFixed(2)} s (CPU ${median(cpu).toFixed(2)} s) over ${runs} runs\n`,
  )
}
process.stdout.write(`load average at end: ${load()}\n`)
