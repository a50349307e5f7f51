/**
 * Development loop for the example-aware decision (examples/example-decision.ts), on TRAINING
 * data only: `toolsel train`'s held-out queries (fold 0 of ToolPlanner G3, its single-clause
 * queries, ToolLens train) answered by the default model's pipeline in every example regime, then
 * the decision fitted and scored 2-fold over them, as `toolsel train` does. The answered queries
 * are cached (bench/out/decision-dev-cache.json), so a change to the decision's features or
 * candidate sets is re-scored in seconds; `--fresh` answers them again (after the model changed).
 *
 *   npx tsx bench/decision-dev.ts [--data ../shared/data] [--fresh] [--cache <file>]
 *
 * Prints per set the memory's exact match, the decision's, and `minExamples`.
 * @module
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { benchArgs } from './bench-args.ts'
import type { HeldQuery, HeldSet } from '../src/examples/train-example-decision.ts'
import type { ExampleDecisionInput } from '../src/examples/example-decision.ts'
import type { ToolCooccurrence } from '../src/examples/example-cooccurrence.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    fresh: { type: 'boolean', default: false },
    cache: { type: 'string', default: 'bench/out/decision-dev-cache.json' },
    dense: { type: 'boolean', default: false },
    map: { type: 'string', default: '' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { defaultConfig } = await import('../src/config/schema.ts')
const { fitDecision, heldSets } = await import('../src/examples/train-example-decision.ts')
const { DENSE_POOL, exampleDecisionRows } = await import('../src/examples/example-decision.ts')
const { toolCooccurrence } = await import('../src/examples/example-cooccurrence.ts')
const { ExampleMemory } = await import('../src/examples/example-memory.ts')
const { ExampleSet } = await import('../src/examples/example-set.ts')
const { ExampleDenseSpace, learnExampleMap } = await import('../src/examples/example-dense-map.ts')
type ExampleDenseSpace = import('../src/examples/example-dense-map.ts').ExampleDenseSpace
const { EXAMPLE_REGIMES, regimeExamples } =
  await import('../src/examples/train-example-decision.ts')
const { denseToolVectors } = await import('../src/learn/dense-encoder.ts')
const { foldOf } = await import('../src/learn/train-model.ts')
const { singleClauseCases } = await import('../src/learn/training-rows.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
const { DEFAULT_MODEL_PATH, parseLearnedModel } = await import('../src/learn/learned-model.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
const seed = 1

/** A held query without its Map, Set and function fields, as JSON stores it. */
interface StoredQuery extends Omit<HeldQuery, 'input' | 'rows'> {
  input?: Omit<ExampleDecisionInput, 'probabilities' | 'stepTops' | 'namespaceOf'> & {
    probabilities: Array<[string, number]>
    stepTops: string[]
    namespaces: Record<string, string>
  }
}

function store(query: HeldQuery): StoredQuery {
  const { input, rows: _rows, ...rest } = query
  if (!input) return rest
  const ids = new Set([...input.chosen, ...input.probabilities.keys()])
  for (const { example } of input.neighbors) for (const id of example.tools) ids.add(id)
  const namespaces: Record<string, string> = {}
  for (const id of ids) {
    const space = input.namespaceOf(id)
    if (space !== undefined) namespaces[id] = space
  }
  const {
    probabilities,
    stepTops,
    namespaceOf: _namespaceOf,
    cooccurrence: _cooccurrence,
    ...plain
  } = input
  return {
    ...rest,
    input: { ...plain, probabilities: [...probabilities], stepTops: [...stepTops], namespaces },
  }
}

function restore(query: StoredQuery): HeldQuery {
  const { input, ...rest } = query
  if (!input) return rest
  const { namespaces, probabilities, stepTops, ...plain } = input
  const restored: ExampleDecisionInput = {
    ...plain,
    probabilities: new Map(probabilities),
    stepTops: new Set(stepTops),
    namespaceOf: (id) => namespaces[id],
  }
  return { ...rest, input: restored, rows: exampleDecisionRows(restored) }
}

let sets: HeldSet[]
if (!values.fresh && existsSync(values.cache!)) {
  const stored = JSON.parse(await readFile(values.cache!, 'utf8')) as Array<
    Omit<HeldSet, 'queries'> & { queries: StoredQuery[] }
  >
  sets = stored.map((set) => ({ ...set, queries: set.queries.map(restore) }))
} else {
  const sources = [
    { ...(await loadToolPlannerG3(values.data!)), singleClauses: true },
    { ...(await loadToolLensTrain(values.data!)), singleClauses: false },
  ]
  // The default model's selector part (its `examples` part may predate the features here).
  const { examples: _examples, ...json } = JSON.parse(await readFile(DEFAULT_MODEL_PATH, 'utf8'))
  const model = parseLearnedModel(JSON.stringify(json), DEFAULT_MODEL_PATH)
  sets = await heldSets(sources, model, {
    config: defaultConfig(),
    seed,
    k: 15,
    onProgress: (message) => console.error(message),
  })
  await mkdir(dirname(values.cache!), { recursive: true })
  await writeFile(
    values.cache!,
    JSON.stringify(sets.map((set) => ({ ...set, queries: set.queries.map(store) }))),
  )
}

await addCooccurrence(sets)
if (values.dense) await addDense(sets)

