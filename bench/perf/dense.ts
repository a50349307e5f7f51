/**
 * The dense half of bench/perf.ts (`--dense`): for one library size, the dense and hybrid index
 * build (embedding and HNSW insertion timed apart), memory, dense and hybrid query latency with
 * the query embedding, HNSW and flat search alone, and HNSW recall@15 against the exact flat
 * index on the same vectors.
 *
 * Tool vectors are kept in `<cache>/perf-<size>/embeddings.cache` (the index's own embedding
 * cache), so a rerun measures a warm build unless `--dense-cold` empties it first.
 * @module
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { parseConfig } from '../../src/config/load-config.ts'
import { toolContentHash } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { FlatIndex } from '../../src/retrieve/dense/flat-index.ts'
import { buildIndexedLibrary, saveIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { StoredDenseRetriever } from '../../src/store/stored-dense-retriever.ts'
import { collectGarbage, rssMiB, summarize, timeCalls } from '../lib/measure.ts'
import type { LatencySummary } from '../lib/measure.ts'
import { buildSyntheticLibrary, loadBenchmarkQueries } from './synthetic-library.ts'

export interface DenseOptions {
  /** `retrieve.dense.embedder`, e.g. `use-lite` or `hashing:512`. */
  embedder: string
  /** `retrieve.dense.text`: `full` or `short`. */
  text: 'full' | 'short'
  /** Where tool vectors are cached between runs. */
  cacheDir: string
  /** Empty the cache first (a cold build). */
  cold: boolean
}

export interface DenseResult {
  tools: number
  embedder: string
  text: string
  threads: number
  /** The hybrid's fusion, e.g. `weighted bm25 0.7 / dense 0.3`. */
  fusion: string
  /** Tools embedded in this run (the rest came from the cache). */
  embedded: number
  embedSeconds: number
  /** Building the HNSW graph (and everything after the last embedding batch). */
  hnswSeconds: number
  buildSeconds: number
  rssAfterBuildMiB: number
  stepQueries: number
  queryEmbedding: LatencySummary
  dense: LatencySummary
  hybrid: LatencySummary
  hnswSearch: LatencySummary
  flatSearch: LatencySummary
  /** Mean share of the flat index's top 15 that HNSW also returns. */
  hnswRecallAt15: number
}

const K = 15

