/**
 * Round 56 (plan26, #10): a one-clause request with two needs, the second need's tool far down
 * the request's one list. Screened on TRAINING data only (ToolPlanner G3 minus the test ids and
 * texts, its single-clause and composed sets, ToolLens train; no test query read).
 *
 * `--out FILE` builds the cache: the shipped recipe (`toolsel train --learned-dense
 * --dense-free-acceptance`) refitted on folds 1-4 of `--seed`, its rule and count chosen on fold
 * 0 (training-dev-setup.ts `shippedRecipeFit`, as bench/leader-swap-dev.ts does), the fitted
 * model itself, and every gold-labelled set's fold-0 rows with their instructions. `--cache FILE`
 * reads one and screens:
 *
 * 1. The ceiling: each missed gold tool (not placed by the shipped decision) that ranks 4th or
 *    later by probability in its best request list (a planner clause or the whole instruction):
 *    how often it is top-1 / top-3 (placed tools skipped) of the list of a SUB-QUERY of that
 *    request: (a) the oracle best contiguous window of its content words (BM25 over every
 *    window; the learned selector on the windows whose BM25 top 3 hold it), (b) the oracle best
 *    side of a boundary the planner did not cut (comma, semicolon, and, or, then, also, plus, as
 *    well as), (c) the request minus the words of its placed tool's name and description, (d) the
 *    oracle best window of 4 content words every 2. "Learned": the shipped model run on the
 *    sub-query as a one-clause request (its dense features through the model's stored map).
 * 2. A second list per request slot with a placed tool, from (b), (c) or (d) (no gold read): the
 *    most probable unplaced top candidate over its sub-queries, added to the set when a scorer
 *    (logistic, or boosted trees with GBT_SETTINGS; 20 features of the candidate in the
 *    sub-query's list and in the request's, the leader, and the words) says so. Fitted on one
 *    hashed half of fold 0, its threshold chosen inside that half (fitted on one quarter, scored
 *    on the other, both ways), scored on the other half; both ways, summed. With the oracle (add
 *    exactly the gold ones: the lever's ceiling) and "add every one".
 *
 *   npx tsx bench/second-need-dev.ts --data ../shared/data --seed 1 --out /tmp/plan26/seed1.json
 *   npx tsx bench/second-need-dev.ts --data ../shared/data --cache /tmp/plan26/seed1.json
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { benchArgs, usageError } from './bench-args.ts'
import type { QueryRows } from '../src/learn/training-rows.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    cache: { type: 'string' },
  },
})
if ((values.out === undefined) === (values.cache === undefined))
  usageError(import.meta.url, 'give one of --out (build the cache) or --cache (screen it)')
const seed = Number(values.seed)
if (!Number.isInteger(seed) || seed < 1) usageError(import.meta.url, '--seed: a positive integer')

/** One held-out query of the cache: its rows, instruction, and the source it came from. */
interface CachedQuery extends QueryRows {
  set: string
  source: string
  instruction: string
  /** The shipped model's probability of each candidate, as fitted (a check of the cached model). */
  p: number[]
}
interface Cache {
  seed: number
  model: unknown
  queries: CachedQuery[]
}

if (values.out !== undefined) {
  const { shippedRecipeFit, trainingSetCases } = await import('./training-dev-setup.ts')
  const { foldOf, score } = await import('../src/learn/train-model.ts')
  const { sources, base, rows, model } = await shippedRecipeFit(values.data!, seed)
  const cases = trainingSetCases(sources, base)
  const cache: Cache = { seed, model, queries: [] }
  const round = (v: number) => Math.round(v * 1e6) / 1e6
  for (const set of rows.sets) {
    if (set.countOnly) continue
    const entry = cases.get(set.name)
    if (entry === undefined) throw new Error(`no cases for ${set.name}`)
    const instructions = new Map(entry.cases.map((c) => [c.id, c.instruction]))
    for (const query of set.queries) {
      if (foldOf(query.id, seed) !== 0) continue
      const instruction = instructions.get(query.id)
      if (instruction === undefined) throw new Error(`no instruction for ${set.name} ${query.id}`)
      cache.queries.push({
        ...query,
        x: query.x.map((row) => row.map(round)),
        set: set.name,
        source: entry.source.name,
        instruction,
        p: score(model, query).map((c) => round(c.p)),
      })
    }
  }
  writeFileSync(values.out, JSON.stringify(cache))
  console.log(`cache: ${cache.queries.length} held-out queries written to ${values.out}`)
  process.exit(0)
}

