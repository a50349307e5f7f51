/**
 * Two versions of `selectTools` side by side in one process (not a test), call by call: loads one
 * saved index with this checkout's modules and with `--before DIR`'s (another checkout with its
 * node_modules, e.g. /work/ci-r10), checks that both answer every benchmark instruction the same
 * (steps, candidates, scores and features, as `select-cpu.ts` digests them), then runs the
 * instructions `--rounds` times, each instruction on both sides back to back (who goes first
 * alternates), and keeps each call's fastest time per side. The sum of the fastest calls is the
 * least noisy figure this machine gives: a call's best time leaves out the moments another
 * process had the core (an A/A run, one checkout on both sides, gives 0.99-1.00); it is a
 * warm-cache figure, so it says less about memory traffic under load. Also prints the median,
 * over rounds, of the two sides' summed times, which keeps those moments.
 *
 *   node --import tsx bench/select-ab.ts --before /work/ci-r10 --index-dir DIR [--rounds 9]
 *     [--model FILE]   (a learned model both sides select with, each with its own code; default:
 *                       each checkout's shipped model)
 *
 * DIR: a saved index, e.g. bench/perf.ts's `--out` (`perf-100000` under it).
 *
 * `--cold MiB`: before every timed call, read MiB of other memory (one read per 64-byte line,
 * not timed), so each call finds little of the library's per-tool data in the processor's caches,
 * as on a server answering other requests in between; the fastest-of-N sums are then a
 * cache-cold figure (default 0: warm).
 * @module
 */
import { resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    'index-dir': { type: 'string' },
    rounds: { type: 'string', default: '9' },
    data: { type: 'string', default: '../shared/data' },
    model: { type: 'string' },
    cold: { type: 'string', default: '0' },
  },
})
if (values.before === undefined || values['index-dir'] === undefined) {
  usageError(
    import.meta.url,
    '--before DIR (a checkout) and --index-dir DIR (a saved index) are required.',
  )
}
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const indexDir = resolve(values['index-dir'])
const coldMiB = Number(values.cold)
if (!(coldMiB >= 0)) usageError(import.meta.url, '--cold takes MiB (≥ 0).')
/** What `--cold` reads between calls: one byte of every 64-byte line. */
const evict = new Uint8Array(coldMiB * 1024 * 1024).fill(1)
let evictSum = 0
const evictCaches = () => {
  for (let at = 0; at < evict.length; at += 64) evictSum += evict[at]
}

// The code to compare only once the flags are good: --help and a bad flag answer without it.
const { loadCheckoutDefault } = await import('./perf/checkout-default.ts')
const { loadBenchmarkQueries } = await import('./perf/synthetic-library.ts')
const instructions = await loadBenchmarkQueries(values.data)
const sides = [
  await loadCheckoutDefault(values.before, indexDir, values.model && resolve(values.model)),
  await loadCheckoutDefault('.', indexDir, values.model && resolve(values.model)),
]
for (const instruction of instructions) {
  const [a, b] = await Promise.all(sides.map(async (side) => side.select(instruction, true)))
  if (JSON.stringify(a.steps) !== JSON.stringify(b.steps)) {
    throw new Error(`The two versions answer differently: ${instruction}`)
  }
}
const fastest = sides.map(() => new Array<number>(instructions.length).fill(Infinity))
const sums: number[][] = sides.map(() => [])
for (let round = 0; round < rounds; round += 1) {
  const sum = sides.map(() => 0)
  for (let at = 0; at < instructions.length; at += 1) {
    for (const side of (round + at) % 2 === 0 ? [0, 1] : [1, 0]) {
      if (evict.length > 0) evictCaches()
      const started = performance.now()
      await sides[side].select(instructions[at])
      const elapsed = performance.now() - started
      sum[side] += elapsed
      if (elapsed < fastest[side][at]) fastest[side][at] = elapsed
    }
  }
  sides.forEach((_select, side) => sums[side].push(sum[side]))
}
const perCall = (times: number[]) =>
  (times.reduce((total, time) => total + time, 0) / instructions.length) * 1000
const [before, after] = fastest.map(perCall)
const ratios = sums[0].map((sum, round) => sums[1][round] / sum)
console.log(
  `${indexDir}: same answers to ${instructions.length} instructions; selectTools µs per call, ` +
    `each call's fastest of ${rounds}${coldMiB > 0 ? ` (${coldMiB} MiB read before each)` : ''}: before ${before.toFixed(0)}, after ${after.toFixed(0)}, ` +
    `after ÷ before ${(after / before).toFixed(3)}; per-round sums after ÷ before median ` +
    `${median(ratios).toFixed(3)} (${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}); ` +
    `${evictSum < 0 ? '' : ''}load average ${loadAverage(1)}`,
)