export async function measureDense(
  dataDir: string,
  size: number,
  options: DenseOptions,
): Promise<DenseResult> {
  const config = parseConfig({
    retrieve: { dense: { embedder: options.embedder, text: options.text, index: 'hnsw' } },
  })
  const { tools } = await buildSyntheticLibrary(dataDir, size)
  const library = new ToolLibrary(`perf-${size}`, tools)
  const previous = join(options.cacheDir, library.name)
  if (options.cold) await rm(previous, { recursive: true, force: true })
  collectGarbage()

  let embeddingDone = 0
  let embedded = 0
  let firstDense: { at: number; done: number } | undefined
  const started = performance.now()
  const indexed = await buildIndexedLibrary(library, config, {
    retriever: 'hybrid',
    previousIndexDir: previous,
    onProgress: ({ stage, done, total }) => {
      if (stage !== 'dense') return
      firstDense ??= { at: performance.now(), done }
      embedded = done - firstDense.done
      if (done === total) embeddingDone = performance.now()
    },
  })
  const finished = performance.now()
  collectGarbage()
  const rssAfterBuildMiB = rssMiB()
  await saveIndexedLibrary(options.cacheDir, indexed)

  const dense = indexed.retrievers.get('dense') as StoredDenseRetriever
  const hybrid = indexed.retrievers.get('hybrid')!
  const planner = new RulePlanner()
  const steps = (await loadBenchmarkQueries(dataDir)).flatMap((query) => planner.split(query))
  const embedder = dense.embedder
  const options15 = { k: K }
  await timeCalls(steps.slice(0, 20), 1, (step) => dense.retrieve(step, options15)) // warm-up
  const queryEmbedding = await timeCalls(steps, 1, (step) =>
    embedder.embed([step], { kind: 'query' }),
  )
  const denseSamples = await timeCalls(steps, 1, (step) => dense.retrieve(step, options15))
  const hybridSamples = await timeCalls(steps, 1, (step) => hybrid.retrieve(step, options15))

  // Search alone, on precomputed query vectors, against HNSW and an exact index of the same vectors.
  const vectors = await embedder.embed(steps, { kind: 'query' })
  const flat = new FlatIndex(embedder.dimensions, embedder.modelId, tools.length)
  flat.add(tools.map((tool) => dense.cache!.get(embedder.modelId, toolContentHash(tool))!))
  const hnsw = dense.dense.index
  await timeCalls(vectors.slice(0, 50), 1, (vector) => hnsw.search(vector, K))
  const hnswSamples = await timeCalls(vectors, 3, (vector) => hnsw.search(vector, K))
  const flatSamples = await timeCalls(vectors, 1, (vector) => flat.search(vector, K))
  let recall = 0
  for (const vector of vectors) {
    const exact = new Set(flat.search(vector, K).map((hit) => hit.position))
    recall += hnsw.search(vector, K).filter((hit) => exact.has(hit.position)).length / exact.size
  }

  const embedStart = firstDense?.at ?? started
  return {
    tools: tools.length,
    embedder: embedder.modelId,
    text: options.text,
    threads: embedder.modelId === 'use-lite' ? config.retrieve.dense.threads : 0,
    fusion: `${config.retrieve.hybrid.fusion} ${config.retrieve.hybrid.inputs
      .map((input) => `${input.retriever} ${input.weight}`)
      .join(' / ')}`,
    embedded,
    embedSeconds: ((embeddingDone || embedStart) - embedStart) / 1000,
    hnswSeconds: (finished - (embeddingDone || embedStart)) / 1000,
    buildSeconds: (finished - started) / 1000,
    rssAfterBuildMiB,
    stepQueries: steps.length,
    queryEmbedding: summarize(queryEmbedding),
    dense: summarize(denseSamples),
    hybrid: summarize(hybridSamples),
    hnswSearch: summarize(hnswSamples),
    flatSearch: summarize(flatSamples),
    hnswRecallAt15: recall / vectors.length,
  }
}

export function formatDenseTable(rows: DenseResult[]): string {
  const f = (value: number, digits = 2) => value.toFixed(digits)
  const pair = (summary: LatencySummary, digits = 2) =>
    `${f(summary.p50, digits)} / ${f(summary.p99, digits)}`
  const header = [
    'tools',
    'embedder (text, threads)',
    'embedded',
    'embed (s)',
    'HNSW build (s)',
    'RSS after build (MiB)',
    'query embedding p50 / p99 (ms)',
    'dense p50 / p99 (ms)',
    'hybrid p50 / p99 (ms)',
    'HNSW search p50 / p99 (ms)',
    'flat search p50 / p99 (ms)',
    'HNSW recall@15 vs flat',
  ]
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---:').join('|')}|`]
  for (const row of rows) {
    lines.push(
      `| ${[
        row.tools,
        `${row.embedder} (${row.text}, ${row.threads})`,
        row.embedded,
        f(row.embedSeconds, 1),
        f(row.hnswSeconds, 1),
        f(row.rssAfterBuildMiB, 0),
        pair(row.queryEmbedding),
        pair(row.dense),
        pair(row.hybrid),
        pair(row.hnswSearch, 3),
        pair(row.flatSearch, 3),
        f(row.hnswRecallAt15, 4),
      ].join(' | ')} |`,
    )
  }
  const notes = rows.map(
    (row) =>
      `- ${row.tools} tools, ${row.embedder}: ${row.stepQueries} planned step queries; dense and hybrid include embedding the query (k = ${K}; hybrid: ${row.fusion}, bm25 with tau 3, 50 candidates per input).`,
  )
  return `\n${lines.join('\n')}\n\n${notes.join('\n')}\n`
}