const started = performance.now()
const { trainingDevSetup } = await import('./training-dev-setup.ts')
const { decisionInput, score } = await import('../src/learn/train-model.ts')
const { decideTools } = await import('../src/learn/count-model.ts')
const { mostProbableFirst } = await import('../src/learn/decide-set.ts')
const { scoreCandidate } = await import('../src/learn/boosted-trees.ts')
const { extractCandidateFeatures } = await import('../src/learn/candidate-features.ts')
const { denseToolVectors } = await import('../src/learn/dense-encoder.ts')
const { mappedToolVectors } = await import('../src/learn/dense-map.ts')
const { Bm25Retriever } = await import('../src/retrieve/bm25/bm25-retriever.ts')
const { searchFunction } = await import('../src/learn/training-rows.ts')
const { trainingPlanner } = await import('../src/plan/rule-planner.ts')
const { tokenize, tokenizeQuery } = await import('../src/retrieve/bm25/tokenize.ts')
const { fitLogistic, predictProbability } = await import('../src/learn/logistic-regression.ts')
const { ensembleMargin, fitBoostedTrees } = await import('../src/learn/boosted-trees.ts')
const { GBT_SETTINGS } = await import('../src/learn/tree-settings.ts')
const { fnv1a, logit } = await import('./lib/choice-screen.ts')
type Model = ReturnType<typeof import('../src/learn/train-model.ts').fitTrainingSets>
type Tool = import('../src/library/tool.ts').Tool

const cache = JSON.parse(readFileSync(values.cache!, 'utf8')) as Cache
const model = cache.model as Model
const { sources, base } = await trainingDevSetup(values.data!, cache.seed, { shapes: false })
const plainDense = await denseToolVectors()
if (plainDense === undefined) throw new Error('No static word vectors (npm ci).')
const dense = model.denseMap ? mappedToolVectors(plainDense, model.denseMap) : plainDense
const planner = trainingPlanner(base.maxSteps)
const K = 15

/** One source's library: BM25 search, tool lookup, and the learned selector on a standalone request. */
interface Library {
  search: (text: string) => Array<{ id: string; score: number }>
  tool: (id: string) => Tool
  doc: (id: string) => { name: Set<string>; doc: Set<string> }
}
const libraries = new Map<string, Library>()
for (const source of sources) {
  const byId = new Map(source.tools.map((tool) => [tool.id, tool]))
  const docs = new Map<string, { name: Set<string>; doc: Set<string> }>()
  libraries.set(source.name, {
    search: searchFunction(Bm25Retriever.build(source.tools, base.bm25), K),
    tool: (id) => byId.get(id)!,
    doc: (id) => {
      let doc = docs.get(id)
      if (doc === undefined) {
        const tool = byId.get(id)!
        const name = new Set(tokenize(tool.name))
        doc = { name, doc: new Set([...name, ...tokenize(tool.description ?? '')]) }
        docs.set(id, doc)
      }
      return doc
    },
  })
}

/** A sub-query's list: BM25 order and the learned selector's (the sub-query as a one-clause request). */
interface SubList {
  text: string
  bm25: Array<{ id: string; score: number }>
  learned: Array<{ id: string; p: number }>
}
let subQueries = 0
function subList(library: Library, text: string, learned = true): SubList {
  subQueries += 1
  const bm25 = library.search(text)
  if (!learned || bm25.length === 0) return { text, bm25, learned: [] }
  const features = extractCandidateFeatures({
    instruction: text,
    whole: bm25,
    steps: [{ text, candidates: bm25 }],
    tool: library.tool,
    dense: dense.input(library.tool),
  })
  const scored = features
    .map((f) => scoreCandidate(model, f.id, f.values))
    .map(({ id, p }) => ({ id, p }))
    .sort(mostProbableFirst)
  return { text, bm25, learned: scored }
}
/** `id`'s rank (0-based) in `ids` once `skip`'s ids are taken out; Infinity when absent. */
function rankWithout(ids: readonly string[], id: string, skip: ReadonlySet<string>): number {
  let rank = 0
  for (const other of ids) {
    if (other === id) return rank
    if (!skip.has(other)) rank += 1
  }
  return Infinity
}

