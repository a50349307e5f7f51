/**
 * Retrieval quality of bm25, dense and hybrid on the same library, for one or more embedders side by
 * side (benchmark, not a test): each library is built once per embedder with all three retrievers
 * (bm25 is the same for every embedder and reported once), then every query runs through each:
 *
 * - R@15 (one query): gold tools among the top 15 for the whole instruction (candidate recall);
 * - the pipeline (rule planner → retriever, K = 15 → top-1 selector): exact match of the selected
 *   set (EM), gold tools among all steps' candidates (pool recall), and R@15 of the steps' merged
 *   candidates (round-robin by rank, as `toolsel bench` merges them);
 *
 * each with the configured thresholds (BM25 tau = 3, also the hybrid's BM25 input) and without
 * (tau off). Datasets: `demo` (the demo library with `test/fixtures/demo-queries.jsonl`), `g3`
 * (ToolPlanner's ToolBench G3_clear test queries against COLT's G3 corpus, gold `relevant APIs`
 * mapped to the corpus as `toolsel bench --suite toolbench-g3 --library-mode corpus` maps them) and
 * `g1` (StableToolBench G1 test splits on their union libraries, as `toolsel bench --suite
 * toolbench-g1`; split rows are averaged weighted by queries).
 *
 *   npx tsx bench/retrieval-quality.ts [--datasets demo,g3,g1] [--embedder use-lite,static:glove-100d]
 *     [--text full,short] [--data ../shared/data] [--limit N] [--sweep] [--cache bench/out/quality-cache]
 *
 * `--sweep` adds hybrid variants (fusion and weights, see SWEEP). Tool vectors are cached in
 * `--cache` (`<embedder>/<library>`: each index directory with its embeddings.cache), so reruns skip
 * embedding; `--cold` embeds everything again (for build times).
 * @module
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'
import type { BenchCase } from '../src/bench/bench-case.ts'
import type { ConfigLayer } from '../src/config/load-config.ts'
import type { Config } from '../src/config/schema.ts'
import type { Tool } from '../src/library/tool.ts'
import type { Retriever } from '../src/contracts.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    datasets: { type: 'string', default: 'demo,g3,g1' },
    embedder: { type: 'string', default: 'use-lite,static:glove-100d' },
    cold: { type: 'boolean', default: false },
    text: { type: 'string', default: 'full' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    limit: { type: 'string' },
    sweep: { type: 'boolean', default: false },
    cache: { type: 'string', default: 'bench/out/quality-cache' },
  },
})
// The retrieval code only once the flags are good: --help and a bad flag answer without it.
const { candidateRecall, exactMatch, mergeRankedCandidates, recallAtK } =
  await import('../src/bench/metrics/index.ts')
const { resolveSuites } = await import('../src/bench/suites/index.ts')
const { parseConfig } = await import('../src/config/load-config.ts')
const { importToolsFromPath } = await import('../src/library/importers/index.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { selectTools } = await import('../src/pipeline.ts')
const { RulePlanner } = await import('../src/plan/rule-planner.ts')
const { Top1Selector } = await import('../src/select/top1-selector.ts')
const { DEMO_LIBRARY_DIR, buildIndexedLibrary, saveIndexedLibrary } =
  await import('../src/store/library-lifecycle.ts')
const { LibraryHybridRetriever } = await import('../src/store/library-hybrid-retriever.ts')

const K = 15
const RETRIEVERS = ['bm25', 'dense', 'hybrid'] as const

/** Hybrid variants of `--sweep`: [label, retrieve.hybrid settings]. */
const SWEEP: Array<[string, ConfigLayer]> = [
  ['rrf, 1 : 1', { fusion: 'rrf', inputs: weights(1, 1) }],
  ['rrf, bm25 3 : dense 1', { fusion: 'rrf', inputs: weights(3, 1) }],
  ['weighted, 0.5 : 0.5', { inputs: weights(0.5, 0.5) }],
  ['weighted, 0.8 : 0.2', { inputs: weights(0.8, 0.2) }],
  ['weighted 0.7 : 0.3, 100 candidates per input', { candidatesPerInput: 100 }],
]

function weights(bm25: number, dense: number) {
  return [
    { retriever: 'bm25', weight: bm25 },
    { retriever: 'dense', weight: dense },
  ]
}

interface Dataset {
  name: string
  /** Libraries, each with its queries; rows are averaged over them, weighted by queries. */
  splits: DatasetSplit[]
}

interface DatasetSplit {
  /** Library (and cache directory) name. */
  library: string
  tools: Tool[]
  cases: BenchCase[]
}

async function loadDemo(): Promise<Dataset> {
  const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
  const lines = (await readFile('test/fixtures/demo-queries.jsonl', 'utf8')).split('\n')
  const cases = lines
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as BenchCase)
  return { name: 'demo', splits: [{ library: 'demo', tools, cases }] }
}

