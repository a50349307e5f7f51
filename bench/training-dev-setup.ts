/**
 * What the held-out scripts on TRAINING data share (bench/shape-count-dev.ts,
 * bench/one-clause-dev.ts): `toolsel train`'s sources (ToolPlanner G3 and ToolLens train, plus
 * TaskBench's count-only shape requests unless `shapes: false`) and its recipe's base options;
 * and the shipped recipe fitted on folds 1-4 (`shippedRecipeFit`: bench/selection-errors-dev.ts,
 * bench/word-order-dev.ts, bench/bagged-dev.ts), its rows alone (`shippedRecipeRows`: bench/ql-dev.ts)
 * every set's cases (`trainingSetCases`), candidate columns appended to the rows (`appendColumns`:
 * bench/ql-dev.ts; `fitVariants`, which fits once per set of appended columns, and
 * `foldZeroColumnMeans`: bench/coherence-dev.ts, bench/library-prior-dev.ts) and a fit's held-out
 * report (`reportFit`).
 * @module
 */
import { usageError } from './bench-args.ts'
import { parseConfig } from '../src/config/load-config.ts'
import { denseToolVectors } from '../src/learn/dense-encoder.ts'
import {
  composeCases,
  decisionInput,
  fitTrainingSets,
  foldOf,
  score,
  taskbenchShapeSources,
  trainingSets,
  type TrainOptions,
  type TrainingSource,
} from '../src/learn/train-model.ts'
import { mostProbableFirst } from '../src/learn/decide-set.ts'
import { decideTools } from '../src/learn/count-model.ts'
import { singleClauseCases } from '../src/learn/training-rows.ts'
import { trainingPlanner } from '../src/plan/rule-planner.ts'
import { loadToolLensTrain, loadToolPlannerG3 } from '../src/learn/training-data.ts'
import { bm25Settings } from '../src/store/kinds/bm25-kind.ts'

export async function trainingDevSetup(dataDir: string, seed: number, { shapes = true } = {}) {
  const config = parseConfig({ bench: { dataDir } })
  const sources: TrainingSource[] = [
    { ...(await loadToolPlannerG3(dataDir)), singleClauses: true },
    { ...(await loadToolLensTrain(dataDir)), singleClauses: false },
  ]
  if (shapes) sources.push(...(await taskbenchShapeSources(dataDir)))
  const base = {
    bm25: bm25Settings(config),
    seed,
    k: 15,
    maxSteps: config.plan.maxSteps,
    tau: config.retrieve.bm25.tau,
  }
  return { sources, base }
}

/**
 * The shipped recipe's options (`toolsel train --learned-dense --dense-free-acceptance`, no
 * TaskBench shapes) and every training set's rows on the training sources (bench/ql-dev.ts adds
 * columns to them before fitting). Prints the timing.
 */
