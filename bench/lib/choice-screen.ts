/**
 * What the #10 screens that choose one of a held-out query's candidates share
 * (bench/set-level-dev.ts: candidate tool sets, round 42; bench/splitter-dev.ts: segmentations,
 * rounds 43-44): the FNV-1a hash of a query id, tool-id sets compared as sets, a clamped logit,
 * feature standardisation, and the chooser itself: a softmax over each query's candidates of a
 * linear score of their standardised features, fitted on one half of the queries (by id hash) and
 * scored on the other, both ways, reported as exact match against the shipped decision.
 * @module
 */

/** FNV-1a (32 bits) of a query id: the cross-fit's halves, a share of queries kept by hash. */
export function fnv1a(s: string): number {
  let h = 2166136261
  for (const c of s) h = Math.imul(h ^ c.charCodeAt(0), 16777619)
  return h >>> 0
}

/** A set of tool ids as one string (order and repeats ignored). */
export const idSetKey = (ids: readonly string[]) => [...new Set(ids)].sort().join('\u0001')

/** Whether two lists of tool ids hold the same set. */
export const sameIdSet = (a: readonly string[], b: readonly string[]) => idSetKey(a) === idSetKey(b)

/** The log-odds of `p`, clamped to [1e-6, 1 - 1e-6]. */
export const logit = (p: number) => Math.log(Math.max(1e-6, p) / Math.max(1e-6, 1 - p))

/** Standardises a feature vector by the mean and (population) deviation of `rows`' features. */
export function standardiser(rows: readonly number[][], d: number): (f: number[]) => number[] {
  const mean = new Array<number>(d).fill(0),
    sd = new Array<number>(d).fill(0)
  for (const f of rows) f.forEach((v, i) => (mean[i] += v / rows.length))
  for (const f of rows) f.forEach((v, i) => (sd[i] += (v - mean[i]) ** 2 / rows.length))
  sd.forEach((v, i) => (sd[i] = Math.sqrt(v) || 1))
  return (f) => f.map((v, i) => (v - mean[i]) / sd[i])
}

/** One candidate of a query: its features and whether it is right (a gold one). */
export interface Choice {
  f: number[]
  gold: boolean
}

/** One query's candidates, with its set and id (the halves are by the id's hash). */
export interface ChoiceRow<C extends Choice = Choice> {
  set: string
  id: string
  cands: C[]
}

export interface ChoiceFitOptions<R extends ChoiceRow> {
  iterations: number
  /** The queries the fit learns from (e.g. those with a gold candidate). */
  usable: (row: R) => boolean
  /** Each set's queries weigh as much in all as any other set's (default: each query alike). */
  balanced?: boolean
  /** Features whose weight stays 0. */
  drop?: readonly string[]
}

/**
 * Fits the chooser on `train`: the likelihood of picking a gold candidate (the target spread over
 * a query's gold ones) under a softmax of `w · z(f)`, by gradient ascent with L2 (0.1, step 0.5
 * over the number of usable queries). Prints the weights; returns the score of a feature vector.
 */
export function fitChoiceSoftmax<R extends ChoiceRow>(
  train: readonly R[],
  names: readonly string[],
  options: ChoiceFitOptions<R>,
): (f: number[]) => number {
  const d = names.length
  const z = standardiser(
    train.flatMap((r) => r.cands.map((c) => c.f)),
    d,
  )
  const w = new Array<number>(d).fill(0)
  const usable = train.filter(options.usable)
  const perSet = new Map<string, number>()
  for (const r of usable) perSet.set(r.set, (perSet.get(r.set) ?? 0) + 1)
  const weightOf = (r: R) =>
    options.balanced ? usable.length / perSet.size / perSet.get(r.set)! : 1
  const drop = options.drop ?? []
  const zsOf = usable.map((r) => r.cands.map((c) => z(c.f)))
  for (let it = 0; it < options.iterations; it++) {
    const g = new Array<number>(d).fill(0)
    usable.forEach((r, q) => {
      const zs = zsOf[q]
      const s = zs.map((x) => x.reduce((a, v, i) => a + v * w[i], 0))
      const m = Math.max(...s)
      const e = s.map((v) => Math.exp(v - m))
      const Z = e.reduce((a, b) => a + b, 0)
      const golds = r.cands.filter((c) => c.gold).length
      r.cands.forEach((c, j) => {
        const coef = weightOf(r) * ((c.gold ? 1 / golds : 0) - e[j] / Z)
        zs[j].forEach((v, i) => (g[i] += coef * v))
      })
    })
    for (let i = 0; i < d; i++)
      if (!drop.includes(names[i])) w[i] += (0.5 * (g[i] - 0.1 * w[i])) / Math.max(1, usable.length)
  }
  console.log(`  weights: ${names.map((name, i) => `${name} ${w[i].toFixed(2)}`).join(', ')}`)
  return (f) => z(f).reduce((a, v, i) => a + v * w[i], 0)
}

/** Per set: queries, those the shipped decision gets right, those the chooser's pick gets right. */
export type ChoiceResult = Record<string, { n: number; shipped: number; chosen: number }>

/**
 * The chooser cross-fitted in two halves by id hash: fitted on one, each query of the other picks
 * its best-scored candidate (the first of the best from `first(row)` on; a query without
 * candidates picks nothing, as the shipped decision there). Then prints, per set and as the mean
 * of the sets, the exact match of the shipped decision (`shippedRight`) and of the picks.
 */
export function crossFitChoices<C extends Choice, R extends ChoiceRow<C>>(
  rows: readonly R[],
  fit: (train: R[]) => (f: number[]) => number,
  report: {
    title: string
    label: string
    shippedRight: (row: R) => boolean
    first: (row: R) => C
  },
): ChoiceResult {
  const sets = [...new Set(rows.map((r) => r.set))]
  const result: ChoiceResult = {}
  for (const half of [0, 1]) {
    const train = rows.filter((r) => fnv1a(r.id) % 2 !== half)
    const test = rows.filter((r) => fnv1a(r.id) % 2 === half)
    const s = fit(train)
    for (const r of test) {
      const res = (result[r.set] ??= { n: 0, shipped: 0, chosen: 0 })
      res.n++
      if (report.shippedRight(r)) res.shipped++
      if (r.cands.length === 0) continue
      let best = report.first(r)
      for (const c of r.cands) if (s(c.f) > s(best.f)) best = c
      if (best.gold) res.chosen++
    }
  }
  console.log(`\n== ${report.title}`)
  let ms = 0,
    mc = 0
  for (const set of sets) {
    const r = result[set]
    ms += (100 * r.shipped) / r.n / sets.length
    mc += (100 * r.chosen) / r.n / sets.length
    console.log(
      `${set} (${r.n}): shipped ${((100 * r.shipped) / r.n).toFixed(2)} -> ${report.label} ${((100 * r.chosen) / r.n).toFixed(2)}`,
    )
  }
  console.log(`mean: ${ms.toFixed(2)} -> ${mc.toFixed(2)}`)
  return result
}