/** The content words of a text, in order (words with a BM25 term), as written. */
const contentWords = (text: string) =>
  text.split(/\s+/u).filter((word) => word !== '' && tokenizeQuery(word).length > 0)
/** (b): where a request could be cut and the planner did not: the two sides of each. */
const BOUNDARY = /,|;|\b(?:and|or|then|also|plus|as well as)\b/giu
function boundarySides(text: string): string[] {
  const sides: string[] = []
  for (const match of text.matchAll(BOUNDARY)) {
    const left = text.slice(0, match.index).trim()
    const right = text.slice(match.index! + match[0].length).trim()
    for (const side of [left, right])
      if (contentWords(side).length > 0 && !sides.includes(side)) sides.push(side)
  }
  return sides
}
/** (d): windows of WINDOW content words, every STRIDE words (the last one reaching the end). */
const WINDOW = 4
const STRIDE = 2
function strideWindows(text: string): string[] {
  const words = contentWords(text)
  if (words.length <= WINDOW) return []
  const out: string[] = []
  for (let from = 0; ; from += STRIDE) {
    const start = Math.min(from, words.length - WINDOW)
    out.push(words.slice(start, start + WINDOW).join(' '))
    if (start + WINDOW >= words.length) break
  }
  return out
}
/** (c): the request without the words the leader's name and description hold. */
function withoutLeader(library: Library, text: string, leader: string): string {
  const doc = library.doc(leader).doc
  return text
    .split(/\s+/u)
    .filter((word) => {
      const terms = tokenizeQuery(word)
      return terms.length > 0 && !terms.every((t) => doc.has(t))
    })
    .join(' ')
}

/** One held-out query, decided by the shipped model. */
interface Decided {
  q: CachedQuery
  library: Library
  p: Map<string, number>
  placed: Array<string | null>
  texts: string[]
}
let maxDiff = 0
const decided: Decided[] = cache.queries.map((q) => {
  const scored = score(model, q)
  scored.forEach((c, i) => (maxDiff = Math.max(maxDiff, Math.abs(c.p - q.p[i]))))
  const placed = decideTools(decisionInput(q, scored), model.rule, model.count)
  const clauses = planner.split(q.instruction)
  const texts = q.lists.map((_, i) =>
    i < q.steps && clauses.length === q.steps ? clauses[i] : q.instruction,
  )
  return {
    q,
    library: libraries.get(q.source)!,
    p: new Map(scored.map((c) => [c.id, c.p])),
    placed,
    texts,
  }
})
console.log(
  `seed ${cache.seed}: ${decided.length} held-out queries (fold 0); cached model reproduces the fitted probabilities within ${maxDiff.toExponential(1)}`,
)
const sets = [...new Set(cache.queries.map((q) => q.set))]
const byP = (d: Decided, list: readonly string[]) =>
  [...new Set(list)]
    .map((id) => ({ id, p: d.p.get(id)! }))
    .sort(mostProbableFirst)
    .map((c) => c.id)

// ---- 1. The ceiling: missed gold tools ranked 4+ in their best request list.
interface Missed {
  d: Decided
  id: string
  slot: number
  /** The best list's top-1 by probability is a gold tool already placed (two needs, one request). */
  twoNeeds: boolean
}
const missed: Missed[] = []
const census = new Map(sets.map((set) => [set, { missed: 0, unretrieved: 0, rank: [0, 0, 0, 0] }]))
for (const d of decided) {
  const placedIds = new Set(d.placed.filter((id): id is string => id !== null))
  const gold = new Set(d.q.gold)
  for (const id of gold) {
    if (placedIds.has(id)) continue
    const c = census.get(d.q.set)!
    c.missed += 1
    let best = { rank: Infinity, slot: -1 }
    d.q.lists.forEach((list, slot) => {
      const rank = byP(d, list).indexOf(id)
      if (rank >= 0 && rank < best.rank) best = { rank, slot }
    })
    if (best.slot < 0) {
      c.unretrieved += 1
      continue
    }
    c.rank[Math.min(3, best.rank)] += 1
    if (best.rank < 3) continue
    const top = byP(d, d.q.lists[best.slot])[0]
    missed.push({ d, id, slot: best.slot, twoNeeds: gold.has(top) && placedIds.has(top) })
  }
}
console.log('\nmissed gold tools (not placed) by their best rank by probability in a request list:')
for (const [set, c] of census)
  console.log(
    `  ${set}: missed ${c.missed}, in no list ${c.unretrieved}, rank 1 / 2 / 3 / 4+: ${c.rank.join(' / ')}`,
  )

