/**
 * What a `--learned-dense` model's dense part costs at start-up and per library (not a test):
 * the word vectors' load time and memory (once per process, before `/readyz` when the configured
 * selector uses them), and what embedding EVERY tool of a synthetic library in the model's space
 * would take (the selector does not do this at load: it derives a candidate's vector on first use
 * and memoises it per library version, so this is the upper bound of that lazy work).
 *
 *   node --expose-gc --import tsx bench/dense-load-cost.ts --model /tmp/ld.json [--sizes 10000,100000] [--data ../shared/data]
 * @module
 */
import { benchArgs, usageError } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    model: { type: 'string' },
    sizes: { type: 'string', default: '10000,100000' },
    data: { type: 'string', default: '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { learnedToolVectors } = await import('../src/learn/dense-encoder.ts')
const { denseToolText } = await import('../src/learn/dense-features.ts')
const { readLearnedModelSync } = await import('../src/learn/learned-model.ts')
const { buildSyntheticLibrary } = await import('./perf/synthetic-library.ts')
if (!values.model) usageError(import.meta.url, '--model <file> is required')
const model = readLearnedModelSync(values.model)
if (!model.denseMap) throw new Error(`${values.model} has no learned dense map`)
const gc = (globalThis as { gc?: () => void }).gc
const rss = () => {
  gc?.()
  return process.memoryUsage().rss / 2 ** 20
}
const before = rss()
let started = performance.now()
const vectors = await learnedToolVectors(model.denseMap)
if (!vectors) throw new Error('word vectors unavailable')
const loadMs = performance.now() - started
console.log(
  `word vectors and map: ${loadMs.toFixed(0)} ms, RSS ${before.toFixed(0)} -> ${rss().toFixed(0)} MiB`,
)
for (const size of values.sizes!.split(',').map(Number)) {
  const { tools } = await buildSyntheticLibrary(values.data!, size)
  const texts = tools.map(denseToolText)
  const kept: Float32Array[] = []
  const rssBefore = rss()
  started = performance.now()
  for (const text of texts) kept.push(vectors.toolEncoder.embedText(text))
  const seconds = (performance.now() - started) / 1000
  console.log(
    `${size} tools: every tool's vector ${seconds.toFixed(2)} s (${((seconds * 1e6) / size).toFixed(1)} µs a tool), ` +
      `${((kept.length * 100 * 4) / 2 ** 20).toFixed(1)} MiB of float32, RSS ${rss() - rssBefore >= 0 ? '+' : ''}${(rss() - rssBefore).toFixed(0)} MiB`,
  )
}
