/**
 * Development sweep for usage examples, on TRAINING data only (no test query is read except to
 * exclude it from the training pool, as `toolsel bench --examples train` does). Each data set's
 * training queries are split by position: every 5th (G3) / 8th (ToolLens) query is a dev query,
 * the rest are the library's usage examples. Prints EM of each method on the dev queries.
 *
 *   npx tsx bench/examples-dev.ts [--data ../shared/data] [--datasets g3,toollens] [--limit N]
 *     [--selector top1|learned] [--weight 0.25] [--variants field|combine]
 *
 * Methods: the pipeline (rule planner → BM25 K=15 → top-1) with the `examples` field at several
 * weights / per-tool caps; the memory alone (tools voted by ≥ half the neighbours' similarity);
 * the pipeline with each step's candidates re-scored by the instruction's memory vote.
 * @module
 */
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'
import type { Config } from '../src/config/schema.ts'
import type { UsageExample } from '../src/examples/usage-example.ts'
import type { Tool } from '../src/library/tool.ts'
import type { Candidate, Retriever, Selector } from '../src/contracts.ts'
import type { DecisionRows, ExampleDecisionInput } from '../src/examples/example-decision.ts'
import type { IndexedLibrary } from '../src/store/indexed-library.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    datasets: { type: 'string', default: 'g3,toollens' },
    limit: { type: 'string' },
    variants: { type: 'string' },
    /** The pipeline's selector: `top1` (the sweep of round 1) or `learned` (the default model). */
    selector: { type: 'string', default: 'top1' },
    /** Expansion weight of the memory sweep's library (the shipped default is 0.5). */
    weight: { type: 'string', default: '0.25' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { parseQrels } = await import('../src/bench/suites/beir-suite.ts')
const { readDataText, readJsonRecords } = await import('../src/bench/suites/read-data-file.ts')
const { createToolbenchCorpusMap } = await import('../src/bench/suites/toolbench-corpus.ts')
const { parseToolbenchQueries } = await import('../src/bench/suites/toolbench-queries.ts')
const { loadToolplannerTraining } = await import('../src/bench/suites/toolplanner-training.ts')
const { normalizeQueryText } = await import('../src/train/train-split.ts')
const { parseConfig } = await import('../src/config/load-config.ts')
const { ExampleSet } = await import('../src/examples/example-set.ts')
const { importToolsFromFile } = await import('../src/library/importers/index.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { selectTools } = await import('../src/pipeline.ts')
const { RulePlanner } = await import('../src/plan/rule-planner.ts')
const { loadDefaultModel } = await import('../src/learn/learned-model.ts')
const { fitLogistic, predictProbability } = await import('../src/learn/logistic-regression.ts')
const { bestNeighborSet } = await import('../src/examples/example-memory.ts')
const { DEFAULT_EXAMPLE_MEMORY_OPTIONS, proposeToolSet } =
  await import('../src/examples/memory-selection.ts')
const {
  candidateSets,
  DECISION_NEIGHBORS,
  exampleDecisionRows,
  instructionWords,
  pickSet,
  rankTools,
} = await import('../src/examples/example-decision.ts')
const { capturingProbabilities } = await import('../src/examples/train-example-decision.ts')
const { LearnedSelector } = await import('../src/select/learned-selector.ts')
const { Top1Selector } = await import('../src/select/top1-selector.ts')
const { buildIndexedLibrary } = await import('../src/store/library-lifecycle.ts')
const dataDir = values.data!
const limit = values.limit ? Number(values.limit) : Infinity

interface DevSet {
  name: string
  tools: Tool[]
  examples: UsageExample[]
  dev: UsageExample[]
}

async function g3(): Promise<DevSet> {
  const corpus = join(dataDir, 'toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl')
  const tools = (await importToolsFromFile(corpus, { format: 'beir-corpus' })).tools
  const ids = new Set<string>()
  const texts = new Set<string>()
  for (const file of [
    'toolbench/toolplanner/data/retrieval/G3_clear/test.json',
    'toolbench/StableToolBench/solvable_queries/test_instruction/G3_instruction.json',
    'toolbench/ToolBench/data_example/instruction/G3_query.json',
  ]) {
    const path = join(dataDir, file)
    for (const query of parseToolbenchQueries(await readJsonRecords(path), path)) {
      ids.add(query.id)
      texts.add(normalizeQueryText(query.query))
    }
  }
  const coarse = join(dataDir, 'toolbench/toolplanner/data/category/coarse_instruction')
  const training = await loadToolplannerTraining(
    {
      api: join(coarse, 'api_instruction_5000.json'),
      tool: join(coarse, 'tool_instruction_5000.json'),
    },
    { ids, texts },
  )
  const map = createToolbenchCorpusMap(tools)
  const have = new Set(tools.map((tool) => tool.id))
  const all = training.examples.flatMap((example) => {
    const mapped = example.pairs.map(([tool, api]) => map.resolve(tool, api))
    return mapped.every((id) => have.has(id))
      ? [{ instruction: example.instruction, tools: [...new Set(mapped)] }]
      : []
  })
  return split('g3 (ToolPlanner train, COLT corpus)', tools, all, 5)
}

async function toollens(): Promise<DevSet> {
  const dir = join(dataDir, 'toollens/COLT/datasets/ToolLens')
  const tools = (await importToolsFromFile(join(dir, 'corpus.jsonl'), { format: 'beir-corpus' }))
    .tools
  const toolOf = new Map<string, string>()
  for (const tool of tools)
    for (const id of (tool.source?.corpusIds as string[] | undefined) ?? [tool.id])
      toolOf.set(id, tool.id)
  const texts = new Map<string, string>()
  for (const record of (await readJsonRecords(join(dir, 'queries.jsonl'))) as Array<{
    _id: string
    text: string
  }>)
    texts.set(String(record._id), record.text)
  const all: UsageExample[] = []
  for (const [id, corpusIds] of parseQrels(await readDataText(join(dir, 'qrels', 'train.tsv')))) {
    const text = texts.get(id)
    if (text)
      all.push({ instruction: text, tools: [...new Set(corpusIds.map((c) => toolOf.get(c)!))] })
  }
  return split('toollens (train qrels)', tools, all, 8)
}

function split(name: string, tools: Tool[], all: UsageExample[], every: number): DevSet {
  const dev = all.filter((_, index) => index % every === 0).slice(0, limit)
  const examples = all.filter((_, index) => index % every !== 0)
  return { name, tools, examples, dev }
}

function config(overrides: { weight?: number; perTool?: number }): Config {
  return parseConfig({
    retrieve: {
      bm25: {
        fieldWeights: { examples: overrides.weight ?? 1 },
        examplesPerTool: overrides.perTool ?? 32,
      },
    },
    library: { maxExamples: 100_000 },
  })
}

/** Re-scores a step's candidates with the instruction's memory vote: score × (1 + alpha × vote). */
class VotedRetriever implements Retriever {
  readonly name = 'bm25+vote'
  constructor(
    readonly inner: Retriever,
    readonly votes: ReadonlyMap<string, number>,
    readonly alpha: number,
  ) {}
  async retrieve(query: string, options: { k: number; minScore?: number }): Promise<Candidate[]> {
    const candidates = await this.inner.retrieve(query, { ...options, k: Math.max(options.k, 50) })
    return candidates
      .map(({ id, score }) => ({ id, score: score * (1 + this.alpha * (this.votes.get(id) ?? 0)) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, options.k)
  }
}

const planner = new RulePlanner()
const selector: Selector =
  values.selector === 'learned' ? new LearnedSelector(loadDefaultModel()) : new Top1Selector()

async function pipelineEm(
  indexed: IndexedLibrary,
  dev: UsageExample[],
  alpha = 0,
): Promise<number> {
  let hits = 0
  const bm25 = indexed.retrievers.get('bm25')!
  for (const query of dev) {
    const retriever =
      alpha > 0 && indexed.examples
        ? new VotedRetriever(bm25, indexed.examples.memory.vote(query.instruction).scores, alpha)
        : bm25
    const result = await selectTools(query.instruction, {
      library: indexed.library,
      planner,
      retriever,
      selector,
      k: 15,
    })
    hits += sameSet(
      result.tools.map((tool) => tool.id),
      query.tools,
    )
      ? 1
      : 0
  }
  return (100 * hits) / dev.length
}

function memoryEm(
  indexed: IndexedLibrary,
  dev: UsageExample[],
  threshold: number,
  neighbors: number,
): number {
  let hits = 0
  for (const query of dev) {
    const vote = indexed.examples!.memory.vote(query.instruction, { neighbors })
    const predicted = [...vote.scores].filter(([, score]) => score >= threshold).map(([id]) => id)
    hits += sameSet(predicted, query.tools) ? 1 : 0
  }
  return (100 * hits) / dev.length
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a)
  const right = new Set(b)
  return left.size === right.size && [...left].every((id) => right.has(id))
}

async function build(
  set: DevSet,
  overrides: { weight?: number; perTool?: number },
  withExamples = true,
) {
  const cfg = config(overrides)
  const library = new ToolLibrary('dev', set.tools)
  return buildIndexedLibrary(
    library,
    cfg,
    withExamples ? { examples: ExampleSet.of(set.examples, { cap: 100_000 }) } : {},
  )
}

/** The tool set with the most neighbour similarity behind it (1 neighbour: the nearest's set). */
function setVote(indexed: IndexedLibrary, instruction: string, neighbors: number) {
  const found = indexed.examples!.memory.neighbors(instruction, neighbors)
  const sets = new Map<string, { tools: readonly string[]; score: number }>()
  for (const { example, similarity } of found) {
    const key = [...example.tools].sort().join('\u0001')
    const entry = sets.get(key) ?? { tools: example.tools, score: 0 }
    entry.score += similarity
    sets.set(key, entry)
  }
  const best = [...sets.values()].sort((a, b) => b.score - a.score)[0]
  return { tools: best?.tools ?? [], top: found[0]?.similarity ?? 0 }
}

async function hybridEm(
  indexed: IndexedLibrary,
  dev: UsageExample[],
  neighbors: number,
  thresholds: number[],
  alpha: number,
) {
  const hits = thresholds.map(() => 0)
  const bm25 = indexed.retrievers.get('bm25')!
  for (const query of dev) {
    const proposal = setVote(indexed, query.instruction, neighbors)
    const retriever =
      alpha > 0
        ? new VotedRetriever(bm25, indexed.examples!.memory.vote(query.instruction).scores, alpha)
        : bm25
    const result = await selectTools(query.instruction, {
      library: indexed.library,
      planner,
      retriever,
      selector,
      k: 15,
    })
    const pipeline = result.tools.map((tool) => tool.id)
    thresholds.forEach((threshold, index) => {
      const predicted = proposal.top >= threshold ? proposal.tools : pipeline
      if (sameSet(predicted, query.tools)) hits[index] += 1
    })
  }
  return hits.map((hit) => ((100 * hit) / dev.length).toFixed(1))
}

function agreeEm(
  indexed: IndexedLibrary,
  dev: UsageExample[],
  pipeline: Map<string, string[]>,
  rule: (found: ReturnType<typeof agreement>) => boolean,
) {
  let hits = 0
  for (const query of dev) {
    const found = agreement(indexed, query.instruction)
    const predicted = rule(found) ? found.tools : pipeline.get(query.instruction)!
    if (sameSet(predicted, query.tools)) hits += 1
  }
  return ((100 * hits) / dev.length).toFixed(1)
}

function agreement(indexed: IndexedLibrary, instruction: string) {
  const found = indexed.examples!.memory.neighbors(instruction, 5)
  const sets = new Map<string, { tools: readonly string[]; score: number; count: number }>()
  for (const { example, similarity } of found) {
    const key = [...example.tools].sort().join('\u0001')
    const entry = sets.get(key) ?? { tools: example.tools, score: 0, count: 0 }
    entry.score += similarity
    entry.count += 1
    sets.set(key, entry)
  }
  const best = [...sets.values()].sort((a, b) => b.score - a.score)[0]
  return { tools: best?.tools ?? [], top: found[0]?.similarity ?? 0, count: best?.count ?? 0 }
}

const decisionSets = new Map<string, DecisionQuery[]>()

for (const name of values.datasets!.split(',')) {
  const set = name === 'g3' ? await g3() : await toollens()
  console.log(`\n## ${set.name}: ${set.examples.length} examples, ${set.dev.length} dev queries`)
  if (values.variants === 'field') {
    const none = await build(set, {}, false)
    console.log(`pipeline, no examples: EM ${(await pipelineEm(none, set.dev)).toFixed(1)}`)
    for (const weight of [0.25, 0.5, 1, 2]) {
      for (const perTool of [8, 32]) {
        const indexed = await build(set, { weight, perTool })
        console.log(
          `pipeline, expansion weight ${weight}, ${perTool}/tool: EM ${(await pipelineEm(indexed, set.dev)).toFixed(1)}`,
        )
      }
    }
    continue
  }
  if (values.variants === 'decision') {
    await decisionSweep(set)
    continue
  }
  if (values.variants === 'combine') {
    // How the memory's set answer combines with the pipeline's, at the default thresholds.
    const indexed = await build(set, { weight: Number(values.weight), perTool: 32 })
    const names = ['proposal else pipeline', 'proposal ∪ pipeline', 'proposal if it meets pipeline']
    const hits = names.map(() => 0)
    for (const query of set.dev) {
      const result = await selectTools(query.instruction, {
        library: indexed.library,
        planner,
        retriever: indexed.retrievers.get('bm25')!,
        selector,
        k: 15,
      })
      const pipelineIds = result.tools.map((tool) => tool.id)
      const found = agreement(indexed, query.instruction)
      const take = found.top >= 0.4 && (found.count >= 2 || found.top >= 0.6)
      const proposal = take ? found.tools : undefined
      const variants = [
        proposal ?? pipelineIds,
        proposal ? [...new Set([...proposal, ...pipelineIds])] : pipelineIds,
        proposal && proposal.some((id) => pipelineIds.includes(id)) ? proposal : pipelineIds,
      ]
      variants.forEach((predicted, index) => {
        if (sameSet(predicted, query.tools)) hits[index] += 1
      })
    }
    names.forEach((name, index) =>
      console.log(`${name}: EM ${((100 * hits[index]) / set.dev.length).toFixed(1)}`),
    )
    continue
  }
  const indexed = await build(set, { weight: Number(values.weight), perTool: 32 })
  const pipeline = new Map<string, string[]>()
  for (const query of set.dev) {
    const result = await selectTools(query.instruction, {
      library: indexed.library,
      planner,
      retriever: indexed.retrievers.get('bm25')!,
      selector,
      k: 15,
    })
    pipeline.set(
      query.instruction,
      result.tools.map((tool) => tool.id),
    )
  }
  for (const sim of [0.3, 0.4, 0.5]) {
    for (const agree of [1, 2]) {
      for (const dup of [0.6, 0.7, 0.8, 1.01]) {
        const em = agreeEm(
          indexed,
          set.dev,
          pipeline,
          (f) => f.top >= sim && (f.count >= agree || f.top >= dup),
        )
        console.log(`sim ≥ ${sim}, agree ≥ ${agree} or top ≥ ${dup}: EM ${em}`)
      }
    }
  }
}

interface DecisionQuery {
  gold: string[]
  /** The pipeline's answer (the selector's, no memory set). */
  pipeline: string[]
  /** The memory's set when it proposes one (default thresholds, no self-check). */
  proposal: readonly string[] | undefined
  /** The best set of the 5 nearest examples, whatever the thresholds. */
  best: readonly string[]
  /** Gold-set sizes of the 5 nearest examples. */
  sizes: number[]
  top: number
  agreeing: number
  input: ExampleDecisionInput
  rows: DecisionRows
}

/**
 * The example-aware decision's rows (examples/example-decision.ts) for every dev query: the
 * pipeline with the expansion index and the selector's probabilities, the memory's neighbours.
 */
async function decisionQueries(set: DevSet): Promise<DecisionQuery[]> {
  const indexed = await build(set, { weight: 0.5, perTool: 32 })
  const memory = indexed.examples!.memory
  const options = { ...DEFAULT_EXAMPLE_MEMORY_OPTIONS, minPrecision: 0 }
  const capturing = capturingProbabilities(selector)
  const out: DecisionQuery[] = []
  for (const query of set.dev) {
    const result = await selectTools(query.instruction, {
      library: indexed.library,
      planner,
      retriever: indexed.retrievers.get('bm25')!,
      selector: capturing.selector,
      k: 15,
    })
    const pipeline = result.tools.map((tool) => tool.id)
    const probabilities = capturing.probabilities()
    const neighbors = memory.neighbors(query.instruction, DECISION_NEIGHBORS)
    const best = bestNeighborSet(neighbors.slice(0, 5))
    const proposal = proposeToolSet(memory, query.instruction, options)?.tools
    const input: ExampleDecisionInput = {
      chosen: pipeline,
      probabilities,
      stepTops: new Set(result.steps.flatMap((step) => step.candidates[0]?.id ?? [])),
      neighbors,
      proposal,
      examples: memory.size,
      steps: result.steps.filter((step) => !step.whole).length,
      words: instructionWords(query.instruction),
      namespaceOf: (id) => indexed.library.get(id)?.namespace,
    }
    out.push({
      gold: [...query.tools],
      pipeline,
      proposal,
      best: best?.tools ?? [],
      sizes: neighbors.slice(0, 5).map((neighbor) => neighbor.example.tools.length),
      top: neighbors[0]?.similarity ?? 0,
      agreeing: best?.agreeing ?? 0,
      input,
      rows: exampleDecisionRows(input),
    })
  }
  return out
}

/** Set-level headroom: how often each answer is right, by similarity band and agreement. */
function setHeadroom(queries: readonly DecisionQuery[]) {
  const buckets = new Map<string, { n: number; pipe: number; best: number; either: number }>()
  for (const q of queries) {
    const band =
      q.top >= 0.6 ? '≥0.6' : q.top >= 0.4 ? '0.4-0.6' : q.top >= 0.3 ? '0.3-0.4' : '<0.3'
    const key = `${q.proposal ? 'applied' : 'abstained'} top ${band} agree ${Math.min(q.agreeing, 3)}`
    const b = buckets.get(key) ?? { n: 0, pipe: 0, best: 0, either: 0 }
    const pipe = sameSet(q.pipeline, q.gold)
    const best = sameSet(q.best, q.gold)
    b.n += 1
    b.pipe += pipe ? 1 : 0
    b.best += best ? 1 : 0
    b.either += pipe || best ? 1 : 0
    buckets.set(key, b)
  }
  for (const [key, b] of [...buckets].sort())
    console.log(
      `  ${key}: n ${b.n}, pipeline right ${b.pipe}, memory's best set right ${b.best}, either ${b.either}`,
    )
}

/**
 * How an example-aware per-tool model combines with the memory's set answer: fitted on half of
 * the dev queries of every data set (pooled: one default), evaluated on the other half, and back.
 */
async function decisionSweep(set: DevSet) {
  const queries = await decisionQueries(set)
  decisionSets.set(set.name, queries)
  const em = (pick: (q: DecisionQuery) => readonly string[]) =>
    ((100 * queries.filter((q) => sameSet(pick(q), q.gold)).length) / queries.length).toFixed(1)
  console.log(`pipeline alone: EM ${em((q) => q.pipeline)}`)
  console.log(
    `memory's set else pipeline (replace, the default before): EM ${em((q) => q.proposal ?? q.pipeline)}`,
  )
  console.log(
    `memory's set applied: ${queries.filter((q) => q.proposal).length} of ${queries.length}`,
  )
  setHeadroom(queries)
  if (decisionSets.size < values.datasets!.split(',').length) return
  const all = [...decisionSets.entries()]
  const modes: Record<
    string,
    (
      q: DecisionQuery,
      ranked: string[],
      p: number[],
      count: (q: DecisionQuery) => number,
    ) => readonly string[]
  > = {
    'every tool with p ≥ 0.4 (else the pipeline)': (q, ranked, p) => {
      const chosen = ranked.filter((_, index) => p[index] >= 0.4)
      return chosen.length > 0 ? chosen : q.pipeline
    },
    'top-n, n = the memory set size if it applies, else the pipeline count': (q, ranked) =>
      ranked.slice(0, q.proposal ? q.proposal.length : q.pipeline.length),
    'top-n, n = mean gold-set size of the 5 neighbours': (q, ranked) =>
      ranked.slice(
        0,
        Math.max(1, Math.round(q.sizes.reduce((a, b) => a + b, 0) / Math.max(1, q.sizes.length))),
      ),
    "memory's set if it applies, else top-n, n = the best set's size": (q, ranked) =>
      q.proposal ?? ranked.slice(0, Math.max(1, q.best.length)),
    "memory's set if it applies, else top-n, n = a learned count": (q, ranked, _p, count) =>
      q.proposal ?? ranked.slice(0, count(q)),
    "memory's set if it applies, else top-n, n = the pipeline count": (q, ranked) =>
      q.proposal ?? ranked.slice(0, q.pipeline.length),
    'oracle: top-n, n = |gold|': (q, ranked) => ranked.slice(0, q.gold.length),
    "set model: the most probable of the selector's set, the memory's best set, top-1..5 (shipped)":
      (q) => q.pipeline,
  }
  for (const [name, pick] of Object.entries(modes)) {
    const out: string[] = []
    for (const [setName, setQueries] of all) {
      let hits = 0
      for (const side of [0, 1]) {
        const fitOn = (keep: (q: DecisionQuery, index: number) => boolean) =>
          all.flatMap(([, qs]) => qs.filter(keep))
        const train = fitOn(
          (q, index) => index % 2 !== side && (!q.proposal || !name.startsWith("memory's set")),
        )
        const rows = train.flatMap((q) => q.rows.x)
        const labels = train.flatMap((q) => q.rows.ids.map((id) => (q.gold.includes(id) ? 1 : 0)))
        const model = fitLogistic(rows, labels, { l2: 1 })
        const rank = (q: DecisionQuery) => {
          const scored = q.rows.ids
            .map((id, index) => ({ id, index, p: predictProbability(model, q.rows.x[index]) }))
            .sort((a, b) => b.p - a.p || a.index - b.index)
          return { ranked: scored.map((c) => c.id), p: scored.map((c) => c.p) }
        }
        const countX = (q: DecisionQuery) => {
          const { p } = rank(q)
          return [
            q.pipeline.length,
            q.best.length,
            q.sizes.reduce((a, b) => a + b, 0) / Math.max(1, q.sizes.length),
            q.top,
            q.agreeing,
            p.reduce((a, b) => a + b, 0),
            p.filter((v) => v >= 0.5).length,
            ...[0, 1, 2, 3, 4, 5].map((k) => p[k] ?? 0),
          ]
        }
        const countTrain = fitOn((_q, index) => index % 2 !== side)
        const atLeast = [2, 3, 4, 5].map((k) =>
          fitLogistic(
            countTrain.map(countX),
            countTrain.map((q) => (q.gold.length >= k ? 1 : 0)),
            { l2: 1 },
          ),
        )
        const count = (q: DecisionQuery) =>
          1 + atLeast.filter((m) => predictProbability(m, countX(q)) >= 0.5).length
        // The shipped set model (examples/example-decision.ts) on the per-tool model's ranking.
        const setTrain = fitOn((q, index) => index % 2 !== side && q.pipeline.length > 0).flatMap(
          (q) =>
            candidateSets(q.input, rankTools(model, q.rows)).map((o) => ({
              x: o.x,
              y: sameSet(o.tools, q.gold) ? 1 : 0,
            })),
        )
        const setModel = fitLogistic(
          setTrain.map((r) => r.x),
          setTrain.map((r) => r.y),
          { l2: 1 },
        )
        const chooseSet = (q: DecisionQuery) =>
          q.pipeline.length === 0
            ? (q.proposal ?? q.pipeline)
            : pickSet(setModel, candidateSets(q.input, rankTools(model, q.rows)))
        setQueries.forEach((q, index) => {
          if (index % 2 !== side) return
          const { ranked, p } = rank(q)
          if (
            sameSet(name.startsWith('set model') ? chooseSet(q) : pick(q, ranked, p, count), q.gold)
          )
            hits += 1
        })
      }
      out.push(`${setName.split(' ')[0]} ${((100 * hits) / setQueries.length).toFixed(1)}`)
    }
    console.log(`${name}: EM ${out.join(' · ')}`)
  }
}
