/**
 * A bagged candidate scorer (#10, round 26), screened on TRAINING data only: the shipped recipe
 * fitted on folds 1-4 of `--seed` (its rule and count kept), then `--bags` logistic models each
 * fitted on a bootstrap resample of the same training queries (drawn with replacement within each
 * set, the set's weight kept), and the bag's mean log-odds (one linear model: the mean of the
 * bags' standardised weights mapped back, i.e. the same inference cost) and mean probability. On
 * held-out fold 0 of each set: exact match of the shipped decision and clause top-1 (clauses
 * whose list holds a gold tool and whose most probable candidate is gold), for the single model,
 * each bag alone (mean, min, max) and the two bagged scorers.
 *
 *   npx tsx bench/bagged-dev.ts [--data ../shared/data] [--seed 1] [--bags 8]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'
import type { ScoredCandidate } from '../src/learn/decide-set.ts'
import type { LogisticModel } from '../src/learn/logistic-regression.ts'
import type { QueryRows } from '../src/learn/training-rows.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    bags: { type: 'string', default: '8' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { decideTools } = await import('../src/learn/count-model.ts')
const { mostProbableFirst } = await import('../src/learn/decide-set.ts')
const { scoreCandidate } = await import('../src/learn/boosted-trees.ts')
const { fitLogistic, predictLogit, sigmoid } = await import('../src/learn/logistic-regression.ts')
const { candidateFitRows, decisionInput, foldOf } = await import('../src/learn/train-model.ts')
const { shippedRecipeFit } = await import('./training-dev-setup.ts')
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const bags = Number(values.bags)
const { rows, model: shipped } = await shippedRecipeFit(values.data!, seed)
const sets = rows.sets.filter((set) => !set.countOnly)

/** Deterministic 32-bit generator (mulberry32). */
function generator(state: number) {
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
/** The candidate fit (its rows as the shipped fit builds them) over `pick(set)`'s queries. */
function fitOn(pick: (queries: QueryRows[]) => QueryRows[]): LogisticModel {
  const { rows: x, labels, weights } = candidateFitRows(sets, seed, pick)
  return fitLogistic(x, labels, { l2: 1, rowWeights: weights })
}
const models: LogisticModel[] = []
for (let bag = 0; bag < bags; bag += 1) {
  const random = generator(seed * 1000 + bag)
  const started = performance.now()
  models.push(fitOn((queries) => queries.map(() => queries[Math.floor(random() * queries.length)])))
  console.log(`bag ${bag} fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}
const acceptance = shipped.acceptance
type Scorer = (query: QueryRows) => ScoredCandidate[]
const withModel =
  (model: LogisticModel): Scorer =>
  (query) =>
    query.ids.map((id, index) =>
      scoreCandidate({ model, ...(acceptance && { acceptance }) }, id, query.x[index]),
    )
const meanProbability: Scorer = (query) =>
  query.ids.map((id, index) => {
    const p = models.reduce((sum, m) => sum + sigmoid(predictLogit(m, query.x[index])), 0) / bags
    return scoreCandidate(
      {
        model: { mean: [], scale: [], weights: [], bias: Math.log(p / (1 - p)) },
        ...(acceptance && { acceptance }),
      },
      id,
      query.x[index],
    )
  })
const meanLogit: Scorer = (query) =>
  query.ids.map((id, index) => {
    const z = models.reduce((sum, m) => sum + predictLogit(m, query.x[index]), 0) / bags
    return scoreCandidate(
      { model: { mean: [], scale: [], weights: [], bias: z }, ...(acceptance && { acceptance }) },
      id,
      query.x[index],
    )
  })

function evaluate(scorer: Scorer) {
  return sets.map((set) => {
    let exact = 0
    let top1 = 0
    let clauses = 0
    let n = 0
    for (const query of set.queries) {
      if (foldOf(query.id, seed) !== 0) continue
      n += 1
      const scored = scorer(query)
      const gold = new Set(query.gold)
      const placed = decideTools(decisionInput(query, scored), shipped.rule, shipped.count).filter(
        (id): id is string => id !== null,
      )
      exact += Number(new Set(placed).size === gold.size && placed.every((id) => gold.has(id)))
      const p = new Map(scored.map((c) => [c.id, c.p]))
      for (const list of query.lists.slice(0, query.steps)) {
        if (!list.some((id) => gold.has(id))) continue
        clauses += 1
        const [first] = [...list].sort((a, b) =>
          mostProbableFirst({ id: a, p: p.get(a)! }, { id: b, p: p.get(b)! }),
        )
        top1 += Number(gold.has(first))
      }
    }
    return { name: set.name, exact, top1, clauses, n }
  })
}
const show = (label: string, result: ReturnType<typeof evaluate>) =>
  console.log(
    `${label.padEnd(18)} ${result.map((r) => `${r.name} exact ${r.exact}/${r.n} top1 ${r.top1}/${r.clauses}`).join('; ')}`,
  )
show('shipped (folds1-4)', evaluate(withModel(shipped.model)))
const single = models.map((model) => evaluate(withModel(model)))
single.forEach((result, bag) => show(`bag ${bag}`, result))
const summary = sets.map((set, index) => {
  const exact = single.map((r) => r[index].exact)
  const top1 = single.map((r) => r[index].top1)
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length
  const sd = (v: number[]) => Math.sqrt(mean(v.map((x) => (x - mean(v)) ** 2)))
  return `${set.name} exact mean ${mean(exact).toFixed(1)} sd ${sd(exact).toFixed(1)} [${Math.min(...exact)}, ${Math.max(...exact)}] top1 mean ${mean(top1).toFixed(1)} sd ${sd(top1).toFixed(1)} [${Math.min(...top1)}, ${Math.max(...top1)}]`
})
console.log(`single bags: ${summary.join('; ')}`)
show('bagged mean logit', evaluate(meanLogit))
show('bagged mean p', evaluate(meanProbability))
