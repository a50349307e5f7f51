/**
 * How long a fresh `toolsel serve` takes to reach its steady rate: builds the library as
 * bench/perf.ts does, starts the server (from dist/ when it is built) and loads it with wrk (16
 * connections, the benchmark instructions in rotation, `includeSchemas: true`) in back-to-back
 * windows of `--window` seconds from its first request, with no warm-up. Prints per window the
 * requests, the passes of the instructions sent so far, req/s, the server's CPU per request (from
 * /proc) and the load average: the window where CPU per request stops falling is where
 * bench:perf's warm-up has to reach (2 s runs until WARM_UP_PASSES passes of the instructions are
 * sent, bench/perf/http-load.ts).
 *
 *   node --import tsx bench/warm-up-curve.ts [--size 100000] [--windows 12] [--window 1]
 *     [--data DIR]
 *
 * Needs wrk (Debian package).
 * @module
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '100000' },
    windows: { type: 'string', default: '12' },
    window: { type: 'string', default: '1' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
const { buildSelectLoad, cpuMillis, startServe } = await import('./perf/serve-process.ts')
const { runWrk } = await import('./perf/wrk-load.ts')
const size = Number(values.size)
const windows = Number(values.windows)
const seconds = Number(values.window)
if (!Number.isInteger(size) || size < 1 || !Number.isInteger(windows) || windows < 1) {
  usageError(import.meta.url, '--size and --windows take positive whole numbers.')
}
if (!Number.isInteger(seconds) || seconds < 1 || seconds * windows > 600) {
  usageError(import.meta.url, '--window takes whole seconds (>= 1), at most 600 s in all.')
}
if (spawnSync('wrk', ['--version']).error) throw new Error('Install wrk (apt-get install wrk).')

const work = await mkdtemp(join(tmpdir(), 'toolsel-warm-up-'))
try {
  const built = await buildSelectLoad(values.data, size, work)
  const { server, url } = await startServe({
    root: process.cwd(),
    indexDir: work,
    library: built.library,
  })
  const load = {
    url: `${url}/v1/select-tools`,
    bodies: built.bodies,
    connections: 16,
    scriptDir: work,
    durationSeconds: seconds,
    warmUp: false,
  }
  const lines = [
    `${size} tools, ${built.bodies.length} instructions a pass, ${seconds} s windows from the first request`,
    '',
    '| window | requests | passes so far | req/s | server CPU per request (ms) | load (1 min) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  let sent = 0
  try {
    for (let index = 1; index <= windows; index += 1) {
      const cpuBefore = await cpuMillis(server.pid!)
      const result = await runWrk(load)
      const cpu = (await cpuMillis(server.pid!)) - cpuBefore
      sent += result.requests
      const loadAverage = (await readFile('/proc/loadavg', 'utf8')).split(' ')[0]
      lines.push(
        `| ${index} | ${result.requests} | ${(sent / built.bodies.length).toFixed(1)} | ` +
          `${result.requestsPerSecond.toFixed(0)} | ${(cpu / Math.max(1, result.requests)).toFixed(3)} | ${loadAverage} |`,
      )
    }
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
  }
  process.stdout.write(`${lines.join('\n')}\n`)
} finally {
  await rm(work, { recursive: true, force: true })
}
