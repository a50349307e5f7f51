/**
 * Start to ready (not a test): spawns `toolsel serve` on a built index as a user starts it
 * (`node bin/toolsel.mjs serve --library <name> --index-dir <dir>`, default configuration),
 * polls `/readyz` every 50 ms, and prints per run the seconds from spawn to the first ready
 * answer, the server's RSS then and its peak (VmHWM), and the median over the runs.
 *
 *   node --import tsx bench/start-to-ready.ts --library perf-1000000 --index-dir /tmp/p1m [--runs 3]
 *     [--config FILE]
 *
 * The 1M index: `node --expose-gc --import tsx bench/perf.ts --child 1000000 --out /tmp/p1m
 * --data ../shared/data` (bench/README.md, "Up to 1,000,000 tools").
 * @module
 */
import { spawn } from 'node:child_process'
import { loadavg } from 'node:os'
import { benchArgs } from './bench-args.ts'
import { freePort, processRssMiB, waitUntilReady } from './perf/http-load.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    library: { type: 'string' },
    'index-dir': { type: 'string' },
    runs: { type: 'string', default: '3' },
    config: { type: 'string' },
  },
})
if (!values.library || !values['index-dir']) {
  process.stderr.write(
    'Usage: bench/start-to-ready.ts --library <name> --index-dir <dir> [--runs 3] [--config FILE]\n',
  )
  process.exit(2)
}
const runs = Number(values.runs)
const seconds: number[] = []
process.stdout.write(
  `load average at start: ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}\n`,
)
for (let run = 1; run <= runs; run += 1) {
  const port = await freePort()
  const args = ['bin/toolsel.mjs', 'serve', '--host', '127.0.0.1', '--port', String(port)]
  args.push('--library', values.library, '--index-dir', values['index-dir'], '--log-level', 'warn')
  if (values.config) args.push('--config', values.config)
  const started = performance.now()
  const server = spawn(process.execPath, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, TOOLSEL_LIBRARY: '' },
  })
  try {
    await waitUntilReady(`http://127.0.0.1:${port}`, server, 120_000, 50)
    const elapsed = (performance.now() - started) / 1000
    seconds.push(elapsed)
    const rss = await processRssMiB(server.pid!)
    const peak = await processRssMiB(server.pid!, 'VmHWM')
    process.stdout.write(
      `run ${run}: start to ready ${elapsed.toFixed(2)} s, RSS at ready ${rss.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB\n`,
    )
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
  }
}
const sorted = [...seconds].sort((a, b) => a - b)
process.stdout.write(
  `median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} s over ${runs} runs; load average at end: ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}\n`,
)