export async function shippedRecipeRows(
  dataDir: string,
  seed: number,
  extra: Pick<TrainOptions, 'described'> = {},
) {
  const { sources, base } = await trainingDevSetup(dataDir, seed, { shapes: false })
  const dense = await denseToolVectors()
  if (dense === undefined) throw new Error('No static word vectors (npm ci).')
  const options = { ...base, dense, learnDense: {}, acceptance: true, ...extra }
  const started = performance.now()
  const rows = trainingSets(sources, options)
  console.log(`rows built in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  return { sources, base, options, rows }
}

/**
 * The shipped recipe on the training sources (`shippedRecipeRows`): every set's rows, and the
 * model fitted on folds 1-4 of `seed` (its decision rule and count chosen on fold 0, as
 * `toolsel train` does). Prints both timings.
 */
export async function shippedRecipeFit(dataDir: string, seed: number) {
  const { sources, base, options, rows } = await shippedRecipeRows(dataDir, seed)
  const started = performance.now()
  const model = fitTrainingSets(rows, options)
  console.log(
    `fitted in ${((performance.now() - started) / 1000).toFixed(0)} s: rule ${JSON.stringify(model.rule)}, count ${model.count?.threshold} / ${model.count?.extendThreshold}`,
  )
  return { sources, base, rows, model }
}

/**
 * The cases of every training set `trainingSets` makes from `sources` (each source's own, and for
 * a source with `singleClauses` its single-clause and composed sets), by set name, with the
 * source they came from: the instruction texts the held-out scripts look at.
 */
export function trainingSetCases(
  sources: readonly TrainingSource[],
  recipe: Awaited<ReturnType<typeof trainingDevSetup>>['base'],
): Map<
  string,
  { source: TrainingSource; cases: ReadonlyArray<{ id: string; instruction: string }> }
> {
  const sets = new Map<
    string,
    { source: TrainingSource; cases: ReadonlyArray<{ id: string; instruction: string }> }
  >()
  for (const source of sources) {
    sets.set(source.name, { source, cases: source.cases })
    if (!source.singleClauses) continue
    const single = singleClauseCases(source.tools, source.cases, {
      bm25: recipe.bm25,
      k: recipe.k,
      maxSteps: recipe.maxSteps,
      tau: recipe.tau,
    })
    sets.set(`${source.name}-single`, { source, cases: single })
    sets.set(`${source.name}-composed`, { source, cases: composeCases(single, recipe.seed) })
  }
  return sets
}

/** A clause's two most probable candidates when exactly one of them is a gold tool. */
export interface RankedPair {
  /** The planner's clause the two were candidates of. */
  clause: string
  /** The gold tool of the two, and the other. */
  gold: string
  other: string
  /** `hit`: the model ranks the gold one first; `miss`: the other. */
  kind: 'hit' | 'miss'
  /** Whether their log-odds differ by less than 1 (a feature could flip them). */
  near: boolean
}

/**
 * Round 26's near-miss screen (bench/word-order-dev.ts, bench/ql-dev.ts): for `set`'s held-out
 * queries (fold 0 of `seed`) whose instruction (`instructionOf`) the planner splits into as many
 * clauses as the query has steps, each clause whose two most probable candidates under `model`
 * hold exactly one gold tool. `onQuery` sees every held-out query, with whether its clauses matched.
 */
export function* rankedPairs(
  set: ReturnType<typeof trainingSets>['sets'][number],
  model: ReturnType<typeof fitTrainingSets>,
  { seed, maxSteps }: { seed: number; maxSteps: number },
  instructionOf: (id: string) => string,
  onQuery: (matched: boolean) => void = () => {},
): Generator<RankedPair> {
  const planner = trainingPlanner(maxSteps)
  const logit = (p: number) => Math.log(Math.max(1e-6, p) / Math.max(1e-6, 1 - p))
  for (const query of set.queries) {
    if (foldOf(query.id, seed) !== 0) continue
    const clauses = planner.split(instructionOf(query.id))
    onQuery(clauses.length === query.steps)
    if (clauses.length !== query.steps) continue
    const p = new Map(score(model, query).map((c) => [c.id, c.p]))
    const gold = new Set(query.gold)
    for (const [index, list] of query.lists.slice(0, query.steps).entries()) {
      const [first, second] = [...new Set(list)].sort((a, b) =>
        mostProbableFirst({ id: a, p: p.get(a)! }, { id: b, p: p.get(b)! }),
      )
      if (second === undefined || gold.has(first) === gold.has(second)) continue
      const hit = gold.has(first)
      yield {
        clause: clauses[index],
        gold: hit ? first : second,
        other: hit ? second : first,
        kind: hit ? 'hit' : 'miss',
        near: Math.abs(logit(p.get(first)!) - logit(p.get(second)!)) < 1,
      }
    }
  }
}

/**
 * Prints a fit's rule, count thresholds and held-out exact match per set, as `toolsel train`'s
 * data card reports it; with `rows` whose vectors are wider than the model's named features, the
 * appended features' standardised weights too (bench/ql-dev.ts, bench/described-dev.ts).
 */
export function reportFit(
  label: string,
  model: ReturnType<typeof fitTrainingSets>,
  rows?: ReturnType<typeof trainingSets>,
) {
  const { weights } = model.model
  const width = rows?.sets
    .find((set) => set.queries.some((q) => q.x.length > 0))
    ?.queries.find((q) => q.x.length > 0)?.x[0].length
  if (width !== undefined && weights.length === width && width > model.features.length)
    console.log(
      `  appended features' standardised weights: ${weights.slice(model.features.length).join(', ')}`,
    )
  const splits = model.dataCard.heldOut.splits
    .map((split) => `${split.name} ${split.exactMatch.toFixed(2)} (${split.queries})`)
    .join(' | ')
  console.log(
    `${label}: rule ${JSON.stringify(model.rule)}, count ${model.count?.threshold} / ${model.count?.extendThreshold}`,
  )
  console.log(`  held-out EM: ${splits}`)
}

