/**
 * A second retrieval model's score as a candidate feature (#10, round 37), on TRAINING data only:
 * query likelihood with Dirichlet smoothing (Zhai and Lafferty 2001), which weighs a tool's
 * length and its unmatched query terms differently from BM25's saturation and length norm. The
 * shipped recipe (`--learned-dense --dense-free-acceptance`, as bench/training-dev-setup.ts) is
 * fitted on folds 1-4 of `--seed` twice: on the shipped rows, and on the same rows with two
 * features appended to every candidate's vector:
 *
 * - `ql_whole_rel`: the whole instruction's query log-likelihood under the tool's smoothed
 *   language model minus the best over the query's candidates, per query term;
 * - `ql_step_rel`: the same for each planner clause, the best (largest) over the clauses.
 *
 * Rank-equivalent form: sum over query terms w held by the tool of log(1 + tf(w) / (mu p(w|C)))
 * + |q| log(mu / (|d| + mu)), with the tool's document its name, description and parameter text
 * (the BM25 tokenizer's terms) and p(w|C) over the library's tools; `mu` = the library's mean
 * document length times `--mu` (a list: one variant each). Prints the held-out (fold 0) exact
 * match per set of each fit, as `toolsel train`'s data card reports it.
 *
 *   npx tsx bench/ql-dev.ts [--data ../shared/data] [--seed 1] [--mu 1,0.3]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'
import type { TrainingSource } from '../src/learn/train-model.ts'
import type { Tool } from '../src/library/tool.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    mu: { type: 'string', default: '1,0.3' },
    dfr: { type: 'boolean', default: false },
    'skip-base': { type: 'boolean', default: false },
    ceiling: { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { fitTrainingSets } = await import('../src/learn/train-model.ts')
const { trainingPlanner } = await import('../src/plan/rule-planner.ts')
const { parameterText } = await import('../src/retrieve/bm25/bm25-document.ts')
const { tokenize } = await import('../src/retrieve/bm25/tokenize.ts')
const { appendColumns, rankedPairs, reportFit, shippedRecipeRows, trainingSetCases } =
  await import('./training-dev-setup.ts')
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const mus = values.mu!.split(',').map(Number)
const { sources, base, options, rows } = await shippedRecipeRows(values.data!, seed)
let started = performance.now()

/** A library's smoothed-language-model statistics. */
interface Library {
  byId: Map<string, Tool>
  docs: Map<string, { tf: Map<string, number>; length: number }>
  collection: Map<string, number>
  /** Tools holding each term (DFR's n_t). */
  df: Map<string, number>
  tools: number
  total: number
  meanLength: number
}
function library(tools: readonly Tool[]): Library {
  const docs = new Map<string, { tf: Map<string, number>; length: number }>()
  const collection = new Map<string, number>()
  const df = new Map<string, number>()
  let total = 0
  for (const tool of tools) {
    const terms = [
      ...tokenize(tool.name),
      ...tokenize(tool.description),
      ...tokenize(parameterText(tool.parameters)),
    ]
    const tf = new Map<string, number>()
    for (const term of terms) {
      tf.set(term, (tf.get(term) ?? 0) + 1)
      collection.set(term, (collection.get(term) ?? 0) + 1)
    }
    for (const term of tf.keys()) df.set(term, (df.get(term) ?? 0) + 1)
    total += terms.length
    docs.set(tool.id, { tf, length: terms.length })
  }
  return {
    byId: new Map(tools.map((tool) => [tool.id, tool])),
    docs,
    collection,
    df,
    tools: tools.length,
    total,
    meanLength: total / Math.max(1, tools.length),
  }
}
function logLikelihood(lib: Library, terms: readonly string[], id: string, mu: number): number {
  const doc = lib.docs.get(id)!
  let sum = terms.length * Math.log(mu / (doc.length + mu))
  for (const term of terms) {
    const tf = doc.tf.get(term)
    if (tf === undefined) continue
    sum += Math.log(1 + tf / ((mu * lib.collection.get(term)!) / lib.total))
  }
  return sum
}
/**
 * DFR In_expB2 (Amati and van Rijsbergen 2002), normalisation 2 with c = 1: a third weighting of
 * tf and length (`--dfr`: one more variant, `mu` ignored).
 */
