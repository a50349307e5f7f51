/**
 * Round 55 (plan25, #10): the within-step choice between a request's leader and its 2nd-3rd
 * candidate, screened on TRAINING data only (no test query read). Round 54 found that a
 * multi-tool request's missed gold tool is usually lost inside one request list led by a wrong
 * tool the model keeps, the missed tool 2nd-3rd there. This screen asks whether a scorer that
 * reads the request's text against each of its top-3 candidates can swap the placed leader for
 * the 2nd/3rd candidate often enough to matter.
 *
 * `--out FILE` builds the cache: the shipped recipe (`toolsel train --learned-dense
 * --dense-free-acceptance`) refitted on folds 1-4 of `--seed`, its rule and count chosen on fold
 * 0 as `toolsel train` does (training-dev-setup.ts `shippedRecipeFit`); then every gold-labelled
 * set's fold-0 queries (held out from that model) decided by it, with each request's text (the
 * training planner's clauses, or the whole instruction), its lists, the candidates' probabilities
 * and base features, and the tools' names and descriptions. `--cache FILE` reads one and screens.
 *
 * The screen: for every request slot the shipped decision placed a tool in that is among its
 * list's top 3 by probability, each other top-3 candidate (not placed elsewhere) is a swap
 * candidate, labelled 1 when it is gold and the placed tool is not. A logistic swap scorer
 * (src/learn/logistic-regression.ts) on pair features: both probabilities (log-odds, gap, rank),
 * the request words each tool's name / description / both holds, the words one holds and the
 * other does not, the request's first word (its verb) and the rest (its object) in each tool,
 * name Jaccard and namespace, and the base features of both (candidate minus leader, and the
 * candidate's own). Logistic (pair features + base, pair features only, probabilities + base)
 * and boosted trees (GBT_SETTINGS, all columns). Fitted on one hashed half of fold 0, its
 * threshold chosen inside that half by exact match (fitted on one quarter, scored on the other,
 * both ways), scored on the other half; both ways, the halves summed. At most one swap per slot
 * (the best-scoring candidate above the threshold). Also printed: the oracle (swap exactly when
 * the label is 1: the lever's ceiling) and the pair pool's census.
 *
 *   npx tsx bench/leader-swap-dev.ts --data ../shared/data --seed 1 --out /tmp/plan25/seed1.json
 *   npx tsx bench/leader-swap-dev.ts --cache /tmp/plan25/seed1.json
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { benchArgs, usageError } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    cache: { type: 'string' },
    l2: { type: 'string', default: '1' },
  },
})
if ((values.out === undefined) === (values.cache === undefined))
  usageError(import.meta.url, 'give one of --out (build the cache) or --cache (screen it)')
const seed = Number(values.seed)
if (!Number.isInteger(seed) || seed < 1) usageError(import.meta.url, '--seed: a positive integer')
const l2 = Number(values.l2)
if (!(l2 >= 0)) usageError(import.meta.url, '--l2: a number ≥ 0')

/** One held-out query of the cache. */
interface CachedQuery {
  set: string
  id: string
  gold: string[]
  steps: number
  /** Each request slot's text: a planner clause, or the whole instruction (null: the planner's split differs from the rows'). */
  texts: Array<string | null>
  lists: string[][]
  /** The shipped decision's placed tools, one slot per list. */
  placed: Array<string | null>
  /** Probability, namespace and base features of each kept candidate. */
  candidates: Record<string, { p: number; ns: string | null; x: number[] }>
}
interface Cache {
  seed: number
  features: string[]
  queries: CachedQuery[]
  tools: Record<string, Record<string, { name: string; description: string }>>
}

