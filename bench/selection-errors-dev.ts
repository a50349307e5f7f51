/**
 * Where the learned selector's held-out misses are (#10, round 20), on TRAINING data only: the
 * shipped recipe (`toolsel train --learned-dense --dense-free-acceptance`, no TaskBench shapes)
 * fitted on folds 1-4 of `--seed`, its decision scored on fold 0 of ToolPlanner G3, its
 * single-clause and composed sets and ToolLens train, as the data card's held-out figures are.
 * Each miss is put in one class:
 *
 * - `missing`: the answer is a strict subset of the gold set (too few tools, every pick right);
 * - `extra`: a strict superset (every gold tool picked, plus others);
 * - `swap`: as many tools as gold, at least one wrong;
 * - `short-wrong` / `long-wrong`: fewer / more tools than gold, at least one wrong;
 *
 * Each pick is counted by where it came from (`picks:threshold`, `picks:floor`: the rule's
 * per-clause floor, `picks:extension`: the count's extension) and how many of those are gold
 * (`:gold`); each wrong pick of a miss by the same origins (`wrong-pick-…`), and as `rank-2` when a
 * gold tool left out is the next most probable candidate of a clause whose most probable candidate
 * the wrong pick is (a choice between a clause's first two). `variant:…` are the exact matches
 * without the count's extension, and without the per-clause floor (which also turns the extension
 * off). Then a pairwise second stage is tried (round 20, dropped): a logistic model over the
 * feature differences (and the log-odds difference) of each clause's two most probable candidates,
 * fitted on folds 1-4 where exactly one of the two is gold, swapping the two when it says the
 * second is gold with probability >= the cut.
 *
 *   npx tsx bench/selection-errors-dev.ts [--data ../shared/data] [--seed 1]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'
import type { DecisionInput } from '../src/learn/count-model.ts'
import type { ScoredCandidate } from '../src/learn/decide-set.ts'
import type { QueryRows } from '../src/learn/training-rows.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { decideTools } = await import('../src/learn/count-model.ts')
const { decideSet, mostProbableFirst } = await import('../src/learn/decide-set.ts')
const { fitLogistic, predictProbability } = await import('../src/learn/logistic-regression.ts')
const { decisionInput, foldOf, score } = await import('../src/learn/train-model.ts')
const { shippedRecipeFit } = await import('./training-dev-setup.ts')
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const { rows, model } = await shippedRecipeFit(values.data!, seed)

const logit = (p: number) => Math.log(Math.max(1e-6, p) / Math.max(1e-6, 1 - p))
const byProbability = (scored: readonly ScoredCandidate[]) => {
  const p = new Map(scored.map((candidate) => [candidate.id, candidate.p]))
  return (list: readonly string[]) =>
    [...list].sort((a, b) =>
      mostProbableFirst({ id: a, p: p.get(a) ?? 0 }, { id: b, p: p.get(b) ?? 0 }),
    )
}
/** A clause's first two candidates by probability, as one pairwise row (first minus second). */
function pairRow(
  query: QueryRows,
  scored: readonly ScoredCandidate[],
  first: string,
  second: string,
) {
  const i = query.ids.indexOf(first)
  const j = query.ids.indexOf(second)
  const pi = scored[i].p
  const pj = scored[j].p
  return [...query.x[i].map((value, index) => value - query.x[j][index]), logit(pi) - logit(pj)]
}
// Pairwise second stage (experiment): on the training folds, each clause's two most probable
// candidates where exactly one is gold; label 1 when the second is.
const pairRows: number[][] = []
const pairLabels: number[] = []
const pairWeights: number[] = []
for (const set of rows.sets) {
  if (set.countOnly) continue
  const start = pairRows.length
  for (const query of set.queries) {
    if (foldOf(query.id, seed) === 0) continue
    const scored = score(model, query)
    const order = byProbability(scored)
    const gold = new Set(query.gold)
    for (const list of query.lists.slice(0, query.steps)) {
      const [first, second] = order(list)
      if (second === undefined || gold.has(first) === gold.has(second)) continue
      pairRows.push(pairRow(query, scored, first, second))
      pairLabels.push(gold.has(second) ? 1 : 0)
    }
  }
  const n = pairRows.length - start
  for (let index = 0; index < n; index += 1) pairWeights.push(10_000 / Math.max(1, n))
  console.log(
    `pairs ${set.name}: ${n}, second is gold in ${pairLabels.slice(start).reduce((a, b) => a + b, 0)}`,
  )
}
const pairModel = fitLogistic(pairRows, pairLabels, { rowWeights: pairWeights })
console.log(
  `pair weights: ${pairModel.weights.map((w) => w.toFixed(2)).join(' ')} bias ${pairModel.bias.toFixed(2)}`,
)