async function loadG3(dataDir: string): Promise<Dataset> {
  const [suite] = resolveSuites('toolbench-g3')
  const { splits, skipped } = await suite.load({
    dataDir,
    queries: join(dataDir, 'toolbench/toolplanner/data/retrieval/G3_clear/test.json'),
    tools: join(dataDir, 'toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl'),
    libraryMode: 'corpus',
    unmappable: 'drop',
  })
  if (splits.length === 0) {
    throw new Error(`G3 data missing: ${skipped.map((split) => split.reason).join('; ')}`)
  }
  const [split] = splits
  const name = 'toolbench-g3 (G3_clear test, COLT corpus)'
  return { name, splits: [{ library: 'toolbench-g3', tools: split.tools, cases: split.cases }] }
}

async function loadG1(dataDir: string): Promise<Dataset> {
  const [suite] = resolveSuites('toolbench-g1')
  const { splits, skipped } = await suite.load({
    dataDir,
    libraryMode: 'union',
    unmappable: 'drop',
  })
  if (splits.length === 0) {
    throw new Error(`G1 data missing: ${skipped.map((split) => split.reason).join('; ')}`)
  }
  return {
    name: 'toolbench-g1 (StableToolBench G1 test splits, union libraries)',
    splits: splits.map((split) => ({
      library: split.name.replace(/[^\w.-]+/g, '-'),
      tools: split.tools,
      cases: split.cases,
    })),
  }
}

async function loadDataset(name: string): Promise<Dataset> {
  if (name === 'demo') return loadDemo()
  if (name === 'g3') return loadG3(values.data)
  if (name === 'g1') return loadG1(values.data)
  throw new Error(`Unknown dataset "${name}" (available: demo, g3, g1)`)
}

interface Row {
  retriever: string
  tau: string
  recall15: number
  em: number
  pool: number
  merged15: number
  p50Ms: number
}

interface Evaluation {
  rows: Row[]
  buildSeconds: number
  /** Tools embedded in this run (the rest came from the cache). */
  embedded: number
}

async function evaluate(
  dataset: Dataset,
  config: Config,
  cacheDir: string,
  withBm25: boolean,
): Promise<Evaluation> {
  const evaluations: Array<Evaluation & { queries: number }> = []
  for (const split of dataset.splits) {
    const evaluation = await evaluateSplit(split, config, cacheDir, withBm25)
    evaluations.push({ ...evaluation, queries: Math.min(split.cases.length, limit()) })
  }
  const total = evaluations.reduce((sum, evaluation) => sum + evaluation.queries, 0)
  const rows = evaluations[0].rows.map((first, index) => {
    const mean = (key: 'recall15' | 'em' | 'pool' | 'merged15' | 'p50Ms') =>
      evaluations.reduce((sum, e) => sum + e.rows[index][key] * e.queries, 0) / Math.max(1, total)
    return {
      retriever: first.retriever,
      tau: first.tau,
      recall15: mean('recall15'),
      em: mean('em'),
      pool: mean('pool'),
      merged15: mean('merged15'),
      // A query-weighted mean of the splits' medians.
      p50Ms: mean('p50Ms'),
    }
  })
  return {
    rows,
    buildSeconds: evaluations.reduce((sum, e) => sum + e.buildSeconds, 0),
    embedded: evaluations.reduce((sum, e) => sum + e.embedded, 0),
  }
}

function limit(): number {
  return values.limit ? Number(values.limit) : Infinity
}

async function evaluateSplit(
  dataset: DatasetSplit,
  config: Config,
  cacheDir: string,
  withBm25: boolean,
): Promise<Evaluation> {
  const library = new ToolLibrary(dataset.library, dataset.tools)
  let embedded = 0
  let firstDone: number | undefined
  const started = performance.now()
  const indexed = await buildIndexedLibrary(library, config, {
    retriever: 'hybrid',
    previousIndexDir: values.cold ? undefined : join(cacheDir, library.name),
    onProgress: ({ stage, done }) => {
      if (stage !== 'dense') return
      firstDone ??= done
      embedded = done - firstDone
    },
  })
  const buildSeconds = (performance.now() - started) / 1000
  await saveIndexedLibrary(cacheDir, indexed)
  const runs: Array<[string, Retriever]> = RETRIEVERS.filter(
    (kind) => withBm25 || kind !== 'bm25',
  ).map((kind) => [kind, indexed.retrievers.get(kind)!])
  if (values.sweep) {
    for (const [label, hybrid] of SWEEP) {
      const variant = parseConfig({ retrieve: { dense: config.retrieve.dense, hybrid } })
      runs.push([`hybrid, ${label}`, new LibraryHybridRetriever(variant, indexed.retrievers)])
    }
  }
  const cases = dataset.cases.slice(0, limit())
  const rows: Row[] = []
  for (const [label, retriever] of runs) {
    for (const [tau, minScore] of [
      ['3', undefined],
      ['off', Number.NEGATIVE_INFINITY],
    ] as const) {
      // Dense has no threshold by default; the sweep keeps tau 3.
      if (label === 'dense' && tau === 'off') continue
      if (label.startsWith('hybrid,') && tau === 'off') continue
      const row = await score(library, retriever, cases, minScore)
      const name = label.startsWith('hybrid,') ? label : retriever.name
      rows.push({ ...row, retriever: name, tau: label === 'dense' ? '–' : tau })
    }
  }
  return { rows, buildSeconds, embedded }
}