if (values.out !== undefined) {
  const { shippedRecipeFit, trainingSetCases } = await import('./training-dev-setup.ts')
  const { decisionInput, foldOf, score } = await import('../src/learn/train-model.ts')
  const { decideTools } = await import('../src/learn/count-model.ts')
  const { mostProbableFirst } = await import('../src/learn/decide-set.ts')
  const { trainingPlanner } = await import('../src/plan/rule-planner.ts')
  const { sources, base, rows, model } = await shippedRecipeFit(values.data!, seed)
  const cases = trainingSetCases(sources, base)
  const planner = trainingPlanner(base.maxSteps)
  const cache: Cache = { seed, features: [...model.features], queries: [], tools: {} }
  for (const set of rows.sets) {
    if (set.countOnly) continue
    const entry = cases.get(set.name)
    if (entry === undefined) throw new Error(`no cases for ${set.name}`)
    const instructions = new Map(entry.cases.map((c) => [c.id, c.instruction]))
    const toolsById = new Map(entry.source.tools.map((tool) => [tool.id, tool]))
    const tools = (cache.tools[entry.source.name] ??= {})
    for (const query of set.queries) {
      if (foldOf(query.id, seed) !== 0) continue
      const instruction = instructions.get(query.id)
      if (instruction === undefined) throw new Error(`no instruction for ${set.name} ${query.id}`)
      const scored = score(model, query)
      const p = new Map(scored.map((c) => [c.id, c.p]))
      const placed = decideTools(decisionInput(query, scored), model.rule, model.count)
      const clauses = planner.split(instruction)
      const texts = query.lists.map((_, i) =>
        i >= query.steps ? instruction : clauses.length === query.steps ? clauses[i] : null,
      )
      const keep = new Set<string>(placed.filter((id): id is string => id !== null))
      for (const list of query.lists)
        for (const id of [...new Set(list)]
          .map((id) => ({ id, p: p.get(id)! }))
          .sort(mostProbableFirst)
          .slice(0, 3))
          keep.add(id.id)
      const candidates: CachedQuery['candidates'] = {}
      query.ids.forEach((id, i) => {
        if (!keep.has(id)) return
        candidates[id] = { p: p.get(id)!, ns: query.namespaces[i], x: query.x[i] }
        const tool = toolsById.get(id)
        if (tool) tools[id] = { name: tool.name, description: tool.description ?? '' }
      })
      cache.queries.push({
        set: set.name,
        id: query.id,
        gold: query.gold,
        steps: query.steps,
        texts,
        lists: query.lists,
        placed,
        candidates,
      })
    }
  }
  writeFileSync(values.out, JSON.stringify(cache))
  console.log(`cache: ${cache.queries.length} held-out queries written to ${values.out}`)
  process.exit(0)
}

const { fitLogistic, predictProbability } = await import('../src/learn/logistic-regression.ts')
const { tokenize, tokenizeQuery } = await import('../src/retrieve/bm25/tokenize.ts')
const { mostProbableFirst } = await import('../src/learn/decide-set.ts')
const { ensembleMargin, fitBoostedTrees } = await import('../src/learn/boosted-trees.ts')
const { GBT_SETTINGS } = await import('../src/learn/tree-settings.ts')
const { fnv1a, logit } = await import('./lib/choice-screen.ts')
const cache = JSON.parse(readFileSync(values.cache!, 'utf8')) as Cache
const sourceOf = (set: string) => set.replace(/-(single|composed)$/, '')

/** One swap candidate: slot `slot` of `q`, its placed tool `leader`, the candidate `id`. */
interface Pair {
  q: CachedQuery
  slot: number
  id: string
  label: number
  x: number[]
}
const PAIR_FEATURES = [
  'logit_c',
  'logit_l',
  'logit_gap',
  'c_rank_by_p',
  'c_list_rrank',
  'l_list_rrank',
  'name_share_c',
  'name_share_l',
  'desc_share_c',
  'desc_share_l',
  'doc_share_c',
  'doc_share_l',
  'only_c',
  'only_l',
  'only_c_share',
  'only_l_share',
  'verb_name_c',
  'verb_name_l',
  'verb_doc_c',
  'verb_doc_l',
  'object_doc_c',
  'object_doc_l',
  'last_name_c',
  'last_name_l',
  'name_jaccard',
  'same_namespace',
  'whole_slot',
  'steps',
  'log_terms',
  'c_in_other_top3',
]
const docCache = new Map<string, { name: Set<string>; desc: Set<string>; doc: Set<string> }>()
function docOf(set: string, id: string) {
  const key = `${sourceOf(set)}\u0001${id}`
  let doc = docCache.get(key)
  if (doc === undefined) {
    const tool = cache.tools[sourceOf(set)]?.[id]
    const name = new Set(tokenize(tool?.name ?? ''))
    const desc = new Set(tokenize(tool?.description ?? ''))
    doc = { name, desc, doc: new Set([...name, ...desc]) }
    docCache.set(key, doc)
  }
  return doc
}
const shareIn = (terms: readonly string[], doc: Set<string>) =>
  terms.length === 0 ? 0 : terms.filter((t) => doc.has(t)).length / terms.length

