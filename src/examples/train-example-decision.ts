/**
 * Trains the example-aware decision (examples/example-decision.ts) for a learned selector model:
 * for each training source, the queries the selector's model held out (fold 0) are answered by
 * the full pipeline over a library whose usage examples are the source's other queries (the
 * expansion index and the memory, as `toolsel bench --examples train` gives them; and again
 * with every 20th of them, a library with few examples; for ToolPlanner also the single-clause
 * queries made from the held-out ones, requests that need one tool). The per-tool
 * model is fitted on every tool the selector chose or a neighbour used (label: a gold tool), the
 * set model on the candidate sets those scores make (label: exactly the gold set); each source
 * weighs the same. Their held-out exact match comes from a 2-fold split of those queries; the
 * shipped models are then fitted on all of them. Deterministic.
 * @module
 */
import type { Config } from '../config/schema.ts'
import type { Selection, Selector } from '../contracts.ts'
import type { TreeEnsemble } from '../learn/boosted-trees.ts'
import { fitLogistic, roundedModel, type LogisticModel } from '../learn/logistic-regression.ts'
import type { DenseToolVectors } from '../learn/dense-features.ts'
import type { LearnedModel } from '../learn/learned-model.ts'
import { fitTreesOnModel, foldHash, foldOf } from '../learn/train-model.ts'
import type { DecisionTreeSettings, TreeSettings } from '../learn/tree-settings.ts'
import type { TrainingCase } from '../learn/training-data.ts'
import { singleClauseCases } from '../learn/training-rows.ts'
import { bm25Settings } from '../store/kinds/bm25-kind.ts'
import type { Tool } from '../library/tool.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import { selectionProbabilities, selectTools } from '../pipeline.ts'
import { trainingPlanner } from '../plan/rule-planner.ts'
import { LearnedSelector } from '../select/learned-selector.ts'
import { buildIndexedLibrary } from '../store/library-lifecycle.ts'
import {
  candidateSets,
  DECISION_NEIGHBORS,
  DENSE_POOL,
  EXAMPLE_DECISION_FEATURES,
  EXAMPLE_DENSE_FEATURES,
  EXAMPLE_SET_FEATURES,
  exampleDecisionRows,
  instructionWords,
  pickSet,
  rankTools,
  type DecisionRows,
  type ExampleDecisionInput,
} from './example-decision.ts'
import { ExampleDenseSpace, learnExampleMap } from './example-dense-map.ts'
import { withWordPairs } from './example-memory.ts'
import { ExampleSet } from './example-set.ts'
import { toolCooccurrence } from './example-cooccurrence.ts'
import type { UsageExample } from './usage-example.ts'
import { exampleMemoryFor, memoryTrusted } from './memory-selection.ts'

export { DECISION_TREE_SETTINGS, type DecisionTreeSettings } from '../learn/tree-settings.ts'

export interface DecisionSource {
  name: string
  tools: Tool[]
  cases: TrainingCase[]
  /**
   * Also answer single-clause queries made from the held-out ones (learn/training-rows.ts), so
   * that the decision sees requests needing one tool among examples that needed several.
   */
  singleClauses: boolean
}

export interface HeldQuery {
  id: string
  gold: string[]
  /** The pipeline's answer before the decision (the memory's set when it proposed one). */
  answer: string[]
  /** The decision's input and per-tool rows, when the selector chose something. */
  input?: ExampleDecisionInput
  rows?: DecisionRows
  /** The source's weight per query (every source weighs the same in total). */
  weight: number
}

export interface TrainDecisionOptions {
  config: Config
  seed: number
  k: number
  /**
   * Base word vectors for the libraries' own dense spaces (`toolsel train --example-maps`,
   * example-dense-map.ts): each regime's library learns its space from that regime's examples
   * only (never a held-out query), and the decision reads EXAMPLE_DENSE_FEATURES too.
   */
  exampleMaps?: DenseToolVectors
  /** Boosted trees on the decision's models; default: logistic models alone. */
  trees?: DecisionTreeSettings
  onProgress?: (message: string) => void
}

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const right = new Set(b)
  return new Set(a).size === right.size && a.every((id) => right.has(id))
}

/**
 * A regime's usage examples: every `every`-th of the source's queries outside the held-out fold
 * (fold 0) whose gold tools are all in the library.
 */