/**
 * Sets every query's candidate vectors to its vectors in `original` (the rows before any
 * appending, `set` by `set`, query by query) with `width` more columns each: `columnsOf`'s, or
 * zeros where it returns undefined (a set it has no data for, a query without candidates).
 * Called once per variant, so each variant appends to the shipped rows, not to the last one's.
 */
export function appendColumns(
  rows: ReturnType<typeof trainingSets>,
  original: ReadonlyArray<ReadonlyArray<ReadonlyArray<readonly number[]>>>,
  width: number,
  columnsOf: (
    set: ReturnType<typeof trainingSets>['sets'][number],
    query: ReturnType<typeof trainingSets>['sets'][number]['queries'][number],
  ) => ReadonlyArray<readonly number[]> | undefined,
): void {
  const zeros = new Array<number>(width).fill(0)
  rows.sets.forEach((set, s) => {
    set.queries.forEach((query, q) => {
      const x = original[s][q]
      const columns = x.length === 0 ? undefined : columnsOf(set, query)
      query.x = x.map((row, i) => [...row, ...(columns?.[i] ?? zeros)])
    })
  })
}

/**
 * Each gold-labelled set's appended columns (`columns`, `width` of them per candidate) averaged
 * over fold 0's gold candidates and over its other candidates (bench/coherence-dev.ts,
 * bench/library-prior-dev.ts): how far a feature tells the two apart before any fit.
 */
export function foldZeroColumnMeans(
  rows: ReturnType<typeof trainingSets>,
  columns: ReadonlyMap<
    ReturnType<typeof trainingSets>['sets'][number]['queries'][number],
    ReadonlyArray<readonly number[]>
  >,
  seed: number,
  width: number,
): Array<{ set: string; gold: number; other: number; means: { gold: number[]; other: number[] } }> {
  return rows.sets
    .filter((set) => !set.countOnly)
    .map((set) => {
      const sum = {
        gold: new Array<number>(width).fill(0),
        other: new Array<number>(width).fill(0),
      }
      const total = { gold: 0, other: 0 }
      for (const query of set.queries) {
        const values = columns.get(query)
        if (foldOf(query.id, seed) !== 0 || values === undefined) continue
        const gold = new Set(query.gold)
        query.ids.forEach((id, i) => {
          const side = gold.has(id) ? 'gold' : 'other'
          total[side] += 1
          values[i].forEach((value, f) => (sum[side][f] += value))
        })
      }
      const mean = (side: 'gold' | 'other') => sum[side].map((s) => s / Math.max(1, total[side]))
      return { set: set.name, ...total, means: { gold: mean('gold'), other: mean('other') } }
    })
}

/**
 * The shipped recipe fitted on `rows` as they are (unless `skipBase`; `afterBase` sees that model),
 * then once per variant with its picked `columns` appended (`appendColumns`), each fit reported
 * (`reportFit`) with its timing (bench/coherence-dev.ts, bench/library-prior-dev.ts).
 */
