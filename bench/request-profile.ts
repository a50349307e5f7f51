/**
 * Where the CPU of `POST /v1/select-tools` goes: builds a library the way bench/perf.ts does,
 * serves it with `toolsel serve` under `node --cpu-prof`, loads it with wrk (16 connections,
 * the benchmark instructions in rotation, `includeSchemas: true`), and prints the server's CPU
 * per request (from /proc, not the profile) and each stage's share of the profiled CPU.
 *
 *   node --import tsx bench/request-profile.ts [--size 10000] [--duration 10] [--data DIR] [--top N]
 *     [--save FILE]
 *   TOOLSEL_SELECTOR=top1 node --import tsx bench/request-profile.ts   # another selector
 *
 * Needs wrk (Debian package). A sample is charged to the innermost frame that matches a stage
 * below, so "middleware" is the middleware's own work, not the handler it awaits. `--top N` also
 * lists the N functions with the most self time; `--save FILE` keeps the server's `.cpuprofile`
 * (for Chrome DevTools or a closer look at single functions).
 * @module
 */
import { spawnSync } from 'node:child_process'
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'
import type { CpuProfile } from './perf/cpu-profile-stages.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    top: { type: 'string', default: '0' },
    save: { type: 'string' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { selfTimes, stageShares } = await import('./perf/cpu-profile-stages.ts')
const { buildSelectLoad, cpuMillis, startServe } = await import('./perf/serve-process.ts')
const { runWrk } = await import('./perf/wrk-load.ts')
const size = Number(values.size)
const top = Number(values.top)
const seconds = Number(values.duration)
if (!Number.isInteger(size) || size < 1 || !(seconds > 0)) {
  usageError(
    import.meta.url,
    '--size takes a positive whole number of tools, --duration seconds (> 0).',
  )
}
if (spawnSync('wrk', ['--version']).error) throw new Error('Install wrk (apt-get install wrk).')

const work = await mkdtemp(join(tmpdir(), 'toolsel-profile-'))
try {
  const built = await buildSelectLoad(values.data, size, work)
  const profiles = join(work, 'profiles')
  const { server, url } = await startServe({
    root: process.cwd(),
    indexDir: work,
    library: built.library,
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profiles}`],
  })
  const bodies = built.bodies
  const load = { url: `${url}/v1/select-tools`, bodies, connections: 16, scriptDir: work }
  await runWrk({ ...load, durationSeconds: 2 }) // JIT and per-library caches
  const cpuBefore = await cpuMillis(server.pid!)
  const measuredFrom = performance.timeOrigin + performance.now()
  const result = await runWrk({ ...load, durationSeconds: seconds, warmUp: false })
  const cpu = (await cpuMillis(server.pid!)) - cpuBefore
  server.kill('SIGTERM')
  await new Promise((resolve) => server.once('exit', resolve))
  const [file] = (await readdir(profiles)).filter((name) => name.endsWith('.cpuprofile'))
  const profile = JSON.parse(await readFile(join(profiles, file), 'utf8')) as CpuProfile
  if (values.save !== undefined) await copyFile(join(profiles, file), values.save)
  // The profile's clock is microseconds since some origin; align on its last sample.
  const endMicros = profile.startTime + profile.timeDeltas.reduce((sum, delta) => sum + delta, 0)
  const windowMicros = (performance.timeOrigin + performance.now() - measuredFrom) * 1000
  const shares = stageShares(profile, endMicros - windowMicros)
  const total = [...shares.values()].reduce((sum, micros) => sum + micros, 0)
  const selector = process.env.TOOLSEL_SELECTOR ?? 'default'
  const lines = [
    `${size} tools, selector ${selector}, ${result.requests} requests in ${seconds} s ` +
      `(${result.requestsPerSecond.toFixed(0)} req/s, non-2xx ${result.non2xx}), ` +
      `server CPU ${(cpu / result.requests).toFixed(3)} ms per request, ` +
      `load average ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`,
    '',
    '| stage | share of server CPU |',
    '| --- | ---: |',
    ...[...shares]
      .sort((a, b) => b[1] - a[1])
      .map(([name, micros]) => `| ${name} | ${((100 * micros) / total).toFixed(1)}% |`),
    ...(top > 0
      ? [
          '',
          '| function (self time) | share of server CPU |',
          '| --- | ---: |',
          ...selfTimes(profile, endMicros - windowMicros)
            .slice(0, top)
            .map(([name, micros]) => `| ${name} | ${((100 * micros) / total).toFixed(1)}% |`),
        ]
      : []),
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
} finally {
  await rm(work, { recursive: true, force: true })
}