export function regimeExamples(
  source: DecisionSource,
  library: ToolLibrary,
  seed: number,
  every: number,
): UsageExample[] {
  return source.cases
    .filter((trainingCase) => foldOf(trainingCase.id, seed) !== 0)
    .filter((_trainingCase, index) => index % every === 0)
    .filter((trainingCase) => trainingCase.gold.every((id) => library.has(id)))
    .map((trainingCase) => ({ instruction: trainingCase.instruction, tools: trainingCase.gold }))
}

/**
 * Answers `held` (queries of fold 0, or single-clause queries made from them) in a library whose
 * examples are every `every`-th of the source's queries of the other folds.
 */
async function heldQueries(
  source: DecisionSource,
  held: readonly TrainingCase[],
  model: LearnedModel,
  options: TrainDecisionOptions,
  every: number,
  spaces: Map<string, Promise<ExampleDenseSpace | undefined>>,
): Promise<{ queries: HeldQuery[]; examples: number }> {
  const library = new ToolLibrary(source.name, source.tools)
  const examples = regimeExamples(source, library, options.seed, every)
  const indexed = await buildIndexedLibrary(library, options.config, {
    retriever: 'bm25',
    examples: ExampleSet.of(examples, { cap: Math.max(1, examples.length) }),
  })
  const memory = exampleMemoryFor(indexed.examples, options.config.examples)
  if (!memory || !memoryTrusted(memory.memory, memory.options))
    return { queries: [], examples: examples.length }
  const { selector, probabilities } = capturingProbabilities(
    new LearnedSelector({ ...model, examples: undefined }),
  )
  const planner = trainingPlanner(options.config.plan.maxSteps)
  const retriever = indexed.retrievers.get('bm25')!
  const dense = options.exampleMaps
  const spaceKey = `${source.name}/${every}`
  if (dense && !spaces.has(spaceKey)) {
    spaces.set(
      spaceKey,
      learnExampleMap(source.tools, examples, dense).then(({ map, check }) => {
        options.onProgress?.(
          `example map ${spaceKey}: held-out top-1 ${check?.untrained} → ${check?.trained}${map ? '' : ' (not used)'}`,
        )
        return map && new ExampleDenseSpace(source.tools, map, dense)
      }),
    )
  }
  const space = await spaces.get(spaceKey)
  const out: HeldQuery[] = []
  for (const trainingCase of held) {
    const result = await selectTools(trainingCase.instruction, {
      library,
      planner,
      retriever,
      selector,
      k: options.k,
      examples: memory,
    })
    const answer = result.tools.map((tool) => tool.id)
    const chosen = [
      ...new Set(result.steps.flatMap((step) => (step.selected === null ? [] : [step.selected]))),
    ]
    const query: HeldQuery = { id: trainingCase.id, gold: trainingCase.gold, answer, weight: 0 }
    if (chosen.length > 0) {
      query.input = {
        chosen,
        probabilities: probabilities(),
        stepTops: new Set(result.steps.flatMap((step) => step.candidates[0]?.id ?? [])),
        neighbors: withWordPairs(memory.memory).neighbors(
          trainingCase.instruction,
          DECISION_NEIGHBORS,
        ),
        proposal: result.examples?.applied ? answer : undefined,
        examples: memory.memory.size,
        steps: result.steps.filter((step) => !step.whole).length,
        words: instructionWords(trainingCase.instruction),
        namespaceOf: (id) => library.get(id)?.namespace,
        cooccurrence: toolCooccurrence(memory.memory),
        ...(space && { dense: space.score(trainingCase.instruction, DENSE_POOL) }),
      }
      query.rows = exampleDecisionRows(query.input, dense !== undefined)
    }
    out.push(query)
  }
  const weight = 10_000 / Math.max(1, out.filter((query) => query.rows).length)
  for (const query of out) query.weight = weight
  return { queries: out, examples: memory.memory.size }
}

/**
 * The libraries each source's held-out queries are answered in: with all its other queries as
 * examples, every 4th and every 20th of them (libraries with fewer examples, whose neighbours are
 * rarely paraphrases). The decision is used only from the smallest example count at which it beat
 * the memory's answer in every regime at or above it (`minExamples`).
 */
export const EXAMPLE_REGIMES: ReadonlyArray<readonly [string, number]> = [
  ['', 1],
  ['-quarter', 4],
  ['-sparse', 20],
]

interface Fitted {
  model: LogisticModel
  setModel: LogisticModel
  trees?: TreeEnsemble
  setTrees?: TreeEnsemble
}

