/**
 * BM25 query CPU as a `selectTools` request issues it (not a test): the learned selector
 * retrieves every rule-planned step and the whole instruction, head-verb expanded, top `k`
 * (15) above 0. Builds (or reuses, `--index-dir`) a saved library of `bench:perf`'s synthetic
 * tools, loads it as the server does, then replays the 535 benchmark instructions' queries
 * `--rounds` times, each strategy in turn (the retriever's `search`, exhaustive scoring, and
 * optionally other window sizes), and prints CPU per request (steps and whole instruction apart)
 * and per-query p50 / p99; every strategy's answers are checked against exhaustive scoring.
 *
 *   node --expose-gc --import tsx bench/bm25-queries.ts [--size 100000] [--rounds 5]
 *     [--index-dir /tmp/bm25-q-100000]   (kept between runs; built when missing; or a saved
 *                                         index's own directory, e.g. /tmp/p1m/perf-1000000)
 *     [--windows 2048,8192]   (also time searchWindowed with these window sizes)
 * @module
 */
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'
import { cpuMs, loadAverage } from './lib/measure.ts'
import type { Bm25Retriever } from '../src/retrieve/bm25/bm25-retriever.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
    'index-dir': { type: 'string' },
    windows: { type: 'string' },
    data: { type: 'string', default: join('..', 'shared', 'data') },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { defaultConfig } = await import('../src/config/schema.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { canPrune, queryTerms, SearchScratch, searchExhaustive, searchWindowed } =
  await import('../src/retrieve/bm25/bm25-search.ts')
const { tokenizeQuery } = await import('../src/retrieve/bm25/tokenize.ts')
const { TopK } = await import('../src/retrieve/top-k.ts')
const { buildIndexedLibrary, loadIndexedLibrary, saveIndexedLibrary } =
  await import('../src/store/library-lifecycle.ts')
const { bm25RequestQueries, buildSyntheticLibrary, loadBenchmarkQueries } =
  await import('./perf/synthetic-library.ts')
const size = Number(values.size)
const rounds = Number(values.rounds)
const config = defaultConfig()
const base = values['index-dir'] ?? join('/tmp', `bm25-q-${size}`)
// An index directory itself (e.g. bench/perf.ts's `--out`), or where this script keeps its own.
const dir = existsSync(join(base, 'manifest.json')) ? base : join(base, `q-${size}`)
if (!existsSync(dir)) {
  await mkdir(base, { recursive: true })
  const { tools } = await buildSyntheticLibrary(values.data, size)
  const indexed = await buildIndexedLibrary(new ToolLibrary(`q-${size}`, tools), config)
  await saveIndexedLibrary(base, indexed)
}
const loaded = await loadIndexedLibrary(dir, config)
const retriever = loaded.retrievers.get('bm25') as Bm25Retriever
const exhaustive = retriever.withoutPruning()
const instructions = await loadBenchmarkQueries(values.data)
const { steps, wholes } = await bm25RequestQueries(instructions)
const k = config.retrieve.k
const ids = retriever.ids
const expansionWeight = retriever.settings.fieldWeights.examples ?? 0
type Strategy = { search(query: string, k: number, minScore: number): unknown }
/** The retriever's search with windows of `window` documents (every query it can prune). */
const windowed = (window: number): Strategy => {
  const scratch = new SearchScratch(retriever.size, window)
  return {
    search(query: string, k: number, minScore: number) {
      const terms = queryTerms(
        tokenizeQuery(query),
        retriever.postings,
        retriever.expansionPostings,
        expansionWeight,
      )
      const top = new TopK(k, (a, b) => ids[a] > ids[b])
      const hits = canPrune(terms)
        ? searchWindowed(terms, expansionWeight, scratch, top, minScore)
        : searchExhaustive(terms, expansionWeight, scratch, top, minScore)
      return hits.map(({ position, score }) => ({ id: ids[position], score }))
    },
  }
}
const strategies: Array<[string, Strategy]> = [
  ['search', retriever],
  ['exhaustive', exhaustive],
  ...(values.windows ?? '')
    .split(',')
    .filter(Boolean)
    .map((window): [string, Strategy] => [`window ${window}`, windowed(Number(window))]),
]
for (const [name, strategy] of strategies) {
  for (const query of [...steps, ...wholes]) {
    const a = JSON.stringify(strategy.search(query, k, 0))
    if (a !== JSON.stringify(exhaustive.search(query, k, 0))) {
      throw new Error(`${name} and exhaustive scoring differ on: ${query}`)
    }
  }
}
for (const [label, queries] of [
  ['steps', steps],
  ['whole', wholes],
] as const) {
  for (const [name, strategy] of strategies) {
    const times: number[] = []
    const cpuStart = cpuMs()
    for (let round = 0; round < rounds; round += 1) {
      for (const query of queries) {
        const start = performance.now()
        strategy.search(query, k, 0)
        times.push(performance.now() - start)
      }
    }
    const cpuUsed = cpuMs() - cpuStart
    times.sort((a, b) => a - b)
    const q = (p: number) => times[Math.floor(p * (times.length - 1))].toFixed(3)
    console.log(
      `${label.padEnd(5)} ${name.padEnd(10)} ${queries.length} queries: CPU per request ${((cpuUsed / rounds / instructions.length) * 1000).toFixed(0)} µs, per query p50 ${q(0.5)} / p99 ${q(0.99)} ms`,
    )
  }
}
console.log(`load average ${loadAverage(1)}`)
