/**
 * Where `selectTools` spends its CPU, in process, on a saved index: loads it with this checkout's
 * modules (bench/perf/checkout-default.ts), runs the 535 benchmark instructions once to warm up,
 * then `--passes` times under V8's sampling profiler (node:inspector, started after the warm-up,
 * so loading and warming are left out), and prints the functions' self time as a table: µs per
 * call and share of the profiled selection time, top `--top` first, plus the stage shares
 * (bench/perf/cpu-profile-stages.ts).
 *
 *   node --import tsx bench/select-profile.ts --index-dir DIR [--passes 3] [--top 15]
 *
 * DIR: a saved index, e.g. bench/perf.ts's `--out` (`perf-10000` under it).
 *
 * Functions are named by file and column: tsx compiles a module to one line (esbuild, whitespace
 * minified), so an anonymous function's column is its place in that output (esbuild's
 * `transformSync` with `minifyWhitespace` and `keepNames` gives the same text). The profile's
 * clock counts a preempted thread's wait where it stood, so on a busy machine its total exceeds
 * the process CPU time printed beside it: read the shares.
 * @module
 */
import { Session } from 'node:inspector/promises'
import { resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { loadAverage, markdownTable } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    'index-dir': { type: 'string' },
    passes: { type: 'string', default: '3' },
    top: { type: 'string', default: '15' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
if (values['index-dir'] === undefined) {
  usageError(import.meta.url, '--index-dir DIR (a saved index) is required.')
}
const passes = wholeNumber(import.meta.url, '--passes', values.passes)
const top = wholeNumber(import.meta.url, '--top', values.top)
const indexDir = resolve(values['index-dir'])

const { loadCheckoutDefault } = await import('./perf/checkout-default.ts')
const { loadBenchmarkQueries } = await import('./perf/synthetic-library.ts')
const { REST, stageShares } = await import('./perf/cpu-profile-stages.ts')
type CpuProfile = import('./perf/cpu-profile-stages.ts').CpuProfile

const instructions = await loadBenchmarkQueries(values.data)
const side = await loadCheckoutDefault('.', indexDir)
for (const instruction of instructions) await side.select(instruction)

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.setSamplingInterval', { interval: 100 })
await session.post('Profiler.start')
const cpuFrom = process.cpuUsage()
for (let pass = 0; pass < passes; pass += 1) {
  for (const instruction of instructions) await side.select(instruction)
}
const cpu = process.cpuUsage(cpuFrom)
const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile }
session.disconnect()

const calls = passes * instructions.length
const cpuPerCallUs = (cpu.user + cpu.system) / calls
// By function and column: tsx compiles a module to one line, so a column tells functions apart
// (an anonymous one's column is its place in esbuild's whitespace-minified output).
const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
const byFunction = new Map<string, number>()
for (let at = 0; at < profile.samples.length; at += 1) {
  const frame = frames.get(profile.samples[at])!
  if (frame.functionName === '(idle)') continue
  const file = frame.url.slice(frame.url.lastIndexOf('/') + 1)
  const key = file
    ? `${frame.functionName || '(anonymous)'} ${file}:${frame.columnNumber ?? 0}`
    : frame.functionName
  byFunction.set(key, (byFunction.get(key) ?? 0) + (profile.timeDeltas[at + 1] ?? 0))
}
const selves = [...byFunction].sort((a, b) => b[1] - a[1])
const total = selves.reduce((sum, [, micros]) => sum + micros, 0)
const row = (name: string, micros: number) => [
  name,
  (micros / calls).toFixed(1),
  `${((100 * micros) / total).toFixed(1)}%`,
]
console.log(
  `${indexDir}: ${calls} selectTools calls profiled; CPU ${cpuPerCallUs.toFixed(0)} µs per call ` +
    `(profiled ${(total / calls).toFixed(0)}); load average ${loadAverage(1)}\n`,
)
console.log(
  markdownTable(
    ['function (self time)', 'µs per call', 'share'],
    selves.slice(0, top).map(([name, micros]) => row(name, micros)),
  ).join('\n'),
)
console.log()
// In process there is no HTTP server: what no stage claims is the bench's loop and promise jobs.
const stages = [...stageShares(profile, 0)]
  .map(([name, micros]): [string, number] => [
    name === REST ? 'the rest (loop, promise jobs)' : name,
    micros,
  ])
  .sort((a, b) => b[1] - a[1])
console.log(
  markdownTable(
    ['stage', 'µs per call', 'share'],
    stages.map(([name, micros]) => row(name, micros)),
  ).join('\n'),
)