/** Each slot's top 3 by probability. */
function top3(q: CachedQuery, slot: number): string[] {
  return [...new Set(q.lists[slot])]
    .map((id) => ({ id, p: q.candidates[id]?.p ?? 0 }))
    .sort(mostProbableFirst)
    .slice(0, 3)
    .map((c) => c.id)
}

function pairsOf(q: CachedQuery): Pair[] {
  const out: Pair[] = []
  const gold = new Set(q.gold)
  const placedIds = new Set(q.placed.filter((id): id is string => id !== null))
  q.placed.forEach((leader, slot) => {
    const text = q.texts[slot]
    if (leader === null || text === null) return
    const top = top3(q, slot)
    if (!top.includes(leader)) return
    const terms = [...new Set(tokenizeQuery(text))]
    const verb = terms[0]
    const object = terms.slice(1)
    const last = terms.at(-1)
    const l = docOf(q.set, leader)
    const lc = q.candidates[leader]
    const list = q.lists[slot]
    const others = new Set<string>()
    q.lists.forEach((other, s) => {
      if (s !== slot) for (const id of top3(q, s)) others.add(id)
    })
    top.forEach((id, rank) => {
      if (id === leader || placedIds.has(id)) return
      const c = docOf(q.set, id)
      const cc = q.candidates[id]
      const onlyC = terms.filter((t) => c.doc.has(t) && !l.doc.has(t)).length
      const onlyL = terms.filter((t) => l.doc.has(t) && !c.doc.has(t)).length
      const size = Math.max(1, terms.length)
      const union = new Set([...c.name, ...l.name]).size
      const shared = [...c.name].filter((t) => l.name.has(t)).length
      const pair = [
        logit(cc.p),
        logit(lc.p),
        logit(cc.p) - logit(lc.p),
        1 / (rank + 1),
        1 / (list.indexOf(id) + 1),
        1 / (list.indexOf(leader) + 1),
        shareIn(terms, c.name),
        shareIn(terms, l.name),
        shareIn(terms, c.desc),
        shareIn(terms, l.desc),
        shareIn(terms, c.doc),
        shareIn(terms, l.doc),
        onlyC,
        onlyL,
        onlyC / size,
        onlyL / size,
        verb !== undefined && c.name.has(verb) ? 1 : 0,
        verb !== undefined && l.name.has(verb) ? 1 : 0,
        verb !== undefined && c.doc.has(verb) ? 1 : 0,
        verb !== undefined && l.doc.has(verb) ? 1 : 0,
        shareIn(object, c.doc),
        shareIn(object, l.doc),
        last !== undefined && c.name.has(last) ? 1 : 0,
        last !== undefined && l.name.has(last) ? 1 : 0,
        union === 0 ? 0 : shared / union,
        cc.ns !== null && cc.ns === lc.ns ? 1 : 0,
        slot >= q.steps ? 1 : 0,
        q.steps,
        Math.log1p(terms.length),
        others.has(id) ? 1 : 0,
      ]
      const diff = cc.x.map((v, f) => v - lc.x[f])
      out.push({
        q,
        slot,
        id,
        label: gold.has(id) && !gold.has(leader) ? 1 : 0,
        x: [...pair, ...diff, ...cc.x],
      })
    })
  })
  return out
}