/**
 * Boosted trees on top of the decision's logistic models (boosted-trees.ts), each splitting on
 * all of its model's features; a model without settings stays logistic.
 */
/**
 * Trees fitted on `model`'s log-odds over `rows` (the model rounded as the file stores it, so
 * that training and serving agree); undefined without settings.
 */
function fitTrees(
  model: LogisticModel,
  rows: number[][],
  labels: number[],
  weights: number[],
  settings: TreeSettings | undefined,
): TreeEnsemble | undefined {
  if (!settings) return undefined
  const features = model.weights.map((_weight, index) => index)
  return fitTreesOnModel(rows, labels, model, settings, features, weights)
}

/**
 * Fits the per-tool model, then the set model on the sets its scores make (with trees, each
 * logistic model is rounded as stored and the trees fitted on its log-odds).
 */
function fit(
  queries: readonly HeldQuery[],
  settings: DecisionTreeSettings = {},
  progress?: (stage: string) => void,
): Fitted | undefined {
  const withRows = queries.filter((query) => query.rows && query.rows.ids.length > 0)
  const rows: number[][] = []
  const labels: number[] = []
  const weights: number[] = []
  for (const query of withRows) {
    const gold = new Set(query.gold)
    query.rows!.ids.forEach((id, index) => {
      rows.push(query.rows!.x[index])
      labels.push(gold.has(id) ? 1 : 0)
      weights.push(query.weight)
    })
  }
  if (rows.length === 0) return undefined
  progress?.(`tool model, ${rows.length} rows`)
  const logistic = fitLogistic(rows, labels, { l2: 1, rowWeights: weights })
  const model = settings.tool ? roundedModel(logistic) : logistic
  const trees = fitTrees(model, rows, labels, weights, settings.tool)
  const setRows: number[][] = []
  const setLabels: number[] = []
  const setWeights: number[] = []
  for (const query of withRows) {
    for (const candidate of candidateSets(query.input!, rankTools(model, query.rows!, trees))) {
      setRows.push(candidate.x)
      setLabels.push(sameSet(candidate.tools, query.gold) ? 1 : 0)
      setWeights.push(query.weight)
    }
  }
  progress?.(`set model, ${setRows.length} rows`)
  const setLogistic = fitLogistic(setRows, setLabels, { l2: 1, rowWeights: setWeights })
  const setModel = settings.set ? roundedModel(setLogistic) : setLogistic
  const setTrees = fitTrees(setModel, setRows, setLabels, setWeights, settings.set)
  return { model, setModel, ...(trees && { trees }), ...(setTrees && { setTrees }) }
}

/** The decision's answer for a held query (the earlier answer when it had no rows). */
function decided(fitted: Fitted | undefined, query: HeldQuery): readonly string[] {
  if (!fitted || !query.rows) return query.answer
  const ranked = rankTools(fitted.model, query.rows, fitted.trees)
  return pickSet(fitted.setModel, candidateSets(query.input!, ranked), fitted.setTrees)
}

/** One training source's held-out queries in one example regime. */
export interface HeldSet {
  name: string
  queries: HeldQuery[]
  examples: number
}

/**
 * Each source's held-out queries (and, where asked, their single-clause queries) answered in
 * every example regime (EXAMPLE_REGIMES): the decision's training data.
 */
export async function heldSets(
  sources: readonly DecisionSource[],
  model: LearnedModel,
  options: TrainDecisionOptions,
): Promise<HeldSet[]> {
  const sets: HeldSet[] = []
  const spaces = new Map<string, Promise<ExampleDenseSpace | undefined>>()
  for (const source of sources) {
    const held = source.cases.filter((trainingCase) => foldOf(trainingCase.id, options.seed) === 0)
    const kinds: Array<[string, readonly TrainingCase[]]> = [['', held]]
    if (source.singleClauses) {
      const single = singleClauseCases(source.tools, held, {
        bm25: bm25Settings(options.config),
        k: options.k,
        maxSteps: options.config.plan.maxSteps,
        tau: options.config.retrieve.bm25.tau,
      })
      kinds.push(['-single', single])
    }
    for (const [kind, cases] of kinds) {
      for (const [regime, every] of EXAMPLE_REGIMES) {
        const { queries, examples } = await heldQueries(
          source,
          cases,
          model,
          options,
          every,
          spaces,
        )
        const name = `${source.name}${kind}${regime}`
        sets.push({ name, queries, examples })
        options.onProgress?.(
          `example decision, ${name}: ${queries.length} held-out quer${queries.length === 1 ? 'y' : 'ies'}, the memory's set for ${queries.filter((query) => query.input?.proposal).length}`,
        )
      }
    }
  }
  return sets
}