/** The regime's example set (source, every) a held-out set was answered with. */
function regimeOf(set: HeldSet, names: readonly string[]) {
  const source = names.find((name) => set.name.startsWith(name))!
  const rest = set.name.slice(source.length)
  const regime = EXAMPLE_REGIMES.find(
    ([suffix]) => rest.endsWith(suffix) && (suffix !== '' || rest === '' || rest === '-single'),
  )!
  return { source, single: rest.startsWith('-single'), every: regime[1] }
}

/** Each set's queries get the co-occurrence of their regime's examples (not stored in the cache). */
async function addCooccurrence(held: HeldSet[]): Promise<void> {
  const sources = [await loadToolPlannerG3(values.data!), await loadToolLensTrain(values.data!)]
  const built = new Map<string, ToolCooccurrence>()
  for (const set of held) {
    const { source: name, every } = regimeOf(
      set,
      sources.map((source) => source.name),
    )
    const source = sources.find((candidate) => candidate.name === name)!
    const key = `${name}/${every}`
    if (!built.has(key)) {
      const library = new ToolLibrary(source.name, source.tools)
      const examples = regimeExamples({ ...source, singleClauses: false }, library, seed, every)
      built.set(
        key,
        toolCooccurrence(
          ExampleMemory.build(
            ExampleSet.of(examples, { cap: Math.max(1, examples.length) }).examples,
          ),
        ),
      )
    }
    for (const query of set.queries) {
      if (!query.input) continue
      query.input.cooccurrence = built.get(key)
      query.rows = exampleDecisionRows(query.input)
    }
  }
}

/**
 * `--dense`: each set's queries get the library's own dense space (examples/example-dense-map.ts),
 * learned from the set's example regime (`--map "epochs=4,lr=0.002,decay=0.01,gain=2"`).
 */
async function addDense(held: HeldSet[]): Promise<void> {
  const dense = await denseToolVectors()
  if (!dense) throw new Error('static word vectors unavailable')
  const config = defaultConfig()
  const sources = [await loadToolPlannerG3(values.data!), await loadToolLensTrain(values.data!)]
  const parsed = Object.fromEntries(
    values
      .map!.split(',')
      .filter(Boolean)
      .map((pair) => {
        const [key, value] = pair.split('=')
        return [key.trim(), Number(value)]
      }),
  )
  const mapOptions = {
    ...(parsed.epochs !== undefined && { epochs: parsed.epochs }),
    ...(parsed.lr !== undefined && { learningRate: parsed.lr }),
    ...(parsed.decay !== undefined && { identityDecay: parsed.decay }),
    ...(parsed.gain !== undefined && { minGain: parsed.gain }),
    ...(parsed.max !== undefined && { maxExamples: parsed.max }),
  }
  const spaces = new Map<string, ExampleDenseSpace | undefined>()
  for (const set of held) {
    const source = sources.find((candidate) => set.name.startsWith(candidate.name))!
    const rest = set.name.slice(source.name.length)
    const single = rest.startsWith('-single')
    const regime = EXAMPLE_REGIMES.find(
      ([suffix]) => rest.endsWith(suffix) && (suffix !== '' || rest === '' || rest === '-single'),
    )!
    const key = `${source.name}/${regime[1]}`
    const library = new ToolLibrary(source.name, source.tools)
    if (!spaces.has(key)) {
      const examples = regimeExamples({ ...source, singleClauses: false }, library, seed, regime[1])
      const started = performance.now()
      const { map, check } = await learnExampleMap(source.tools, examples, dense, mapOptions)
      console.log(
        `map ${key}: ${examples.length} examples, ${((performance.now() - started) / 1000).toFixed(1)} s, held ${check?.held} top-1 ${check?.untrained} -> ${check?.trained}${map ? '' : ' (not used)'}`,
      )
      spaces.set(key, map && new ExampleDenseSpace(source.tools, map, dense))
    }
    const space = spaces.get(key)
    if (!space) continue
    const cases = single
      ? singleClauseCases(
          source.tools,
          source.cases.filter((trainingCase) => foldOf(trainingCase.id, seed) === 0),
          {
            bm25: bm25Settings(config),
            k: 15,
            maxSteps: config.plan.maxSteps,
            tau: config.retrieve.bm25.tau,
          },
        )
      : source.cases
    const text = new Map(cases.map((trainingCase) => [trainingCase.id, trainingCase.instruction]))
    let top1 = 0
    for (const query of set.queries) {
      if (!query.input) continue
      query.input.dense = space.score(text.get(query.id)!, DENSE_POOL)
      if (query.gold.includes(query.input.dense.top[0])) top1 += 1
      query.rows = exampleDecisionRows(query.input, true)
    }
    console.log(`${set.name}: dense top-1 ${((100 * top1) / set.queries.length).toFixed(1)}`)
  }
}

const { heldOut, minExamples } = fitDecision(sets, seed)
console.log('| held-out set | queries | examples | memory | decision |')
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const split of heldOut) {
  console.log(
    `| ${split.name} | ${split.queries} | ${split.examples} | ${split.memory} | ${split.decision} |`,
  )
}
const mean = (key: 'memory' | 'decision') =>
  (heldOut.reduce((sum, split) => sum + split[key], 0) / heldOut.length).toFixed(2)
console.log(`mean of sets: memory ${mean('memory')}, decision ${mean('decision')}`)
console.log(`minExamples: ${minExamples ?? 'none (never used)'}`)
