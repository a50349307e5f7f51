/**
 * Research helper: trains the candidate model on the cached training features (see
 * dump-features.ts), picks the decision thresholds on a held-out fold of the TRAINING data, and
 * prints exact match per benchmark suite next to the none-planner baseline computed from the same
 * cache. Usage: npx tsx bench/learn/experiment.ts [--cache file] [--exclude toollens]
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { fitLogistic, predictProbability } from '../../src/learn/logistic-regression.ts'
import { FEATURE_NAMES } from '../../src/learn/candidate-features.ts'
import { decideSet, type DecisionRule } from '../../src/learn/decide-set.ts'

const { values } = parseArgs({
  options: {
    cache: { type: 'string', default: '/tmp/toolsel-learn-features.json' },
    exclude: { type: 'string', default: '' },
    drop: { type: 'string', default: '' },
    l2: { type: 'string', default: '1' },
  },
})
interface QueryRow {
  id: string
  gold: string[]
  steps: number
  ids: string[]
  x: number[][]
  wholeTop: string | null
  wholeTopScore: number
}
interface SetDump {
  name: string
  kind: 'train' | 'eval'
  queries: QueryRow[]
}
const sets = JSON.parse(readFileSync(values.cache!, 'utf8')) as SetDump[]
const excluded = new Set(values.exclude!.split(',').filter(Boolean))
const dropped = new Set(values.drop!.split(',').filter(Boolean))
const keep = FEATURE_NAMES.map((name, index) => (dropped.has(name) ? -1 : index)).filter(
  (index) => index >= 0,
)
const project = (row: number[]) => keep.map((index) => row[index])

const heldOut = (id: string) => {
  let hash = 0
  for (const char of id.split('#')[0]) hash = (hash * 31 + char.charCodeAt(0)) >>> 0
  return hash % 5 === 0
}

const rows: number[][] = []
const labels: number[] = []
const weights: number[] = []
const trainSets = sets.filter((set) => set.kind === 'train' && !excluded.has(set.name))
for (const set of trainSets) {
  const weight = 1 / set.queries.length
  for (const query of set.queries) {
    if (heldOut(query.id)) continue
    const gold = new Set(query.gold)
    query.x.forEach((x, index) => {
      rows.push(project(x))
      labels.push(gold.has(query.ids[index]) ? 1 : 0)
      weights.push(weight * 10000)
    })
  }
}
const started = performance.now()
const model = fitLogistic(rows, labels, { l2: Number(values.l2), rowWeights: weights })
console.log(`fit ${rows.length} rows in ${(performance.now() - started).toFixed(0)} ms`)
keep.forEach((index, j) =>
  console.log(`  ${FEATURE_NAMES[index].padEnd(20)} ${model.weights[j].toFixed(3)}`),
)
console.log(`  bias ${model.bias.toFixed(3)}`)

const em = (predicted: string[], gold: string[]) => {
  const p = new Set(predicted)
  const g = new Set(gold)
  return p.size === g.size && [...p].every((id) => g.has(id)) ? 1 : 0
}
const scored = (query: QueryRow) =>
  query.ids.map((id, index) => ({ id, p: predictProbability(model, project(query.x[index])) }))

// Choose the decision rule on the held-out fold of the training sets only.
const heldQueries = trainSets.flatMap((set) =>
  set.queries.filter((query) => heldOut(query.id)).map((query) => ({ set: set.name, query })),
)
const heldScored = heldQueries.map(({ set, query }) => ({ set, query, cands: scored(query) }))
let best: { rule: DecisionRule; em: number } | undefined
for (const threshold of [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6]) {
  for (const floor of [0, 0.05, 0.1, 0.15, 0.2]) {
    for (const extra of [0, 1, 2]) {
      const rule: DecisionRule = { threshold, floor, extra }
      const bySet = new Map<string, number[]>()
      for (const { set, query, cands } of heldScored) {
        const list = bySet.get(set) ?? []
        list.push(em(decideSet(cands, query.steps, rule), query.gold))
        bySet.set(set, list)
      }
      const mean =
        [...bySet.values()].reduce(
          (sum, list) => sum + list.reduce((a, b) => a + b, 0) / list.length,
          0,
        ) / bySet.size
      if (!best || mean > best.em) best = { rule, em: mean }
    }
  }
}
console.log(`held-out rule ${JSON.stringify(best!.rule)} EM ${(best!.em * 100).toFixed(1)}`)

const suites = new Map<string, { learned: number[]; none: number[] }>()
for (const set of sets.filter((set) => set.kind === 'eval')) {
  const suite = set.name.endsWith('#corpus') ? 'toolbench-g3#corpus' : set.name.split('/')[0]
  const entry = suites.get(suite) ?? { learned: [], none: [] }
  for (const query of set.queries) {
    entry.learned.push(em(decideSet(scored(query), query.steps, best!.rule), query.gold))
    entry.none.push(
      em(query.wholeTop && query.wholeTopScore > 3 ? [query.wholeTop] : [], query.gold),
    )
  }
  suites.set(suite, entry)
}
const pct = (list: number[]) => (100 * list.reduce((a, b) => a + b, 0)) / list.length
let sumLearned = 0
let sumNone = 0
let count = 0
for (const [suite, entry] of suites) {
  console.log(
    `${suite.padEnd(24)} learned ${pct(entry.learned).toFixed(1).padStart(5)}  none ${pct(entry.none).toFixed(1).padStart(5)}`,
  )
  if (!suite.endsWith('#corpus')) {
    sumLearned += pct(entry.learned)
    sumNone += pct(entry.none)
    count += 1
  }
}
console.log(
  `mean of suites: learned ${(sumLearned / count).toFixed(1)}  none ${(sumNone / count).toFixed(1)}`,
)