const halfOf = (q: CachedQuery) => fnv1a(`${q.set}:${q.id}`) & 1
const pairs = new Map(cache.queries.map((q) => [q, pairsOf(q)]))
const sets = [...new Set(cache.queries.map((q) => q.set))]
const exact = (ids: ReadonlyArray<string | null>, gold: readonly string[]) => {
  const picked = new Set(ids.filter((id): id is string => id !== null))
  return picked.size === new Set(gold).size && gold.every((id) => picked.has(id))
}
/** `q`'s placed tools after swapping, in each slot, the leader for `choose`'s pick (if any). */
function swapped(q: CachedQuery, choose: (pairs: Pair[]) => Pair | undefined) {
  const placed = [...q.placed]
  const bySlot = new Map<number, Pair[]>()
  for (const pair of pairs.get(q)!) bySlot.set(pair.slot, [...(bySlot.get(pair.slot) ?? []), pair])
  for (const [slot, slotPairs] of bySlot) {
    const pick = choose(slotPairs)
    if (pick !== undefined && !placed.includes(pick.id)) placed[slot] = pick.id
  }
  return placed
}
/** Exact-match hits per set over `queries` under `decide`. */
function hits(queries: CachedQuery[], decide: (q: CachedQuery) => ReadonlyArray<string | null>) {
  return sets.map((set) => queries.filter((q) => q.set === set && exact(decide(q), q.gold)).length)
}
const counts = sets.map((set) => cache.queries.filter((q) => q.set === set).length)
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const pct = (h: number[], of: number[]) => h.map((n, i) => (100 * n) / Math.max(1, of[i]))
const row = (label: string, xs: number[]) =>
  console.log(`| ${label} | ${xs.map((x) => x.toFixed(2)).join(' | ')} | ${mean(xs).toFixed(2)} |`)

console.log(`seed ${cache.seed}: ${cache.queries.length} held-out queries (fold 0)`)
console.log(
  `| decision (fold 0 of seed ${cache.seed}) | ${sets.map((s, i) => `${s} (${counts[i]})`).join(' | ')} | mean |`,
)
console.log(`| --- | ${sets.map(() => '---:').join(' | ')} | ---: |`)
const shipped = hits(cache.queries, (q) => q.placed)
row('shipped', pct(shipped, counts))
row(
  'oracle: swap exactly when the candidate is gold and the leader is not',
  pct(
    hits(cache.queries, (q) =>
      swapped(q, (ps) =>
        ps
          .filter((p) => p.label === 1)
          .sort((a, b) => a.x[3] - b.x[3])
          .at(-1),
      ),
    ),
    counts,
  ),
)

const allPairs = [...pairs.values()].flat()
console.log(
  `pair pool: ${allPairs.length} swap candidates in ${new Set(allPairs.map((p) => `${p.q.set}:${p.q.id}:${p.slot}`)).size} slots, ${allPairs.filter((p) => p.label).length} labelled 1; by set: ${sets
    .map((set) => {
      const ps = allPairs.filter((p) => p.q.set === set)
      return `${set} ${ps.filter((p) => p.label).length}/${ps.length}`
    })
    .join(', ')}`,
)
const untexted = cache.queries.filter((q) => q.texts.some((t) => t === null)).length
console.log(
  `queries whose planner split differs from the rows' (clause slots not screened): ${untexted}`,
)