function dfr(lib: Library, terms: readonly string[], id: string): number {
  const doc = lib.docs.get(id)!
  const n = lib.tools
  let sum = 0
  for (const term of terms) {
    const tf = doc.tf.get(term)
    if (tf === undefined) continue
    const tfn = tf * Math.log2(1 + lib.meanLength / Math.max(1, doc.length))
    const f = lib.collection.get(term)!
    const ne = n * (1 - Math.pow(1 - 1 / n, f))
    sum += ((f + 1) / (lib.df.get(term)! * (tfn + 1))) * tfn * Math.log2((n + 1) / (ne + 0.5))
  }
  return sum
}
/** Each candidate's score minus the best, per query term (0 for an empty query). */
function relative(lib: Library, text: string, ids: readonly string[], mu: number): number[] {
  const terms = tokenize(text)
  if (terms.length === 0) return ids.map(() => 0)
  const scores = ids.map((id) =>
    mu === 0 ? dfr(lib, terms, id) : logLikelihood(lib, terms, id, mu),
  )
  const best = Math.max(...scores)
  return scores.map((s) => (s - best) / terms.length)
}

// Instruction texts of every set (the same cases trainingSets makes) and their libraries.
const texts = new Map<string, Map<string, string>>()
const libraryOf = new Map<string, Library>()
const libraries = new Map<TrainingSource, Library>()
for (const [name, { source, cases }] of trainingSetCases(sources, base)) {
  if (!libraries.has(source)) libraries.set(source, library(source.tools))
  texts.set(name, new Map(cases.map((c) => [c.id, c.instruction])))
  libraryOf.set(name, libraries.get(source)!)
}
const planner = trainingPlanner(base.maxSteps)

const report = (label: string, model: ReturnType<typeof fitTrainingSets>) =>
  reportFit(label, model, rows)

if (!values['skip-base'] || values.ceiling) {
  started = performance.now()
  const model = fitTrainingSets(rows, options)
  report('base', model)
  console.log(`fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  if (values.ceiling) ceiling(model)
}

/**
 * `--ceiling` (round 26's screen, bench/word-order-dev.ts): on fold 0, every clause whose two most
 * probable candidates hold exactly one gold tool is a `miss` (the first is wrong) or a `hit`;
 * whether the clause's QL (mu = mean length) or DFR score puts the gold tool above the other
 * (right), below (wrong) or level, for all pairs and near ones (|log-odds difference| < 1).
 */
function ceiling(model: ReturnType<typeof fitTrainingSets>) {
  for (const set of rows.sets) {
    if (set.countOnly) continue
    const lib = libraryOf.get(set.name)!
    const text = texts.get(set.name)!
    const counts: Record<string, number> = {}
    const bump = (key: string) => (counts[key] = (counts[key] ?? 0) + 1)
    for (const { clause, gold, other, kind, near } of rankedPairs(set, model, base, (id) =>
      text.get(id)!,
    )) {
      const terms = tokenize(clause)
      const sides = {
        ql:
          logLikelihood(lib, terms, gold, lib.meanLength) -
          logLikelihood(lib, terms, other, lib.meanLength),
        dfr: dfr(lib, terms, gold) - dfr(lib, terms, other),
      }
      for (const scope of near ? ['all', 'near'] : ['all']) {
        bump(`${kind}:${scope}`)
        for (const [name, d] of Object.entries(sides))
          bump(`${kind}:${scope}:${name}:${d > 1e-9 ? 'right' : d < -1e-9 ? 'wrong' : 'tie'}`)
      }
    }
    console.log(`== ${set.name} (fold 0)`)
    for (const key of Object.keys(counts).sort()) console.log(`  ${key} ${counts[key]}`)
  }
}

const original = rows.sets.map((set) => set.queries.map((query) => query.x))
for (const mu of values.ceiling ? [] : values.dfr ? [...mus, 0] : mus) {
  appendColumns(rows, original, 2, (set, query) => {
    const lib = libraryOf.get(set.name)
    if (lib === undefined) return undefined
    const instruction = texts.get(set.name)!.get(query.id)!
    const m = lib.meanLength * mu // 0: DFR
    const whole = relative(lib, instruction, query.ids, m)
    const step = query.ids.map(() => -Infinity)
    for (const clause of planner.split(instruction)) {
      relative(lib, clause, query.ids, m).forEach((value, i) => {
        if (value > step[i]) step[i] = value
      })
    }
    return query.ids.map((_id, i) => [whole[i], Number.isFinite(step[i]) ? step[i] : 0])
  })
  started = performance.now()
  report(mu === 0 ? 'dfr In_expB2' : `ql mu=${mu}*mean`, fitTrainingSets(rows, options))
  console.log(`fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}
