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
import { parseArgs } from 'node:util'
import { parseQrels } from '../src/bench/suites/beir-suite.ts'
import { readDataText, readJsonRecords } from '../src/bench/suites/read-data-file.ts'
import { createToolbenchCorpusMap } from '../src/bench/suites/toolbench-corpus.ts'
import { parseToolbenchQueries } from '../src/bench/suites/toolbench-queries.ts'
import { loadToolplannerTraining, normalizeText } from '../src/bench/suites/toolplanner-training.ts'
import { parseConfig } from '../src/config/load-config.ts'
import type { Config } from '../src/config/schema.ts'
import { ExampleSet } from '../src/examples/example-set.ts'
import type { UsageExample } from '../src/examples/usage-example.ts'
import { importToolsFromFile } from '../src/library/importers/index.ts'
import type { Tool } from '../src/library/tool.ts'
import { ToolLibrary } from '../src/library/tool-library.ts'
import { selectTools } from '../src/pipeline.ts'
import { RulePlanner } from '../src/plan/rule-planner.ts'
import type { Candidate, Retriever, Selector } from '../src/contracts.ts'
import { loadDefaultModel } from '../src/learn/learned-model.ts'
import { LearnedSelector } from '../src/select/learned-selector.ts'
import { Top1Selector } from '../src/select/top1-selector.ts'
import { buildIndexedLibrary } from '../src/store/library-lifecycle.ts'
import type { IndexedLibrary } from '../src/store/indexed-library.ts'

const { values } = parseArgs({
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
      texts.add(normalizeText(query.query))
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