/** `scored` with each clause's first two swapped when the pairwise stage says so at `cut`. */
function pairwise(query: QueryRows, scored: ScoredCandidate[], cut: number): ScoredCandidate[] {
  const out = scored.map((candidate) => ({ ...candidate }))
  const order = byProbability(scored)
  for (const list of query.lists.slice(0, query.steps)) {
    const [first, second] = order(list)
    if (second === undefined) continue
    if (predictProbability(pairModel, pairRow(query, scored, first, second)) < cut) continue
    const a = out[query.ids.indexOf(first)]
    const b = out[query.ids.indexOf(second)]
    ;[a.p, b.p] = [b.p, a.p]
    ;[a.a, b.a] = [b.a, a.a]
  }
  return out
}
for (const cut of [0.5, 0.6, 0.7]) {
  const cells: string[] = []
  for (const set of rows.sets) {
    if (set.countOnly) continue
    let base = 0
    let variant = 0
    let n = 0
    for (const query of set.queries) {
      if (foldOf(query.id, seed) !== 0) continue
      const scored = score(model, query)
      const gold = new Set(query.gold)
      const exact = (s: ScoredCandidate[]) => {
        const placed = decideTools(decisionInput(query, s), model.rule, model.count).filter(
          (id): id is string => id !== null,
        )
        return Number(new Set(placed).size === gold.size && placed.every((id) => gold.has(id)))
      }
      base += exact(scored)
      variant += exact(pairwise(query, scored, cut))
      n += 1
    }
    cells.push(`${set.name} ${base} -> ${variant} of ${n}`)
  }
  console.log(`pairwise cut ${cut}: ${cells.join('; ')}`)
}

type Counts = Record<string, number>
const bump = (counts: Counts, key: string) => (counts[key] = (counts[key] ?? 0) + 1)

for (const set of rows.sets) {
  if (set.countOnly) continue
  const counts: Counts = {}
  for (const query of set.queries) {
    if (foldOf(query.id, seed) !== 0) continue
    const scored = score(model, query)
    const input: DecisionInput = decisionInput(query, scored)
    const placed = decideTools(input, model.rule, model.count).filter(
      (id): id is string => id !== null,
    )
    const picks = new Set(placed)
    const gold = new Set(query.gold)
    bump(counts, 'queries')
    const exactOf = (ids: ReadonlyArray<string | null>) => {
      const set = new Set(ids.filter((id): id is string => id !== null))
      return set.size === gold.size && [...set].every((id) => gold.has(id))
    }
    if (
      model.count &&
      exactOf(decideTools(input, model.rule, { ...model.count, extendThreshold: undefined }))
    )
      bump(counts, 'variant:no-extension:exact')
    if (exactOf(decideTools(input, { ...model.rule, stepFloor: 0 }, model.count)))
      bump(counts, 'variant:no-floor-no-extension:exact')
    // Where each pick came from: the rule's threshold, its per-clause floor, or the count's
    // extension (decideSet without and with stepFloor; the rest).
    const thresholdOnly = new Set(
      decideSet(scored, query.steps, { ...model.rule, stepFloor: 0 }, query.stepTops),
    )
    const ruleSet = new Set(decideSet(scored, query.steps, model.rule, query.stepTops))
    const originOf = (id: string) =>
      thresholdOnly.has(id) ? 'threshold' : ruleSet.has(id) ? 'floor' : 'extension'
    for (const id of picks) {
      bump(counts, `picks:${originOf(id)}`)
      if (gold.has(id)) bump(counts, `picks:${originOf(id)}:gold`)
    }
    const wrong = [...picks].filter((id) => !gold.has(id))
    const left = [...gold].filter((id) => !picks.has(id))
    if (wrong.length === 0 && left.length === 0) {
      bump(counts, 'exact')
      continue
    }
    const kind =
      wrong.length === 0
        ? 'missing'
        : left.length === 0
          ? 'extra'
          : picks.size === gold.size
            ? 'swap'
            : picks.size < gold.size
              ? 'short-wrong'
              : 'long-wrong'
    bump(counts, kind)
    if (left.length > 0 && left.every((id) => !query.ids.includes(id)))
      bump(counts, `${kind}:gold-not-candidate`)
    const order = byProbability(scored)
    for (const id of wrong) {
      bump(counts, `${kind}:wrong-pick-${originOf(id)}`)
      const clause = input.clauses.map(order).find((list) => list[0] === id)
      if (clause?.[1] !== undefined && left.includes(clause[1])) bump(counts, `${kind}:rank-2`)
    }
  }
  const total = counts.queries
  const lines = Object.entries(counts)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, n]) => `${key} ${n} (${((100 * n) / total).toFixed(1)}%)`)
  console.log(`== ${set.name}\n  ${lines.join('\n  ')}`)
}