export function fitVariants(
  rows: ReturnType<typeof trainingSets>,
  options: TrainOptions,
  columns: ReadonlyMap<
    ReturnType<typeof trainingSets>['sets'][number]['queries'][number],
    ReadonlyArray<readonly number[]>
  >,
  variants: ReadonlyArray<{ label: string; picked: readonly number[] }>,
  {
    skipBase = false,
    afterBase,
  }: { skipBase?: boolean; afterBase?: (model: ReturnType<typeof fitTrainingSets>) => void } = {},
): void {
  const fit = (label: string) => {
    const started = performance.now()
    const model = fitTrainingSets(rows, options)
    reportFit(label, model, rows)
    console.log(`fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    return model
  }
  if (!skipBase) afterBase?.(fit('shipped features'))
  const original = rows.sets.map((set) => set.queries.map((query) => query.x))
  for (const { label, picked } of variants) {
    appendColumns(rows, original, picked.length, (_set, query) =>
      columns.get(query)?.map((values) => picked.map((f) => values[f])),
    )
    fit(label)
  }
}

/**
 * `--variants` (a comma-separated list of `variants`' keys), checked (a bad one is a usage error):
 * each variant's label and the places of its features in `names`, as `fitVariants` takes them.
 */
export function pickVariants(
  scriptUrl: string,
  list: string,
  variants: Readonly<Record<string, readonly string[]>>,
  names: readonly string[],
): Array<{ label: string; picked: number[] }> {
  return list.split(',').map((variant) => {
    const features = variants[variant]
    if (features === undefined)
      usageError(
        scriptUrl,
        `--variants: unknown variant ${JSON.stringify(variant)} (${Object.keys(variants).join(', ')})`,
      )
    return {
      label: `+ ${features.join(', ')}`,
      picked: features.map((name) => names.indexOf(name)),
    }
  })
}

const CENSUS_CLASSES = ['exact', 'a:too-many', 'b:too-few', 'c:not-picked', 'd:no-list'] as const
const CENSUS_EXTRA = [
  'planner≠gold (a/b)',
  'no-list(any)',
  'c:rank-2',
  'count-oracle',
  'pool-oracle',
]

/**
 * bench/error-census-dev.ts's table (round 51): each gold-labelled set's held-out queries (fold 0
 * of `seed`) under `model`'s decision, each miss in one class (too many tools, too few, right
 * count with a gold tool a candidate not picked, right count with a gold tool in no list), as %
 * of the set's queries, with counts of the side classes and two oracles.
 */
export function errorCensus(
  rows: ReturnType<typeof trainingSets>,
  model: ReturnType<typeof fitTrainingSets>,
  seed: number,
): void {
  const pct = (n: number, of: number) => ((100 * n) / Math.max(1, of)).toFixed(1)
  const columns = [...CENSUS_CLASSES, ...CENSUS_EXTRA]
  console.log(`| set | held-out queries | ${columns.join(' | ')} |`)
  console.log(`| --- | ---: | ${columns.map(() => '---:').join(' | ')} |`)
  for (const set of rows.sets) {
    if (set.countOnly) continue
    const counts = new Map<string, number>()
    const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1)
    let queries = 0
    for (const query of set.queries) {
      if (foldOf(query.id, seed) !== 0) continue
      queries += 1
      const scored = score(model, query)
      const input = decisionInput(query, scored)
      const picks = new Set(
        decideTools(input, model.rule, model.count).filter((id): id is string => id !== null),
      )
      const gold = new Set(query.gold)
      const pool = new Set(query.ids)
      const top = [...scored].sort(mostProbableFirst).slice(0, gold.size)
      if (top.every((candidate) => gold.has(candidate.id))) bump('count-oracle')
      if ([...gold].every((id) => pool.has(id))) bump('pool-oracle')
      const wrong = [...picks].filter((id) => !gold.has(id))
      const left = [...gold].filter((id) => !picks.has(id))
      if (wrong.length === 0 && left.length === 0) {
        bump('exact')
        continue
      }
      const noList = left.some((id) => !pool.has(id))
      if (noList) bump('no-list(any)')
      if (picks.size !== gold.size) {
        bump(picks.size > gold.size ? 'a:too-many' : 'b:too-few')
        if (query.steps !== gold.size) bump('planner≠gold (a/b)')
        continue
      }
      if (noList) {
        bump('d:no-list')
        continue
      }
      bump('c:not-picked')
      const p = new Map(scored.map((candidate) => [candidate.id, candidate.p]))
      const rank2 = input.clauses.some((list) => {
        const [first, second] = [...new Set(list)].sort((x, y) =>
          mostProbableFirst({ id: x, p: p.get(x) ?? 0 }, { id: y, p: p.get(y) ?? 0 }),
        )
        return wrong.includes(first) && second !== undefined && left.includes(second)
      })
      if (rank2) bump('c:rank-2')
    }
    const misses = queries - (counts.get('exact') ?? 0)
    const cells = [
      ...CENSUS_CLASSES.map((key) => pct(counts.get(key) ?? 0, queries)),
      ...CENSUS_EXTRA.map((key) => `${counts.get(key) ?? 0}`),
    ]
    console.log(`| ${set.name} | ${queries} | ${cells.join(' | ')} |`)
    console.log(
      `  share of misses (${misses}): ${CENSUS_CLASSES.slice(1)
        .map((key) => `${key} ${pct(counts.get(key) ?? 0, misses)}%`)
        .join(', ')}`,
    )
  }
}
