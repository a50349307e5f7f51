/**
 * Research helper: trains the candidate model on the cached training features (see
 * dump-features.ts), picks the decision thresholds on a held-out fold of the TRAINING data, and
 * prints exact match per benchmark suite next to the none-planner baseline computed from the same
 * cache. Usage: npx tsx bench/learn/experiment.ts [--cache file] [--exclude toollens]
 */
import { readFileSync } from 'node:fs'
import { benchArgs } from '../bench-args.ts'
import type { QueryRow, SetDump } from './feature-dump.ts'
import type { DecisionRule } from '../../src/learn/decide-set.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    cache: { type: 'string', default: '/tmp/toolsel-learn-features.json' },
    exclude: { type: 'string', default: '' },
    drop: { type: 'string', default: '' },
    l2: { type: 'string', default: '1' },
    stage2: { type: 'boolean', default: false },
    count: { type: 'boolean', default: false },
    perstep: { type: 'boolean', default: false },
    stepwise: { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { fitLogistic, predictProbability } = await import('../../src/learn/logistic-regression.ts')
const { FEATURE_NAMES } = await import('../../src/learn/candidate-features.ts')
const { decideSet } = await import('../../src/learn/decide-set.ts')
const sets = JSON.parse(readFileSync(values.cache!, 'utf8')) as SetDump[]
const excluded = new Set(values.exclude!.split(',').filter(Boolean))
const dropped = new Set(values.drop!.split(',').filter(Boolean))
const keep = FEATURE_NAMES.map((name, index) => (dropped.has(name) ? -1 : index)).filter(
  (index) => index >= 0,
)
const project = (row: number[]) => keep.map((index) => row[index])

function stepMaxP(query: QueryRow, p1: number[]): number[] {
  return query.stepX.map((_, s) => {
    let best = 0
    for (let i = 0; i < p1.length; i += 1) if (query.ranks[i][s] >= 0) best = Math.max(best, p1[i])
    return best
  })
}
function decideStepwise(
  query: QueryRow,
  p1: number[],
  pStep: number[],
  ta: number,
  tg: number,
): string[] {
  const chosen: string[] = []
  for (let s = 0; s < query.stepX.length; s += 1) {
    if (pStep[s] < ta) continue
    let best = -1
    for (let i = 0; i < p1.length; i += 1) {
      if (query.ranks[i][s] < 0) continue
      if (best < 0 || p1[i] > p1[best]) best = i
    }
    if (best >= 0 && !chosen.includes(query.ids[best])) chosen.push(query.ids[best])
  }
  const order = p1.map((p, i) => [p, i]).sort((a, b) => b[0] - a[0])
  for (const [p, i] of order) {
    if (p < tg) break
    if (!chosen.includes(query.ids[i])) chosen.push(query.ids[i])
  }
  if (chosen.length === 0 && order[0]) chosen.push(query.ids[order[0][1]])
  return chosen
}
const em = (predicted: string[], gold: string[]) => {
  const p = new Set(predicted)
  const g = new Set(gold)
  return p.size === g.size && [...p].every((id) => g.has(id)) ? 1 : 0
}
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

const logit = (p: number) => Math.log(Math.max(p, 1e-6) / Math.max(1 - p, 1e-6))
function stage2Features(query: QueryRow, p1: number[]): number[][] {
  const order = p1.map((p, i) => [p, i]).sort((a, b) => b[0] - a[0])
  const rankOf = new Array<number>(p1.length)
  order.forEach(([, i], r) => (rankOf[i] = r))
  const maxp = order[0]?.[0] ?? 1
  const sum = p1.reduce((a, b) => a + b, 0)
  const steps = Math.max(1, query.steps)
  return p1.map((p, i) => [
    logit(p),
    p / maxp,
    1 / (1 + rankOf[i]),
    rankOf[i] < steps ? 1 : 0,
    Math.min(sum, 10) / 10,
    sum / steps,
    logit(p) * (rankOf[i] === 0 ? 1 : 0),
    query.x[i][19],
  ])
}
let stage2: ReturnType<typeof fitLogistic> | undefined
if (values.stage2) {
  const r2: number[][] = []
  const l2l: number[] = []
  const w2: number[] = []
  for (const set of trainSets) {
    const weight = 1 / set.queries.length
    for (const query of set.queries) {
      if (heldOut(query.id)) continue
      const p1 = query.x.map((x) => predictProbability(model, project(x)))
      const gold = new Set(query.gold)
      stage2Features(query, p1).forEach((f, index) => {
        r2.push(f)
        l2l.push(gold.has(query.ids[index]) ? 1 : 0)
        w2.push(weight * 10000)
      })
    }
  }
  stage2 = fitLogistic(r2, l2l, { l2: 1, rowWeights: w2 })
  console.log('stage2 weights', stage2.weights.map((w) => w.toFixed(2)).join(' '))
}

function queryFeatures(query: QueryRow, p1: number[]): number[] {
  const sorted = [...p1].sort((a, b) => b - a)
  const at = (i: number) => sorted[i] ?? 0
  const sum = sorted.reduce((a, b) => a + b, 0)
  const x0 = query.x[0] ?? new Array(30).fill(0)
  return [
    Math.min(query.steps, 8) / 8,
    query.steps === 1 ? 1 : 0,
    x0[20],
    at(0),
    at(1),
    at(2),
    at(3),
    at(4),
    Math.min(sum, 10),
    sorted.filter((p) => p > 0.5).length,
    sorted.filter((p) => p > 0.3).length,
    sorted.filter((p) => p > 0.15).length,
    x0[21],
  ]
}
const COUNT_LEVELS = [2, 3, 4, 5]
let countModels: ReturnType<typeof fitLogistic>[] = []
if (values.count) {
  const qx: number[][] = []
  const qy: number[] = []
  const qw: number[] = []
  for (const set of trainSets) {
    const weight = 10000 / set.queries.length
    for (const query of set.queries) {
      if (heldOut(query.id)) continue
      qx.push(
        queryFeatures(
          query,
          query.x.map((x) => predictProbability(model, project(x))),
        ),
      )
      qy.push(query.gold.length)
      qw.push(weight)
    }
  }
  countModels = COUNT_LEVELS.map((level) =>
    fitLogistic(
      qx,
      qy.map((n) => (n >= level ? 1 : 0)),
      { l2: 1, rowWeights: qw },
    ),
  )
}
const predictCount = (query: QueryRow, p1: number[]) => {
  const f = queryFeatures(query, p1)
  let n = 1
  for (const m of countModels) if (predictProbability(m, f) >= 0.5) n += 1
  return n
}

function decidePerStep(
  query: QueryRow,
  cands: Array<{ id: string; p: number }>,
  stepThreshold: number,
  globalThreshold: number,
  nextBest: boolean,
): string[] {
  const chosen: string[] = []
  const steps = query.ranks[0]?.length ?? 0
  for (let s = 0; s < steps; s += 1) {
    let best = -1
    for (let i = 0; i < cands.length; i += 1) {
      if (query.ranks[i][s] < 0) continue
      if (nextBest && chosen.includes(cands[i].id)) continue
      if (best < 0 || cands[i].p > cands[best].p) best = i
    }
    if (best >= 0 && cands[best].p >= stepThreshold && !chosen.includes(cands[best].id))
      chosen.push(cands[best].id)
  }
  for (const c of [...cands].sort((a, b) => b.p - a.p)) {
    if (c.p < globalThreshold) break
    if (!chosen.includes(c.id)) chosen.push(c.id)
  }
  if (chosen.length === 0) {
    const top = [...cands].sort((a, b) => b.p - a.p)[0]
    if (top) chosen.push(top.id)
  }
  return chosen
}
let perStep: { st: number; gt: number; nb: boolean } | undefined
if (values.perstep) {
  let bestEm = -1
  for (const st of [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5])
    for (const gt of [0.3, 0.4, 0.5, 0.6, 0.7, 1.01])
      for (const nb of [false, true]) {
        const per: number[] = []
        for (const set of trainSets) {
          const qs = set.queries.filter((q) => heldOut(q.id))
          let hit = 0
          for (const query of qs) {
            const cands = query.ids.map((id, i) => ({
              id,
              p: predictProbability(model, project(query.x[i])),
            }))
            hit += em(decidePerStep(query, cands, st, gt, nb), query.gold)
          }
          per.push(hit / qs.length)
        }
        const mean = per.reduce((a, b) => a + b, 0) / per.length
        if (mean > bestEm) {
          bestEm = mean
          perStep = { st, gt, nb }
          console.log(
            'perstep',
            JSON.stringify(perStep),
            per.map((v) => (100 * v).toFixed(1)).join(' '),
          )
        }
      }
}

const scored = (query: QueryRow) => {
  const p1 = query.x.map((x) => predictProbability(model, project(x)))
  if (!stage2) return query.ids.map((id, index) => ({ id, p: p1[index] }))
  const f2 = stage2Features(query, p1)
  return query.ids.map((id, index) => ({ id, p: predictProbability(stage2!, f2[index]) }))
}

// Choose the decision rule on the held-out fold of the training sets only.
const heldQueries = trainSets.flatMap((set) =>
  set.queries.filter((query) => heldOut(query.id)).map((query) => ({ set: set.name, query })),
)
const heldScored = heldQueries.map(({ set, query }) => ({ set, query, cands: scored(query) }))
let best: { rule: DecisionRule; em: number } | undefined
const grid: DecisionRule[] = []
for (const threshold of [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 1])
  for (const extra of [0, 1, 2])
    for (const relative of [0, 0.5, 0.6, 0.7, 0.8, 0.9])
      grid.push({ threshold, floor: 0, extra, relative })
for (const countScale of [0.6, 0.8, 1, 1.2, 1.4, 1.6, 2])
  for (const extra of [0, 1, 2]) grid.push({ threshold: 0, floor: 0, extra, countScale })
for (const rule of grid) {
  {
    {
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
      if (process.env.SHOWRULES && !rule.countScale && !rule.relative)
        console.log(
          'rule',
          JSON.stringify(rule),
          [...bySet.values()]
            .map((l) => ((100 * l.reduce((a, b) => a + b, 0)) / l.length).toFixed(1))
            .join(' '),
          (mean * 100).toFixed(1),
        )
      if (!best || mean > best.em) best = { rule, em: mean }
    }
  }
}
if (values.count) {
  for (const set of trainSets) {
    const qs = set.queries.filter((q) => heldOut(q.id))
    let hit = 0
    let cnt = 0
    for (const query of qs) {
      const p1 = query.x.map((x) => predictProbability(model, project(x)))
      const n = predictCount(query, p1)
      const sc = query.ids.map((id, i) => ({ id, p: p1[i] })).sort((a, b) => b.p - a.p)
      hit += em(
        sc.slice(0, n).map((c) => c.id),
        query.gold,
      )
      if (n === query.gold.length) cnt += 1
    }
    console.log(
      `held-out count ${set.name}: EM ${((100 * hit) / qs.length).toFixed(1)} count-acc ${((100 * cnt) / qs.length).toFixed(1)}`,
    )
  }
}
console.log(`held-out rule ${JSON.stringify(best!.rule)} EM ${(best!.em * 100).toFixed(1)}`)

const suites = new Map<string, { learned: number[]; none: number[]; oracle: number[] }>()
for (const set of sets.filter((set) => set.kind === 'eval')) {
  const suite = set.name.endsWith('#corpus') ? 'toolbench-g3#corpus' : set.name.split('/')[0]
  const entry = suites.get(suite) ?? { learned: [], none: [], oracle: [] as number[] }
  for (const query of set.queries) {
    const sc = scored(query).sort((a, b) => b.p - a.p)
    ;(entry as any).oracle.push(
      em(
        sc.slice(0, query.gold.length).map((c) => c.id),
        query.gold,
      ),
    )
    if (values.count) {
      const p1 = query.x.map((x) => predictProbability(model, project(x)))
      const n = predictCount(query, p1)
      entry.learned.push(
        em(
          sc.slice(0, n).map((c) => c.id),
          query.gold,
        ),
      )
    } else if (perStep) {
      const cands = query.ids.map((id, i) => ({
        id,
        p: predictProbability(model, project(query.x[i])),
      }))
      entry.learned.push(
        em(decidePerStep(query, cands, perStep.st, perStep.gt, perStep.nb), query.gold),
      )
    } else if (process.env.UNION) {
      const base = decideSet(scored(query), query.steps, best!.rule)
      const iAct = FEATURE_NAMES.indexOf('top1_of_action_step')
      const iAbs = FEATURE_NAMES.indexOf('step_abs')
      const sc2 = scored(query)
      query.x.forEach((x, i) => {
        if (
          x[iAct] === 1 &&
          x[iAbs] > Math.log1p(Number(process.env.UNION)) &&
          sc2[i].p >= Number(process.env.UNIONP ?? 0) &&
          !base.includes(query.ids[i])
        )
          base.push(query.ids[i])
      })
      entry.learned.push(em(base, query.gold))
    } else entry.learned.push(em(decideSet(scored(query), query.steps, best!.rule), query.gold))
    entry.none.push(
      em(query.wholeTop && query.wholeTopScore > 3 ? [query.wholeTop] : [], query.gold),
    )
  }
  suites.set(suite, entry)
}
if (process.env.SHOWDEMO) {
  const demo = sets.find((set) => set.name.startsWith('demo'))!
  for (const query of demo.queries.slice(0, 12)) {
    const sc = scored(query)
      .sort((a, b) => b.p - a.p)
      .slice(0, 5)
    console.log(
      query.id,
      query.steps,
      'gold',
      query.gold.join(','),
      '|',
      sc.map((c) => `${c.id}:${c.p.toFixed(2)}`).join(' '),
    )
  }
}
if (values.stepwise) {
  const sx: number[][] = []
  const sy: number[] = []
  const sw: number[] = []
  for (const set of trainSets) {
    if (set.name.endsWith('-single')) continue
    const weight = 10000 / set.queries.length
    for (const query of set.queries) {
      if (heldOut(query.id)) continue
      const p1 = query.x.map((x) => predictProbability(model, project(x)))
      const mp = stepMaxP(query, p1)
      query.stepX.forEach((f, s) => {
        sx.push([...f, mp[s]])
        sy.push(query.stepY[s])
        sw.push(weight / Math.max(1, query.stepX.length))
      })
    }
  }
  const stepModel = fitLogistic(sx, sy, { l2: 1, rowWeights: sw })
  console.log(
    'step model',
    stepModel.weights.map((w) => w.toFixed(2)).join(' '),
    'positives',
    sy.filter((y) => y === 1).length,
    '/',
    sy.length,
  )
  const pre = (query: QueryRow) => {
    const p1 = query.x.map((x) => predictProbability(model, project(x)))
    const mp = stepMaxP(query, p1)
    if (process.env.STEPSUM) {
      const sums = query.stepX.map((_, st) => {
        let sum = 0
        for (let i = 0; i < p1.length; i += 1)
          if (query.ranks[i][st] >= 0 && query.ranks[i][st] < Number(process.env.STEPSUM))
            sum += p1[i]
        return Math.min(1, sum)
      })
      return { p1, ps: sums }
    }
    return { p1, ps: query.stepX.map((f, s) => predictProbability(stepModel, [...f, mp[s]])) }
  }
  let bestRule = { ta: 0.5, tg: 1.01, em: -1 }
  const heldPre = trainSets.map((set) =>
    set.queries.filter((q) => heldOut(q.id)).map((q) => ({ q, ...pre(q) })),
  )
  for (const ta of [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    for (const tg of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.01]) {
      const per = heldPre.map(
        (list) =>
          list.reduce(
            (sum, { q, p1, ps }) => sum + em(decideStepwise(q, p1, ps, ta, tg), q.gold),
            0,
          ) / list.length,
      )
      const mean = per.reduce((a, b) => a + b, 0) / per.length
      if (mean > bestRule.em) {
        bestRule = { ta, tg, em: mean }
        console.log('stepwise', ta, tg, per.map((v) => (100 * v).toFixed(1)).join(' '))
      }
    }
  for (const [suite, entry] of suites) {
    entry.learned = []
    for (const set of sets.filter(
      (set) =>
        set.kind === 'eval' &&
        (set.name.endsWith('#corpus') ? 'toolbench-g3#corpus' : set.name.split('/')[0]) === suite,
    )) {
      for (const query of set.queries) {
        const { p1, ps } = pre(query)
        entry.learned.push(em(decideStepwise(query, p1, ps, bestRule.ta, bestRule.tg), query.gold))
      }
    }
  }
}
const pct = (list: number[]) => (100 * list.reduce((a, b) => a + b, 0)) / list.length
let sumLearned = 0
let sumNone = 0
let count = 0
for (const [suite, entry] of suites) {
  console.log(
    `${suite.padEnd(24)} learned ${pct(entry.learned).toFixed(1).padStart(5)}  none ${pct(entry.none).toFixed(1).padStart(5)} oracle-count ${pct((entry as any).oracle).toFixed(1)}`,
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