/** Best 0-based rank of `id` over `lists` (BM25 order and learned order), placed tools skipped. */
function bestRanks(lists: readonly SubList[], id: string, skip: ReadonlySet<string>) {
  const best = (order: (list: SubList) => ReadonlyArray<{ id: string }>) =>
    Math.min(
      Infinity,
      ...lists.map((list) =>
        rankWithout(
          order(list).map((c) => c.id),
          id,
          skip,
        ),
      ),
    )
  return { bm25: best((list) => list.bm25), learned: best((list) => list.learned) }
}
const MAX_WINDOW_WORDS = 24
const ceilingStarted = performance.now()
type Shares = { n: number; top1: number; top3: number }
const ceiling = new Map<string, Shares>()
const bump = (key: string, rank: number) => {
  const s = ceiling.get(key) ?? { n: 0, top1: 0, top3: 0 }
  s.n += 1
  if (rank < 1) s.top1 += 1
  if (rank < 3) s.top3 += 1
  ceiling.set(key, s)
}
for (const m of missed) {
  const { d } = m
  const text = d.texts[m.slot]
  const skip = new Set(d.placed.filter((id): id is string => id !== null))
  const leader = d.placed[m.slot] ?? byP(d, d.q.lists[m.slot])[0]
  const words = contentWords(text).slice(0, MAX_WINDOW_WORDS)
  // (a) every contiguous window of content words shorter than the request: BM25 for all, the
  // learned selector on the windows whose BM25 list holds the tool in its top 3.
  const windows: SubList[] = []
  for (let from = 0; from < words.length; from += 1)
    for (let to = from + 1; to <= words.length; to += 1)
      if (to - from < words.length) {
        const list = subList(d.library, words.slice(from, to).join(' '), false)
        if (
          rankWithout(
            list.bm25.map((c) => c.id),
            m.id,
            skip,
          ) < 3
        )
          windows.push(subList(d.library, list.text))
        else windows.push(list)
      }
  const a = bestRanks(windows, m.id, skip)
  const b = bestRanks(
    boundarySides(text).map((side) => subList(d.library, side)),
    m.id,
    skip,
  )
  const c = bestRanks([subList(d.library, withoutLeader(d.library, text, leader))], m.id, skip)
  const w = bestRanks(
    strideWindows(text).map((window) => subList(d.library, window)),
    m.id,
    skip,
  )
  for (const group of [d.q.set, m.twoNeeds ? `${d.q.set} (two needs)` : undefined]) {
    if (group === undefined) continue
    bump(`${group}\u0001n`, 0)
    bump(`${group}\u0001(a) oracle window, BM25`, a.bm25)
    bump(`${group}\u0001(a) oracle window, learned (windows with it in BM25's top 3)`, a.learned)
    bump(`${group}\u0001(b) oracle boundary side, BM25`, b.bm25)
    bump(`${group}\u0001(b) oracle boundary side, learned`, b.learned)
    bump(`${group}\u0001(c) request minus leader's words, BM25`, c.bm25)
    bump(`${group}\u0001(c) request minus leader's words, learned`, c.learned)
    bump(`${group}\u0001(d) oracle ${WINDOW}-word window every ${STRIDE}, BM25`, w.bm25)
    bump(`${group}\u0001(d) oracle ${WINDOW}-word window every ${STRIDE}, learned`, w.learned)
  }
}
console.log(
  `\nceiling (missed gold tools at rank 4+ in their best request list; top-1 / top-3 of a sub-query's list, placed tools skipped), ${subQueries} sub-queries in ${((performance.now() - ceilingStarted) / 1000).toFixed(0)} s:`,
)
console.log('| missed tool, rank 4+ | sub-query | top-1 | top-3 |')
console.log('| --- | --- | ---: | ---: |')
const groups = [...new Set([...ceiling.keys()].map((key) => key.split('\u0001')[0]))]
for (const group of groups) {
  const n = ceiling.get(`${group}\u0001n`)!.n
  for (const [key, s] of ceiling) {
    const [g, label] = key.split('\u0001')
    if (g !== group || label === 'n') continue
    const pct = (x: number) => `${x} (${((100 * x) / n).toFixed(1)} %)`
    console.log(`| ${group} (${n}) | ${label} | ${pct(s.top1)} | ${pct(s.top3)} |`)
  }
}

