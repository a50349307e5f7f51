/**
 * Two versions of the BM25 search side by side in one process (not a test): loads one saved
 * index with this checkout's modules and with `--before DIR`'s (another checkout with its
 * node_modules, e.g. /work/ci-r8), checks that both give the same answers to every benchmark
 * query, then takes turns (6 passes each, alternating which goes first) and prints the CPU per
 * request of BM25 (the rule-planned steps and the whole instruction, k 15 above 0, as the learned
 * selector retrieves them) and of `selectTools` (learned default), medians of the passes; then
 * BM25 query by query on both sides back to back, each query's fastest of `--passes` runs (the
 * steadiest figure on a busy machine).
 *
 *   node --import tsx bench/bm25-ab.ts --before /work/ci-r8 --index-dir DIR
 *
 * DIR: a saved index, e.g. the one `bench/bm25-queries.ts --size 100000` keeps
 * (/tmp/bm25-q-100000/q-100000) or bench/perf.ts's `--out` (/tmp/p1m/perf-1000000).
 * @module
 */
import { resolve } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'
import { cpuMs, loadAverage, median } from './lib/measure.ts'
import type { CheckoutDefault } from './perf/checkout-default.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    'index-dir': { type: 'string' },
    passes: { type: 'string', default: '6' },
    data: { type: 'string', default: '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { loadCheckoutDefault } = await import('./perf/checkout-default.ts')
const { bm25RequestQueries, loadBenchmarkQueries } = await import('./perf/synthetic-library.ts')
if (values.before === undefined || values['index-dir'] === undefined) {
  usageError(
    import.meta.url,
    '--before DIR (a checkout) and --index-dir DIR (a saved index) are required.',
  )
}
const passes = Number(values.passes)
const indexDir = resolve(values['index-dir'])

const instructions = await loadBenchmarkQueries(values.data)
const { steps, wholes } = await bm25RequestQueries(instructions)
const sides: Array<[string, CheckoutDefault]> = [
  ['before', await loadCheckoutDefault(values.before, indexDir)],
  ['after', await loadCheckoutDefault('.', indexDir)],
]
for (const query of [...steps, ...wholes]) {
  const [a, b] = sides.map(([, side]) => JSON.stringify(side.search(query)))
  if (a !== b) throw new Error(`The two versions answer differently: ${query}`)
}
console.log(
  `${indexDir}: same answers to ${steps.length + wholes.length} queries; load average ${loadAverage(1)}`,
)
const results = new Map<string, number[]>()
const record = (name: string, microseconds: number) =>
  results.set(name, [...(results.get(name) ?? []), microseconds])
for (let pass = 0; pass < passes + 1; pass += 1) {
  for (const [name, side] of pass % 2 === 0 ? sides : [...sides].reverse()) {
    for (const [label, queries] of [
      ['BM25 steps', steps],
      ['BM25 whole instruction', wholes],
    ] as const) {
      const started = cpuMs()
      for (const query of queries) side.search(query)
      // Pass 0 warms up both sides.
      if (pass > 0) record(`${label}, ${name}`, ((cpuMs() - started) / instructions.length) * 1000)
    }
    const started = cpuMs()
    for (const instruction of instructions) await side.select(instruction)
    if (pass > 0) record(`selectTools, ${name}`, ((cpuMs() - started) / instructions.length) * 1000)
  }
}
for (const [name, list] of results) {
  console.log(
    `${name.padEnd(32)} CPU per request, median of ${list.length}: ${median(list).toFixed(0)} µs (all: ${list.map((v) => v.toFixed(0)).join(' ')})`,
  )
}
// Query by query, both sides back to back (who goes first alternates), each query's fastest of
// `passes` runs per side: the steadiest figure on a busy machine (see bench/select-ab.ts).
const queries = [...steps, ...wholes]
const fastest = sides.map(() => new Float64Array(queries.length).fill(Infinity))
for (let pass = 0; pass < passes; pass += 1) {
  for (const [at, query] of queries.entries()) {
    for (let turn = 0; turn < 2; turn += 1) {
      const side = (turn + pass + at) % 2
      const started = process.hrtime.bigint()
      sides[side][1].search(query)
      const microseconds = Number(process.hrtime.bigint() - started) / 1000
      if (microseconds < fastest[side][at]) fastest[side][at] = microseconds
    }
  }
}
const [before, after] = fastest.map(
  (times) => times.reduce((sum, time) => sum + time, 0) / instructions.length,
)
console.log(
  `BM25 (steps and whole instruction) µs per request, each query's fastest of ${passes}, interleaved: before ${before.toFixed(0)}, after ${after.toFixed(0)}, after ÷ before ${(after / before).toFixed(3)}`,
)
console.log(`load average ${loadAverage(1)}`)