async function score(
  library: InstanceType<typeof ToolLibrary>,
  retriever: Retriever,
  cases: readonly BenchCase[],
  minScore: number | undefined,
): Promise<Omit<Row, 'retriever' | 'tau'>> {
  const sums = { recall15: 0, em: 0, pool: 0, merged15: 0 }
  const times: number[] = []
  for (const benchCase of cases) {
    const top = await retriever.retrieve(benchCase.instruction, { k: K, minScore })
    sums.recall15 += candidateRecall(
      top.map((candidate) => candidate.id),
      benchCase.gold,
    )
    const begin = performance.now()
    const result = await selectTools(benchCase.instruction, {
      library,
      planner: new RulePlanner(),
      retriever,
      selector: new Top1Selector(),
      k: K,
      minScore,
    })
    times.push(performance.now() - begin)
    const steps = result.steps.map((step) => step.candidates.map((candidate) => candidate.id))
    sums.em += exactMatch(
      result.tools.map((tool) => tool.id),
      benchCase.gold,
    )
    sums.pool += candidateRecall(steps.flat(), benchCase.gold)
    sums.merged15 += recallAtK(mergeRankedCandidates(steps), benchCase.gold, K)
  }
  times.sort((a, b) => a - b)
  const n = Math.max(1, cases.length)
  return {
    recall15: sums.recall15 / n,
    em: sums.em / n,
    pool: sums.pool / n,
    merged15: sums.merged15 / n,
    p50Ms: times[Math.floor(times.length / 2)] ?? Number.NaN,
  }
}

function table(rows: Row[]): string {
  const percent = (value: number) => (value * 100).toFixed(1)
  const lines = [
    '| retriever | tau | R@15 (one query) | EM | pool recall | R@15 (steps merged) | selectTools p50 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const row of rows) {
    const cells = [row.recall15, row.em, row.pool, row.merged15].map(percent)
    lines.push(`| ${row.retriever} | ${row.tau} | ${cells.join(' | ')} | ${row.p50Ms.toFixed(1)} |`)
  }
  return lines.join('\n')
}

const summary: string[] = [
  '| data set | retriever | R@15 (one query) | EM | pool recall | R@15 (steps merged) | index build (s) |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
]
for (const text of values.text.split(',')) {
  for (const name of values.datasets.split(',')) {
    const dataset = await loadDataset(name)
    const queries = dataset.splits.reduce(
      (sum, split) => sum + Math.min(split.cases.length, limit()),
      0,
    )
    const tools = dataset.splits.reduce((sum, split) => sum + split.tools.length, 0)
    for (const [position, embedder] of values.embedder.split(',').entries()) {
      const config = parseConfig({ retrieve: { dense: { embedder, text } } })
      const cacheDir = join(values.cache, embedder.replace(/[^\w.-]+/g, '-'))
      const { rows, buildSeconds, embedded } = await evaluate(
        dataset,
        config,
        cacheDir,
        position === 0,
      )
      process.stdout.write(
        `\n### ${dataset.name}: ${tools} tools, ${queries} queries; embedder ${embedder}, text ${text}; index built in ${buildSeconds.toFixed(1)} s (${embedded} tools embedded, the rest cached)\n\n${table(rows)}\n`,
      )
      const percent = (value: number) => (value * 100).toFixed(1)
      for (const row of rows.filter((row) => row.tau !== 'off')) {
        const label = row.retriever === 'bm25' ? 'bm25' : `${row.retriever}`
        const cells = [row.recall15, row.em, row.pool, row.merged15].map(percent)
        const build = row.retriever === 'bm25' ? '' : buildSeconds.toFixed(1)
        summary.push(
          `| ${name}${text === 'full' ? '' : ` (${text})`} | ${label} | ${cells.join(' | ')} | ${build} |`,
        )
      }
    }
  }
}
process.stdout.write(`\n### Summary (tau 3)\n\n${summary.join('\n')}\n`)
// use-lite's idle worker threads are unref'd; the native HNSW graph can still hold the loop.
process.exit(0)