// ---- 2. A second list per request: its top candidate added when a scorer says so.
/** One addition: slot `slot` of `d`'s request, its second list's top candidate `id`. */
interface Addition {
  d: Decided
  slot: number
  id: string
  label: number
  x: number[]
}
const ADDITION_FEATURES = [
  'logit_sub',
  'logit_gap_sub',
  'bm25_rrank_sub',
  'bm25_ratio_sub',
  'log_bm25_sub',
  'logit_request',
  'in_request_pool',
  'rrank_request',
  'logit_leader',
  'placed',
  'steps',
  'whole_slot',
  'log_terms',
  'kept_share',
  'sub_share_c',
  'sub_share_l',
  'name_jaccard',
  'same_namespace',
  'c_in_other_top3',
  'sides',
]
const terms = (text: string) => [...new Set(tokenizeQuery(text))]
const shareIn = (ts: readonly string[], doc: ReadonlySet<string>) =>
  ts.length === 0 ? 0 : ts.filter((t) => doc.has(t)).length / ts.length

/** The second lists of a request: (b) its boundary sides, (c) the request minus the leader's words. */
const SECOND: Record<string, (d: Decided, slot: number, leader: string) => string[]> = {
  '(b) best boundary side': (d, slot) => boundarySides(d.texts[slot]),
  "(c) request minus leader's words": (d, slot, leader) => [
    withoutLeader(d.library, d.texts[slot], leader),
  ],
  [`(d) best ${WINDOW}-word window every ${STRIDE}`]: (d, slot) => strideWindows(d.texts[slot]),
}
function additionsOf(d: Decided, variant: string): Addition[] {
  const out: Addition[] = []
  const gold = new Set(d.q.gold)
  const placedIds = new Set(d.placed.filter((id): id is string => id !== null))
  const index = new Map(d.q.ids.map((id, i) => [id, i]))
  d.placed.forEach((leader, slot) => {
    if (leader === null) return
    const texts = SECOND[variant](d, slot, leader).filter((t) => contentWords(t).length > 0)
    let best: { list: SubList; rank: number } | undefined
    for (const text of texts) {
      const list = subList(d.library, text)
      const rank = list.learned.findIndex((c) => !placedIds.has(c.id))
      if (rank < 0) continue
      if (best === undefined || list.learned[rank].p > best.list.learned[best.rank].p)
        best = { list, rank }
    }
    if (best === undefined) return
    const { list, rank } = best
    const c = list.learned[rank]
    const next = list.learned.slice(rank + 1).find((o) => !placedIds.has(o.id))
    const bm25Rank = list.bm25.findIndex((o) => o.id === c.id)
    const bm25Score = bm25Rank < 0 ? 0 : list.bm25[bm25Rank].score
    const requestTerms = terms(d.texts[slot])
    const subTerms = terms(list.text)
    const cDoc = d.library.doc(c.id)
    const lDoc = d.library.doc(leader)
    const union = new Set([...cDoc.name, ...lDoc.name]).size
    const shared = [...cDoc.name].filter((t) => lDoc.name.has(t)).length
    const requestRank = byP(d, d.q.lists[slot]).indexOf(c.id)
    const ci = index.get(c.id)
    const li = index.get(leader)
    const otherTop3 = d.q.lists.some(
      (list, s) => s !== slot && byP(d, list).slice(0, 3).includes(c.id),
    )
    out.push({
      d,
      slot,
      id: c.id,
      label: gold.has(c.id) ? 1 : 0,
      x: [
        logit(c.p),
        logit(c.p) - logit(next?.p ?? 0),
        bm25Rank < 0 ? 0 : 1 / (bm25Rank + 1),
        bm25Rank < 0 ? 0 : bm25Score / Math.max(1e-9, list.bm25[0].score),
        Math.log1p(bm25Score),
        logit(d.p.get(c.id) ?? 0),
        ci === undefined ? 0 : 1,
        requestRank < 0 ? 0 : 1 / (requestRank + 1),
        logit(d.p.get(leader) ?? 0),
        placedIds.size,
        d.q.steps,
        slot >= d.q.steps ? 1 : 0,
        Math.log1p(requestTerms.length),
        requestTerms.length === 0 ? 0 : subTerms.length / requestTerms.length,
        shareIn(subTerms, cDoc.doc),
        shareIn(subTerms, lDoc.doc),
        union === 0 ? 0 : shared / union,
        ci !== undefined && li !== undefined && d.q.namespaces[ci] !== null
          ? Number(d.q.namespaces[ci] === d.q.namespaces[li])
          : 0,
        otherTop3 ? 1 : 0,
        texts.length,
      ],
    })
  })
  return out
}

