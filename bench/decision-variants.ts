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
 * @module
 */
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config/load-config.ts'
import {
  countAndPlace,
  decideTools,
  type CountModel,
  type DecisionInput,
} from '../src/learn/count-model.ts'
import { decideSet, type DecisionRule } from '../src/learn/decide-set.ts'
import { loadDefaultModel, readLearnedModel } from '../src/learn/learned-model.ts'
import { decisionInput, foldOf, score, trainingSets } from '../src/learn/train-model.ts'
import { loadToolLensTrain, loadToolPlannerG3 } from '../src/learn/training-data.ts'
import { bm25Settings } from '../src/store/kinds/bm25-kind.ts'

const { values } = parseArgs({
  options: { data: { type: 'string', default: '../shared/data' }, model: { type: 'string' } },
})
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

const variants: Record<string, Decision> = { shipped: decideTools, 'clause-order': clauseOrder }

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
        const scored = score(model.model, query)
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
