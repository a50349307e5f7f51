/**
 * The learned selector's decision (learn/count-model.ts `decideTools`) against variants, on
 * TRAINING data only: the rows `toolsel train` builds (ToolPlanner G3 minus every G3 test query,
 * its single-clause and composed sets, ToolLens train), scored by the shipped model, and each
 * decision's exact match on fold 0 of seeds 1 and 2 (seed 2's fold overlaps the folds the shipped
 * model was fitted on, so it checks direction, not level). Decision changes that need no refit
 * of the candidate model are screened here in seconds before a retrain.
 *
 *   npx tsx bench/decision-variants.ts [--data ../shared/data] [--model <learned-model.json>]
 *
 * `--model` scores the rows with another learned model (one `toolsel train` wrote for this version's
 * features; default: the shipped one). Each cell also gives, in brackets, the queries whose
 * |gold| most probable candidates are exactly the gold set (the model's ranking alone, as if the
 * count were known): a candidate-model change that ranks better shows there even when the decision's
 * thresholds hide it.
 *
 * Variants: `shipped` (decideTools as it is) and `clause-order` (round 11's order: the rule's
 * per-clause floor picks kept in clause order, so the count's cut drops the later clauses' picks).
 * Round 14's, all dropped (bench/README.md, "Learned selector"): `clause-cover` (a clause none of
 * whose first three candidates was chosen, whose most probable one of them reaches 0.1 and has a
 * namespace no chosen tool has, takes the place of the least probable chosen tool of a namespace
 * that holds two or more of them), `clause-cover-whole` (the same, only when that candidate is
 * also among the whole instruction's first five), `clause-fill` (such a clause whose candidate
 * shares a chosen tool's namespace adds it, up to one tool per clause) and `diverse-cut` (the
 * count's cut prefers, after the most probable tool, one that is among the first three of a
 * clause no kept tool covers, when it reaches half the probability of the next one).
 * @module
 */
import { benchArgs } from './bench-args.ts'
import type { CountModel, DecisionInput } from '../src/learn/count-model.ts'
import type { DecisionRule } from '../src/learn/decide-set.ts'