/**
 * Fits the decision on `sets`: the held-out exact match per set (2-fold over the queries), the
 * smallest example count from which the decision never lost to the memory's answer, and the
 * models fitted on all the queries (undefined when no query gave a row).
 */
export function fitDecision(
  sets: readonly HeldSet[],
  seed: number,
  settings: DecisionTreeSettings = {},
  onProgress?: (message: string) => void,
): {
  heldOut: NonNullable<LearnedModel['examples']>['heldOut']
  minExamples: number | undefined
  fitted: Fitted | undefined
} {
  // The fold hash's parity: what `seed + 3` gave the default seed (and every seed up to 6)
  // before foldHash told one-digit seeds apart; kept so that the default's halves stay.
  const half = (query: HeldQuery) => foldHash(query.id, seed) % 2
  const all = sets.flatMap((set) => set.queries)
  // Six fits of minutes in all on the benchmark splits: each announced, so the run is seen to move.
  const started = performance.now()
  const progress = (part: string) => (stage: string) =>
    onProgress?.(
      `example decision: fitting ${part}: ${stage} (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    )
  const halves = [0, 1].map((side) =>
    fit(
      all.filter((query) => half(query) !== side),
      settings,
      progress(`half ${side + 1} of 2 for the held-out check`),
    ),
  )
  const heldOut = sets
    .filter((set) => set.queries.length > 0)
    .map(({ name, queries, examples }) => {
      const percent = (hits: number) => Math.round((10_000 * hits) / queries.length) / 100
      return {
        name,
        queries: queries.length,
        examples,
        memory: percent(queries.filter((query) => sameSet(query.answer, query.gold)).length),
        decision: percent(
          queries.filter((query) => sameSet(decided(halves[half(query)], query), query.gold))
            .length,
        ),
      }
    })
  // The smallest example count from which the decision never lost to the memory's answer.
  const minExamples = [...new Set(heldOut.map((split) => split.examples))]
    .sort((a, b) => a - b)
    .find((count) =>
      heldOut.every((split) => split.examples < count || split.decision >= split.memory),
    )
  return { heldOut, minExamples, fitted: fit(all, settings, progress('every query')) }
}

/**
 * The example-aware decision for `model`, or undefined when no source gave a row (no source's
 * memory passed its self-check, or every held-out query got the memory's set).
 */
export async function trainExampleDecision(
  sources: readonly DecisionSource[],
  model: LearnedModel,
  options: TrainDecisionOptions,
): Promise<LearnedModel['examples']> {
  const { heldOut, minExamples, fitted } = fitDecision(
    await heldSets(sources, model, options),
    options.seed,
    options.trees,
    options.onProgress,
  )
  options.onProgress?.(
    minExamples === undefined
      ? 'example decision: it lost to the memory at every example count; not used'
      : `example decision: used from ${minExamples} example${minExamples === 1 ? '' : 's'}`,
  )
  if (!fitted || minExamples === undefined) return undefined
  return {
    features: [
      ...EXAMPLE_DECISION_FEATURES,
      ...(options.exampleMaps ? EXAMPLE_DENSE_FEATURES : []),
    ],
    model: roundedModel(fitted.model),
    setFeatures: [...EXAMPLE_SET_FEATURES],
    setModel: roundedModel(fitted.setModel),
    ...(fitted.trees && { trees: fitted.trees }),
    ...(fitted.setTrees && { setTrees: fitted.setTrees }),
    minExamples,
    heldOut,
  }
}

/**
 * `inner`, asked for its candidates' probabilities on every call (as the pipeline asks when the
 * example-aware decision runs); `probabilities()` reads the last call's, by candidate id.
 */
export function capturingProbabilities(inner: Selector): {
  selector: Selector
  probabilities: () => Map<string, number>
} {
  let selections: Selection[] = []
  const selector: Selector = {
    name: inner.name,
    wholeInstructionStep: inner.wholeInstructionStep,
    retrievalMinScore: inner.retrievalMinScore,
    select: async (requests, options) =>
      (selections = await inner.select(requests, { ...options, probabilities: true })),
  }
  return { selector, probabilities: () => selectionProbabilities(selections) }
}