/** A variant: the columns it reads, and its model family. */
const VARIANTS: Array<{ label: string; pick: (x: number[]) => number[]; trees?: boolean }> = [
  { label: 'logistic: pair features + base (diff, candidate)', pick: (x) => x },
  { label: 'logistic: pair features only', pick: (x) => x.slice(0, PAIR_FEATURES.length) },
  {
    label: 'logistic: probabilities + base only (no text)',
    pick: (x) => [...x.slice(0, 6), ...x.slice(PAIR_FEATURES.length)],
  },
  { label: 'boosted trees (GBT_SETTINGS): pair features + base', pick: (x) => x, trees: true },
]
/** Fits `variant` on `train`: a pair's swap probability. */
function fitVariant(variant: (typeof VARIANTS)[number], train: Pair[]) {
  const x = train.map((p) => variant.pick(p.x))
  const y = train.map((p) => p.label)
  if (variant.trees) {
    const ensemble = fitBoostedTrees(x, y, {
      ...GBT_SETTINGS,
      features: x[0].map((_, f) => f),
    })
    return {
      weights: undefined,
      probability: (p: Pair) => 1 / (1 + Math.exp(-ensembleMargin(ensemble, variant.pick(p.x)))),
    }
  }
  const model = fitLogistic(x, y, { l2 })
  return {
    weights: model.weights,
    probability: (p: Pair) => predictProbability(model, variant.pick(p.x)),
  }
}
/** Thresholds also reported as they are (not chosen). */
const FIXED = [0.5, 0.7]
const THRESHOLDS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
for (const variant of VARIANTS) {
  const { label } = variant
  console.log(`\n== ${label}`)
  const crossed = sets.map(() => 0)
  const shippedCrossed = sets.map(() => 0)
  const fixedCrossed = new Map(FIXED.map((t) => [t, sets.map(() => 0)]))
  for (const half of [0, 1]) {
    const train = allPairs.filter((p) => halfOf(p.q) === half)
    const model = fitVariant(variant, train)
    const scores = new Map(allPairs.map((p) => [p, model.probability(p)]))
    const chooser = (threshold: number) => (ps: Pair[]) =>
      ps
        .filter((p) => scores.get(p)! >= threshold)
        .sort((a, b) => scores.get(a)! - scores.get(b)!)
        .at(-1)
    const trainQueries = cache.queries.filter((q) => halfOf(q) === half)
    const testQueries = cache.queries.filter((q) => halfOf(q) !== half)
    const trainCounts = sets.map((set) => trainQueries.filter((q) => q.set === set).length)
    const testCounts = sets.map((set) => testQueries.filter((q) => q.set === set).length)
    // The threshold is chosen inside the fit half, out of sample there: fitted on one quarter
    // (a second hash bit), its exact match summed over the other quarter's queries, both ways.
    const quarterOf = (q: CachedQuery) => (fnv1a(`${q.set}:${q.id}`) >>> 1) & 1
    const inner = THRESHOLDS.map(() => sets.map(() => 0))
    const innerShipped = sets.map(() => 0)
    for (const quarter of [0, 1]) {
      const part = fitVariant(
        variant,
        train.filter((p) => quarterOf(p.q) === quarter),
      )
      const partScores = new Map(allPairs.map((p) => [p, part.probability(p)]))
      const partChooser = (threshold: number) => (ps: Pair[]) =>
        ps
          .filter((p) => partScores.get(p)! >= threshold)
          .sort((a, b) => partScores.get(a)! - partScores.get(b)!)
          .at(-1)
      const other = trainQueries.filter((q) => quarterOf(q) !== quarter)
      hits(other, (q) => q.placed).forEach((n, i) => (innerShipped[i] += n))
      THRESHOLDS.forEach((threshold, t) =>
        hits(other, (q) => swapped(q, partChooser(threshold))).forEach(
          (n, i) => (inner[t][i] += n),
        ),
      )
    }
    let best = Infinity
    let bestMean = mean(pct(innerShipped, trainCounts))
    THRESHOLDS.forEach((threshold, t) => {
      const m = mean(pct(inner[t], trainCounts))
      if (m > bestMean) ((bestMean = m), (best = threshold))
    })
    const base = hits(testQueries, (q) => q.placed)
    const chosen = hits(testQueries, (q) => swapped(q, chooser(best)))
    console.log(
      `fitted on half ${half} (${train.length} pairs, ${train.filter((p) => p.label).length} labelled 1); threshold ${best} (mean ${bestMean.toFixed(2)} on its quarters, each scored by the other's fit)`,
    )
    row(`  half ${1 - half}, shipped`, pct(base, testCounts))
    row(`  half ${1 - half}, swap at the chosen threshold`, pct(chosen, testCounts))
    for (const threshold of FIXED) {
      const fixed = hits(testQueries, (q) => swapped(q, chooser(threshold)))
      row(`  half ${1 - half}, swap at ${threshold}`, pct(fixed, testCounts))
      fixed.forEach((n, i) => (fixedCrossed.get(threshold)![i] += n))
    }
    chosen.forEach((n, i) => (crossed[i] += n))
    base.forEach((n, i) => (shippedCrossed[i] += n))
    if (label.endsWith('pair features only') && model.weights !== undefined) {
      const weights = model.weights
        .slice(0, PAIR_FEATURES.length)
        .map((w, f) => `${PAIR_FEATURES[f]} ${w.toFixed(2)}`)
        .join(', ')
      console.log(`  standardised weights: ${weights}`)
    }
  }
  row('both halves: shipped', pct(shippedCrossed, counts))
  row('both halves: swap, fitted and thresholded on the other half', pct(crossed, counts))
  for (const threshold of FIXED)
    row(
      `both halves: swap at ${threshold}, fitted on the other half`,
      pct(fixedCrossed.get(threshold)!, counts),
    )
}