const { values } = benchArgs(import.meta.url, {
  options: { data: { type: 'string', default: '../shared/data' }, model: { type: 'string' } },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { loadConfig } = await import('../src/config/load-config.ts')
const {
  applyCount,
  byProbability,
  countAndPlace,
  decideTools,
  decisionCountFeatures,
  extendCoherent,
  extensionRoom,
  oneNeed,
  predictCount,
} = await import('../src/learn/count-model.ts')
const { decideSet, placeTools } = await import('../src/learn/decide-set.ts')
const { loadDefaultModel, readLearnedModel } = await import('../src/learn/learned-model.ts')
const { decisionInput, foldOf, score, trainingSets } = await import('../src/learn/train-model.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
type Decision = (
  input: DecisionInput,
  rule: DecisionRule,
  count: CountModel | undefined,
) => Array<string | null>

/** Round 11's decideTools: the rule's set in the rule's own order. */
const clauseOrder: Decision = (input, rule, count) => {
  const chosen = decideSet(input.scored, Math.max(1, input.clauses.length), rule, input.stepTops)
  return countAndPlace(chosen, input, rule, count)
}

/**
 * decideTools' chosen set before placement, with `cut` in place of the count's plain cut and
 * `after` applied last.
 */
function decided(
  input: DecisionInput,
  rule: DecisionRule,
  count: CountModel | undefined,
  cut: (chosen: string[], count: number) => string[] = applyCount,
  after: (chosen: string[]) => string[] = (chosen) => chosen,
): Array<string | null> {
  const clauses = Math.max(1, input.clauses.length)
  let chosen = byProbability(decideSet(input.scored, clauses, rule, input.stepTops), input.scored)
  if (count !== undefined) {
    const features = decisionCountFeatures(input, chosen)
    if (clauses > 1) chosen = cut(chosen, predictCount(count, features, clauses))
    chosen = oneNeed(chosen, input.clauses)
    if (count.extendThreshold !== undefined && rule.stepFloor) {
      const room = extensionRoom(clauses, input.wholeIndex)
      const extended = predictCount({ ...count, threshold: count.extendThreshold }, features, room)
      chosen = extendCoherent(chosen, input.scored, extended, rule.stepFloor, input.namespaceOf)
    }
    chosen = after(chosen)
  }
  return placeTools(chosen, input.lists, input.wholeIndex)
}

const COVER_DEPTH = 3
const probabilityOf = (input: DecisionInput) => {
  const map = new Map(input.scored.map(({ id, p }) => [id, p]))
  return (id: string) => map.get(id) ?? 0
}
/** Each clause none of whose first COVER_DEPTH candidates is chosen, with its most probable one. */
function uncovered(input: DecisionInput, chosen: readonly string[]): string[] {
  const p = probabilityOf(input)
  return input.clauses.flatMap((list) => {
    const first = list.slice(0, COVER_DEPTH)
    if (first.length === 0 || first.some((id) => chosen.includes(id))) return []
    return [first.reduce((best, id) => (p(id) > p(best) ? id : best))]
  })
}

const clauseCover =
  (wholeDepth: number): Decision =>
  (input, rule, count) =>
    decided(input, rule, count, applyCount, (chosen) => {
      if (input.clauses.length < 2 || chosen.length < 2) return chosen
      const p = probabilityOf(input)
      const namespaceOf = input.namespaceOf
      const whole = input.wholeIndex >= 0 ? input.lists[input.wholeIndex].slice(0, wholeDepth) : []
      let out = [...chosen]
      for (const best of uncovered(input, chosen)) {
        const namespace = namespaceOf(best)
        if (p(best) < 0.1 || namespace === undefined) continue
        if (out.some((id) => namespaceOf(id) === namespace)) continue
        if (wholeDepth > 0 && !whole.includes(best)) continue
        const repeated = out.filter(
          (id) => out.filter((other) => namespaceOf(other) === namespaceOf(id)).length >= 2,
        )
        if (repeated.length === 0) continue
        const weakest = repeated.reduce((a, b) => (p(b) < p(a) ? b : a))
        out = out.map((id) => (id === weakest ? best : id))
      }
      return out
    })

const clauseFill: Decision = (input, rule, count) =>
  decided(input, rule, count, applyCount, (chosen) => {
    if (input.clauses.length < 2 || chosen.length === 0) return chosen
    const p = probabilityOf(input)
    const namespaceOf = input.namespaceOf
    const out = [...chosen]
    for (const best of uncovered(input, chosen)) {
      const namespace = namespaceOf(best)
      if (out.length >= input.clauses.length || p(best) < 0.15 || namespace === undefined) continue
      if (!out.some((id) => namespaceOf(id) === namespace)) continue
      if (input.scored.every(({ id }) => namespaceOf(id) === namespace)) continue
      out.push(best)
    }
    return out
  })

const diverseCut: Decision = (input, rule, count) =>
  decided(input, rule, count, (chosen, n) => {
    if (chosen.length <= n) return chosen
    const p = probabilityOf(input)
    const out = [chosen[0]]
    const rest = chosen.slice(1)
    const opensClause = (id: string) =>
      input.clauses.some(
        (list) =>
          list.slice(0, COVER_DEPTH).includes(id) &&
          !list.slice(0, COVER_DEPTH).some((kept) => out.includes(kept)),
      )
    while (out.length < Math.max(1, n) && rest.length > 0) {
      let pick = rest[0]
      if (!opensClause(pick))
        pick = rest.find((id) => opensClause(id) && p(id) >= 0.5 * p(rest[0])) ?? pick
      out.push(pick)
      rest.splice(rest.indexOf(pick), 1)
    }
    return out
  })

const variants: Record<string, Decision> = {
  shipped: decideTools,
  'clause-order': clauseOrder,
  'clause-cover': clauseCover(0),
  'clause-cover-whole': clauseCover(5),
  'clause-fill': clauseFill,
  'diverse-cut': diverseCut,
}

const config = await loadConfig({})
const sources = [
  { ...(await loadToolPlannerG3(values.data)), singleClauses: true },
  { ...(await loadToolLensTrain(values.data)), singleClauses: false },
]
const { sets } = trainingSets(sources, {
  bm25: bm25Settings(config),
  seed: 1,
  k: 15,
  maxSteps: config.plan.maxSteps,
  tau: config.retrieve.bm25.tau,
})
const model = values.model ? await readLearnedModel(values.model) : loadDefaultModel()
console.log(`| seed | decision | ${sets.map((set) => set.name).join(' | ')} | mean |`)
console.log(`| ---: | --- | ${sets.map(() => '---:').join(' | ')} | ---: |`)
for (const seed of [1, 2]) {
  for (const [name, decide] of Object.entries(variants)) {
    const cells: string[] = []
    let total = 0
    for (const set of sets) {
      const held = set.queries.filter((query) => foldOf(query.id, seed) === 0)
      let matched = 0
      let ranked = 0
      for (const query of held) {
        const scored = score(model, query)
        const placed = decide(decisionInput(query, scored), model.rule, model.count).filter(
          (id): id is string => id !== null,
        )
        const gold = new Set(query.gold)
        if (new Set(placed).size === gold.size && placed.every((id) => gold.has(id))) matched += 1
        const top = [...scored]
          .sort((a, b) => b.p - a.p || (a.id < b.id ? -1 : 1))
          .slice(0, gold.size)
        if (top.every(({ id }) => gold.has(id))) ranked += 1
      }
      const percent = (100 * matched) / Math.max(1, held.length)
      total += percent
      cells.push(`${matched}/${held.length} (${percent.toFixed(2)}) [${ranked}]`)
    }
    console.log(
      `| ${seed} | ${name} | ${cells.join(' | ')} | ${(total / sets.length).toFixed(2)} |`,
    )
  }
}
