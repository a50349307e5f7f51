/**
 * What grows with the library's size on the request path (issue #12): serves two saved libraries
 * (e.g. 10k and 100k tools) from this checkout at the same time, each `toolsel serve` under
 * `node --cpu-prof --trace-gc`, loads both together with wrk (16 connections each, the benchmark
 * instructions in rotation, `includeSchemas: true`), and prints per library: CPU per request
 * (from /proc), each request stage's CPU in µs per request (from the profile, stages as in
 * bench/request-profile.ts), garbage collections per 1,000 requests with their pause time and the
 * heap size, and the functions whose self time per request differs most between the two.
 * Loading both at once puts them under the same load from other processes, so the difference
 * per stage is a paired figure.
 *
 *   node --import tsx bench/size-profile.ts --index-dirs DIR_A,DIR_B [--duration 10] [--rounds 1]
 *     [--top 25] [--instructions FILE]
 *   node --import tsx bench/size-profile.ts --sizes 10000,100000 [--data DIR]   # builds them first
 *
 * `--index-dirs` takes saved libraries (`bench/perf.ts --child N --out OUT` leaves one in
 * OUT/perf-N, and the instructions in OUT/instructions.json, read unless `--instructions`).
 * Needs wrk (Debian package).
 * @module
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'
import type { CpuProfile } from './perf/cpu-profile-stages.ts'
import type { ServeProcess } from './perf/serve-process.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    'index-dirs': { type: 'string' },
    sizes: { type: 'string' },
    instructions: { type: 'string' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
    top: { type: 'string', default: '25' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { selfTimes, stageShares } = await import('./perf/cpu-profile-stages.ts')
const { buildSelectLoad, cpuMillis, startServe } = await import('./perf/serve-process.ts')
const { runWrk, WARM_UP_PASSES, warmUpUntilSteady } = await import('./perf/wrk-load.ts')
const seconds = Number(values.duration)
const rounds = Number(values.rounds)
const top = Number(values.top)
if (!(seconds > 0) || !Number.isInteger(rounds) || rounds < 1) {
  usageError(import.meta.url, '--duration takes seconds (> 0), --rounds a positive whole number.')
}
if ((values['index-dirs'] === undefined) === (values.sizes === undefined)) {
  usageError(import.meta.url, 'Give --index-dirs DIR_A,DIR_B or --sizes A,B.')
}
if (spawnSync('wrk', ['--version']).error) throw new Error('Install wrk (apt-get install wrk).')

/** One `--trace-gc` line: kind, heap used after (MB), pause (ms). */
interface GcEvent {
  kind: string
  afterMB: number
  pauseMs: number
}
const GC_LINE =
  /ms: ([A-Za-z -]+?) [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/

/**
 * A sample counts the time to the next one, at most this (V8 samples about every 1 ms; a longer
 * gap is the server not running JavaScript: its shutdown, a preemption).
 */
const MAX_SAMPLE_MICROS = 10_000

interface Side extends ServeProcess {
  name: string
  profiles: string
  gcLines: string[]
  pending: string
  requests: number
  cpuMs: number
  gc: GcEvent[]
  windowMicros: number
}

const work = await mkdtemp(join(tmpdir(), 'toolsel-size-profile-'))
const sides: Side[] = []
try {
  const libraries: Array<{ dir: string; library: string }> = []
  let bodies: string[]
  if (values['index-dirs'] !== undefined) {
    for (const dir of values['index-dirs'].split(',')) {
      libraries.push({ dir: dirname(dir), library: basename(dir) })
    }
    const file = values.instructions ?? join(libraries[0].dir, 'instructions.json')
    const instructions = JSON.parse(await readFile(file, 'utf8')) as string[]
    bodies = instructions.map((instruction) =>
      JSON.stringify({ instruction, includeSchemas: true }),
    )
  } else {
    bodies = []
    for (const size of values.sizes!.split(',').map(Number)) {
      const dir = join(work, `lib-${size}`)
      const built = await buildSelectLoad(values.data, size, dir)
      libraries.push({ dir, library: built.library })
      bodies = built.bodies
    }
  }
  for (const { dir, library } of libraries) {
    const profiles = join(work, `profiles-${library}`)
    const side: Partial<Side> = { name: library, profiles, gcLines: [], pending: '' }
    const started = await startServe({
      root: process.cwd(),
      indexDir: dir,
      library,
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profiles}`, '--trace-gc'],
      onStdout: (chunk) => {
        const text = side.pending + chunk
        const lines = text.split('\n')
        side.pending = lines.pop()!
        side.gcLines!.push(...lines.filter((line) => GC_LINE.test(line)))
      },
    })
    sides.push(Object.assign(side, started, { requests: 0, cpuMs: 0, gc: [] }) as Side)
  }
  const load = (side: Side, durationSeconds: number) =>
    runWrk({
      url: `${side.url}/v1/select-tools`,
      bodies,
      connections: 16,
      durationSeconds,
      scriptDir: join(work),
      warmUp: false,
    })
  // JIT and per-library caches: runs of 2 s on each side, loaded together, until each has been
  // sent WARM_UP_PASSES passes of the instructions and two successive runs' CPU per request agree
  // (warmUpUntilSteady, as bench:perf --repeats), so that the profile is of steady servers.
  const warmed = await warmUpUntilSteady(
    () =>
      Promise.all(
        sides.map(async (side) => {
          const cpuBefore = await cpuMillis(side.server.pid!)
          const { requests } = await load(side, 2)
          const cpuMs = (await cpuMillis(side.server.pid!)) - cpuBefore
          return { requests, cpuMsPerRequest: requests > 0 ? cpuMs / requests : Number.NaN }
        }),
      ),
    WARM_UP_PASSES * bodies.length,
  )
  process.stderr.write(
    `warm-up: ${warmed.runs} runs of 2 s, ${warmed.sent.join(' / ')} requests, steady at run ${warmed.steadyAtRun.join(' / ')}\n`,
  )
  const measuredFrom = performance.timeOrigin + performance.now()
  for (let round = 0; round < rounds; round += 1) {
    const before = await Promise.all(sides.map((side) => cpuMillis(side.server.pid!)))
    const gcBefore = sides.map((side) => side.gcLines.length)
    const results = await Promise.all(sides.map((side) => load(side, seconds)))
    const after = await Promise.all(sides.map((side) => cpuMillis(side.server.pid!)))
    sides.forEach((side, at) => {
      side.requests += results[at].requests
      side.cpuMs += after[at] - before[at]
      for (const line of side.gcLines.slice(gcBefore[at])) {
        const match = GC_LINE.exec(line)!
        side.gc.push({ kind: match[1], afterMB: Number(match[2]), pauseMs: Number(match[3]) })
      }
      process.stderr.write(
        `round ${round + 1} ${side.name}: ${results[at].requestsPerSecond.toFixed(0)} req/s, ` +
          `${((after[at] - before[at]) / results[at].requests).toFixed(3)} ms CPU per request\n`,
      )
    })
  }
  const windowMicros = (performance.timeOrigin + performance.now() - measuredFrom) * 1000
  // Both stop at once, so that neither profile's end (where its window is measured back from)
  // waits on the other's shutdown.
  await Promise.all(
    sides.map((side) => {
      side.windowMicros = windowMicros
      const exited = new Promise((resolve) => side.server.once('exit', resolve))
      side.server.kill('SIGTERM')
      return exited
    }),
  )
  const loadAverage = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')

  // The profile's time is wall time between samples: on a loaded machine a thread preempted (often
  // right after a syscall that wakes the load generator, e.g. writev) charges the wait to where it
  // stood. Its sum per request is printed beside /proc's CPU so the inflation shows.
  const profiled = sides.map(() => 0)
  const stageRows = new Map<string, number[]>()
  const functionRows = new Map<string, number[]>()
  for (const [at, side] of sides.entries()) {
    const [file] = (await readdir(side.profiles)).filter((name) => name.endsWith('.cpuprofile'))
    const profile = JSON.parse(await readFile(join(side.profiles, file), 'utf8')) as CpuProfile
    const endMicros = profile.startTime + profile.timeDeltas.reduce((sum, delta) => sum + delta, 0)
    const from = endMicros - side.windowMicros
    for (const [name, micros] of stageShares(profile, from, MAX_SAMPLE_MICROS)) {
      profiled[at] += micros / side.requests
      const row = stageRows.get(name) ?? sides.map(() => 0)
      row[at] = micros / side.requests
      stageRows.set(name, row)
    }
    for (const [name, micros] of selfTimes(profile, from, MAX_SAMPLE_MICROS)) {
      const row = functionRows.get(name) ?? sides.map(() => 0)
      row[at] = micros / side.requests
      functionRows.set(name, row)
    }
  }
  const f = (value: number, digits = 1) => value.toFixed(digits)
  const names = sides.map((side) => side.name)
  const difference = (row: number[]) => row[row.length - 1] - row[0]
  const table = (title: string, rows: Map<string, number[]>, limit: number) => [
    `| ${title} | ${names.map((name) => `${name} (µs/request)`).join(' | ')} | difference |`,
    `| --- | ${names.map(() => '---:').join(' | ')} | ---: |`,
    ...[...rows]
      .sort((a, b) => Math.abs(difference(b[1])) - Math.abs(difference(a[1])))
      .slice(0, limit)
      .map(
        ([name, row]) =>
          `| ${name} | ${row.map((v) => f(v)).join(' | ')} | ${f(difference(row))} |`,
      ),
  ]
  const gcRow = (side: Side, kind: RegExp) => {
    const events = side.gc.filter((event) => kind.test(event.kind))
    const pause = events.reduce((sum, event) => sum + event.pauseMs, 0)
    return `${f((1000 * events.length) / side.requests, 2)} / ${f((1000 * pause) / side.requests, 1)} µs`
  }
  const lines = [
    `${rounds} round(s) of ${seconds} s, both servers loaded together, load average ${loadAverage}`,
    '',
    `| measure | ${names.join(' | ')} |`,
    `| --- | ${names.map(() => '---:').join(' | ')} |`,
    `| requests | ${sides.map((side) => side.requests).join(' | ')} |`,
    `| CPU per request (ms, /proc) | ${sides.map((side) => f(side.cpuMs / side.requests, 3)).join(' | ')} |`,
    `| profiled time per request (ms, wall time on the CPU profile's clock) | ${profiled.map((micros) => f(micros / 1000, 3)).join(' | ')} |`,
    `| scavenges per 1,000 requests / pause per request | ${sides.map((side) => gcRow(side, /Scavenge/)).join(' | ')} |`,
    `| mark-compacts per 1,000 requests / pause per request | ${sides.map((side) => gcRow(side, /Mark/)).join(' | ')} |`,
    `| heap used after GC (MB, median) | ${sides
      .map((side) => {
        const sizes = side.gc.map((event) => event.afterMB).sort((a, b) => a - b)
        return f(sizes[Math.floor(sizes.length / 2)] ?? Number.NaN)
      })
      .join(' | ')} |`,
    '',
    ...table('stage', stageRows, stageRows.size),
    '',
    ...table('function (self time)', functionRows, top),
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
} finally {
  for (const side of sides) if (side.server.exitCode === null) side.server.kill('SIGTERM')
  await rm(work, { recursive: true, force: true })
}