const halfOf = (d: Decided) => fnv1a(`${d.q.set}:${d.q.id}`) & 1
const quarterOf = (d: Decided) => (fnv1a(`${d.q.set}:${d.q.id}`) >>> 1) & 1
const exact = (ids: ReadonlyArray<string | null>, gold: readonly string[]) => {
  const picked = new Set(ids.filter((id): id is string => id !== null))
  return picked.size === new Set(gold).size && gold.every((id) => picked.has(id))
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const pct = (h: number[], of: number[]) => h.map((n, i) => (100 * n) / Math.max(1, of[i]))
const row = (label: string, xs: number[]) =>
  console.log(`| ${label} | ${xs.map((x) => x.toFixed(2)).join(' | ')} | ${mean(xs).toFixed(2)} |`)
const countsOf = (ds: readonly Decided[]) =>
  sets.map((set) => ds.filter((d) => d.q.set === set).length)
/** Exact-match hits per set over `ds`, the placed tools plus the additions `accept` takes. */
function hits(
  ds: readonly Decided[],
  additions: ReadonlyMap<Decided, Addition[]>,
  accept: (a: Addition) => boolean,
) {
  return sets.map(
    (set) =>
      ds.filter(
        (d) =>
          d.q.set === set &&
          exact(
            [...d.placed, ...(additions.get(d) ?? []).filter(accept).map((a) => a.id)],
            d.q.gold,
          ),
      ).length,
  )
}
const THRESHOLDS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
const FAMILIES: Array<{ label: string; trees: boolean }> = [
  { label: 'logistic', trees: false },
  { label: 'boosted trees (GBT_SETTINGS)', trees: true },
]
/** Fits a family on `train`: an addition's probability of being a gold tool. */
function fitFamily(trees: boolean, train: readonly Addition[]): (a: Addition) => number {
  const x = train.map((a) => a.x)
  const y = train.map((a) => a.label)
  if (trees) {
    const ensemble = fitBoostedTrees(x, y, { ...GBT_SETTINGS, features: x[0].map((_, f) => f) })
    return (a) => 1 / (1 + Math.exp(-ensembleMargin(ensemble, a.x)))
  }
  const fitted = fitLogistic(x, y, { l2: 1 })
  return (a) => predictProbability(fitted, a.x)
}
/** The threshold `fit` reaches its best exact match at on `ds`, fitted on one quarter, scored on the other. */
function chooseThreshold(
  trees: boolean,
  ds: readonly Decided[],
  additions: ReadonlyMap<Decided, Addition[]>,
): number {
  const totals = THRESHOLDS.map(() => sets.map(() => 0))
  const shipped = sets.map(() => 0)
  for (const quarter of [0, 1]) {
    const train = ds.filter((d) => quarterOf(d) === quarter).flatMap((d) => additions.get(d)!)
    const other = ds.filter((d) => quarterOf(d) !== quarter)
    const probability = fitFamily(trees, train)
    hits(other, additions, () => false).forEach((n, i) => (shipped[i] += n))
    THRESHOLDS.forEach((threshold, t) =>
      hits(other, additions, (a) => probability(a) >= threshold).forEach(
        (n, i) => (totals[t][i] += n),
      ),
    )
  }
  const counts = countsOf(ds)
  let best = { threshold: Infinity, mean: mean(pct(shipped, counts)) }
  THRESHOLDS.forEach((threshold, t) => {
    const m = mean(pct(totals[t], counts))
    if (m > best.mean) best = { threshold, mean: m }
  })
  return best.threshold
}

const counts = countsOf(decided)
console.log(
  `\n| fold 0 of seed ${cache.seed}, exact match % | ${sets.map((s, i) => `${s} (${counts[i]})`).join(' | ')} | mean |`,
)
console.log(`| --- | ${sets.map(() => '---:').join(' | ')} | ---: |`)
row(
  'shipped',
  pct(
    hits(decided, new Map(), () => false),
    counts,
  ),
)
const byVariant = new Map<string, Map<Decided, Addition[]>>()
for (const variant of Object.keys(SECOND)) {
  const variantStarted = performance.now()
  const additions = new Map(decided.map((d) => [d, additionsOf(d, variant)]))
  byVariant.set(variant, additions)
  const all = [...additions.values()].flat()
  row(
    `${variant}: oracle (add exactly the gold ones; ${all.filter((a) => a.label).length} of ${all.length} additions)`,
    pct(
      hits(decided, additions, (a) => a.label === 1),
      counts,
    ),
  )
  row(
    `${variant}: add every one`,
    pct(
      hits(decided, additions, () => true),
      counts,
    ),
  )
  for (const { label, trees } of FAMILIES) {
    const crossed = sets.map(() => 0)
    const fixed = sets.map(() => 0)
    const chosen: number[] = []
    for (const half of [0, 1]) {
      const fitHalf = decided.filter((d) => halfOf(d) === half)
      const test = decided.filter((d) => halfOf(d) !== half)
      const probability = fitFamily(
        trees,
        fitHalf.flatMap((d) => additions.get(d)!),
      )
      const threshold = chooseThreshold(trees, fitHalf, additions)
      chosen.push(threshold)
      hits(test, additions, (a) => probability(a) >= threshold).forEach((n, i) => (crossed[i] += n))
      hits(test, additions, (a) => probability(a) >= 0.5).forEach((n, i) => (fixed[i] += n))
    }
    row(
      `${variant}: ${label}, threshold chosen in the fit half (${chosen.join(', ')})`,
      pct(crossed, counts),
    )
    row(`${variant}: ${label}, threshold 0.5`, pct(fixed, counts))
  }
  console.log(
    `  (${variant}: ${all.length} additions, ${((performance.now() - variantStarted) / 1000).toFixed(0)} s)`,
  )
}
const union = new Map(
  decided.map((d) => [d, [...byVariant.values()].flatMap((additions) => additions.get(d)!)]),
)
row(
  '(b), (c) and (d) together: oracle (add every gold one of the three)',
  pct(
    hits(decided, union, (a) => a.label === 1),
    counts,
  ),
)
// The most one sub-query's top-1 could add: per slot with a placed tool, a gold tool that is the
// BM25 top-1 (placed tools skipped) of some window of its content words shorter than the request.
const windowStarted = performance.now()
const windowAdditions = new Map(
  decided.map((d) => {
    const placedIds = new Set(d.placed.filter((id): id is string => id !== null))
    const gold = new Set(d.q.gold)
    const out: Addition[] = []
    d.placed.forEach((leader, slot) => {
      if (leader === null) return
      const words = contentWords(d.texts[slot]).slice(0, MAX_WINDOW_WORDS)
      for (let from = 0; from < words.length; from += 1)
        for (let to = from + 1; to <= words.length && to - from < words.length; to += 1) {
          const top = subList(d.library, words.slice(from, to).join(' '), false).bm25.find(
            (c) => !placedIds.has(c.id),
          )
          if (top !== undefined && gold.has(top.id) && !out.some((a) => a.id === top.id)) {
            out.push({ d, slot, id: top.id, label: 1, x: [] })
            return
          }
        }
    })
    return [d, out]
  }),
)
row(
  `(a) any window's BM25 top-1, one per slot: oracle (${((performance.now() - windowStarted) / 1000).toFixed(0)} s)`,
  pct(
    hits(decided, windowAdditions, () => true),
    counts,
  ),
)
console.log(
  `\nscreen: ${((performance.now() - started) / 1000).toFixed(0)} s, ${subQueries} sub-queries`,
)
