/**
 * Scoring a query against BM25 postings, two ways with the same result:
 *
 * - `searchExhaustive` (term at a time): sums every posting of every query term into per-document
 *   accumulators, then keeps the top k. Cost: the total length of the query terms' postings. Used
 *   when a query has a term of negative weight (a negative field weight), which pruning can't bound.
 * - `searchWindowed` (MaxScore, Turtle & Flood 1995, a window of documents at a time as Lucene's
 *   MaxScoreBulkScorer): terms sorted by their largest possible contribution; those whose bounds
 *   together can't lift a document above the current k-th score (or above `minScore`) are
 *   "non-essential". Window by window (16,384 documents), the essential terms' postings are summed
 *   term at a time into small accumulators, and only the documents they hit get the non-essential
 *   terms' weights (galloping search), while they can still make the top k. Common words (long
 *   postings, low weight) become non-essential after the first window, so a query costs about
 *   the postings of its rare terms, and a long query (a whole instruction of 20 terms) pays no
 *   per-document merge of its lists. The highest non-essential terms that have few postings in a
 *   window, against the essential terms' there, are summed too (without marking documents seen)
 *   instead of searched for each document seen.
 *
 * A score is `round(Σ tool weights + expansionWeight × Σ expansion weights)` in millionths: both
 * sums are exact integers, so the order of the additions does not change a score and both ways
 * give identical results (a test compares them on random queries).
 * @module
 */
import { TopK, type ScoredPosition } from '../top-k.ts'
import { WEIGHT_SCALE, type Bm25Postings } from './bm25-postings.ts'

export interface QueryTerm {
  /** Whether the term is from the expansion index (scaled by the examples weight). */
  expansion: boolean
  /**
   * The index's postings arrays; the term's are `docs[from … to-1]` and `weights[from … to-1]`
   * (offsets, not `subarray` views: a query made two views per term, each a typed-array object
   * allocated through the species lookup; bench/README.md, round 13).
   */
  docs: Int32Array
  weights: Int32Array
  from: number
  to: number
  /** Occurrences of the term in the query. */
  count: number
  /** Largest contribution to a score, in millionths. */
  bound: number
  /** Smallest (the pruning needs every contribution positive). */
  least: number
  /** A posting's contribution is `factor × weight` (the count, times the examples weight). */
  factor: number
  /** The index and the term's id there (for its k-th largest weight, `kthLargestWeight`). */
  postings: Bm25Postings
  id: number
}

/**
 * A term's k-th largest weight seeds a query's threshold (`searchWindowed`) when the term has at
 * most this many postings: found once per index, k and term (a sort of its weights), so the
 * first query with a common term pays no sort of tens of thousands of weights. The seed comes
 * from the query's highest-weighted terms, which are the rare ones.
 */
const KTH_WEIGHT_POSTINGS = 8192

/** No k-th largest weight known yet (weights are positive where it is used). */
const UNKNOWN = -0x80000000

/** Per index and k: each term's k-th largest weight (`UNKNOWN` until its first query). */
const kthWeights = new WeakMap<Bm25Postings, Map<number, Int32Array>>()

/**
 * Values of k kept per index (4 bytes per vocabulary term each): requests choose k, and without a
 * cap a client cycling through k = 1…64 would make 64 vocabulary-sized arrays. A query with
 * another k simply starts without the seed (same answers, the search is only slower).
 */
const KTH_WEIGHT_KS = 4

/**
 * Per-term k-th largest weights of the index for `k` (the array is filled as terms are queried),
 * or undefined when the index already keeps `KTH_WEIGHT_KS` other values of k.
 */
function kthWeightsOf(postings: Bm25Postings, k: number): Int32Array | undefined {
  let byK = kthWeights.get(postings)
  if (byK === undefined) {
    byK = new Map()
    kthWeights.set(postings, byK)
  }
  let weights = byK.get(k)
  if (weights === undefined) {
    if (byK.size >= KTH_WEIGHT_KS) return undefined
    weights = new Int32Array(postings.offsets.length - 1).fill(UNKNOWN)
    byK.set(k, weights)
  }
  return weights
}

/** The term's k-th largest weight (it has at least k postings), found at its first query. */
function kthLargestWeight(term: QueryTerm, k: number, known: Int32Array): number {
  let weight = known[term.id]
  if (weight === UNKNOWN) {
    const sorted = term.weights.slice(term.from, term.to).sort()
    weight = sorted[sorted.length - k]
    known[term.id] = weight
  }
  return weight
}

/**
 * Documents per window of `searchWindowed`: its accumulators (2 × 128 KiB of doubles, 64 KiB of
 * a plain window's 32-bit sums) stay in the L2 cache. Each window has a fixed cost (its loops over
 * the terms, a galloping search per term not summed), and with the windows plain from the seed on
 * (round 14) that cost weighs more than the accumulators' cache misses: 8,192 gave BM25 0.96 of
 * 4,096 at 100k tools and 0.99 at 10k (round 14), and 16,384 0.97 of 8,192 at 100k and 0.98 at
 * 10k with the 32-bit sums (round 43: bench/README.md; 4,096 until round 13, 8,192 until 42).
 */
export const WINDOW_DOCUMENTS = 16384

/**
 * A non-essential term's postings inside a window are summed like an essential term's (without
 * marking documents seen) when they number at most this share of the essential terms' postings
 * summed there: summing and clearing a posting costs a few nanoseconds, searching the term's
 * postings for a document seen (galloping) several times that, and a window whose terms are all
 * summed scores its documents without any search. 2 was the fastest of 0.25-16 on the benchmark
 * queries at 10k and 100k tools once the documents seen were walked in hit order (round 10; 0.5
 * before it, round 8: bench/README.md).
 */
const NON_ESSENTIAL_SUM_SHARE = 2

/**
 * `NON_ESSENTIAL_SUM_SHARE` of a plain window, where a non-essential term is summed into the
 * documents seen only and leaves nothing to clear (round 12, after the share was chosen), into
 * 32-bit sums (round 42): BM25 with 4 measured 0.91-0.97 of 2 at 100k tools (with doubles) and
 * 0.98-1.0 at 10k (bench/README.md, round 42; 1 was 1.11, 8 0.93, 16 1.22 at 100k).
 */
const PLAIN_NON_ESSENTIAL_SUM_SHARE = 4

/**
 * Until the top k is full (the first window), a threshold is seeded from the window's own sums:
 * the essential terms are summed highest bound first, and before a term with at least this many
 * postings in the window per document seen so far, the k-th largest sum of those documents (a
 * lower bound of k scores) may make it and the lower terms non-essential. 2 and 4 were alike
 * (BM25 search 0.95-0.96 of without at 100k tools, 0.84-0.87 at 10k; bench/README.md, round 11).
 */
const SEED_CHECK_SHARE = 2

/**
 * The most the bounds of a query's terms may add up to for its windows to be plain (in
 * millionths; `SearchScratch.windowSums` holds 32-bit integers). A term's bound is about 14 × 10^6
 * at 100k tools, so a query of 24 terms stays far below it; one above it takes the other windows,
 * with the same answers.
 */
const MOST_PLAIN_BOUND = 0x7fffffff

/**
 * Stands in `windowSums` for a document kept in a plain window (its sum put aside): any later hit
 * then reads at most `KEPT + MOST_PLAIN_BOUND` = -1 with the terms not summed, below the limit.
 */
const KEPT = -0x80000000

/** The largest k that seeds a threshold (`SEED_CHECK_SHARE`); the default k is 15. */
const SEED_MAX_K = 64

/** `kthLargestSum`'s heap. */
const seedHeap = new Float64Array(SEED_MAX_K)

/** Reusable per-document accumulators of an index; safe to share because search is synchronous. */
export class SearchScratch {
  readonly tool: Float64Array
  readonly expansion: Float64Array
  readonly seen: Uint8Array
  readonly touched: Int32Array
  /**
   * `searchWindowed`'s per-window sums (a plain window's: those of the documents it keeps for the
   * terms not summed, `windowSums` holding the rest).
   */
  readonly windowTool: Float64Array
  /**
   * A plain window's sums (`searchWindowed`), in millionths: 32-bit integers, exact while the
   * query's bounds together stay below 2^31 (`MOST_PLAIN_BOUND`). Half the bytes of `windowTool`
   * (32 KiB at 8,192 documents: the first-level data cache of the processor measured, where 64 KiB
   * of doubles missed it): BM25 at 100k tools 0.942 of main against 0.980 with doubles, both with
   * `PLAIN_NON_ESSENTIAL_SUM_SHARE` (sums of per-query fastest; turn medians 0.837 against 0.889;
   * bench/README.md, round 42). At 16,384 documents (round 43) they are 64 KiB, and fewer windows
   * still cost less than the first-level misses.
   */
  readonly windowSums: Int32Array
  /**
   * `searchWindowed`'s per-window sums of the expansion terms, and the bit set of the window's
   * documents seen.
   */
  readonly windowExpansion: Float64Array
  readonly windowSeen: Uint32Array
  /**
   * The window's documents seen (slots), in the order the essential terms first hit them; then,
   * in its first places, those kept for the terms not summed, in document order.
   */
  readonly windowTouched: Int32Array
  /**
   * `searchWindowed`'s per-term arrays (bounds' running sums, cursors, a window's starts and
   * ends), for up to their length of query terms: grown when a query has more, never shrunk.
   * Made per query they were four typed arrays of a request's 4-5 queries each, those past 64
   * bytes (a whole instruction's 15-20 terms) with a backing store outside V8's heap.
   */
  termPrefix: Float64Array
  termCursors: Int32Array
  termFroms: Int32Array
  termEnds: Int32Array

  /** @param window Documents per window of `searchWindowed` (a multiple of 32; tests use small ones). */
  constructor(documents: number, window = WINDOW_DOCUMENTS) {
    if (!(window >= 32 && window % 32 === 0)) {
      throw new RangeError(`A search window of ${window} documents: use a multiple of 32.`)
    }
    this.tool = new Float64Array(documents)
    this.expansion = new Float64Array(documents)
    this.seen = new Uint8Array(documents)
    this.touched = new Int32Array(documents)
    this.windowTool = new Float64Array(window)
    this.windowSums = new Int32Array(window)
    this.windowExpansion = new Float64Array(window)
    this.windowSeen = new Uint32Array(window / 32)
    this.windowTouched = new Int32Array(window)
    this.termPrefix = new Float64Array(QUERY_TERMS_KEPT)
    this.termCursors = new Int32Array(QUERY_TERMS_KEPT)
    this.termFroms = new Int32Array(QUERY_TERMS_KEPT)
    this.termEnds = new Int32Array(QUERY_TERMS_KEPT)
  }

  /** Makes the per-term arrays hold at least `terms` terms. */
  reserveTerms(terms: number): void {
    if (terms <= this.termPrefix.length) return
    const length = Math.max(terms, 2 * this.termPrefix.length)
    this.termPrefix = new Float64Array(length)
    this.termCursors = new Int32Array(length)
    this.termFroms = new Int32Array(length)
    this.termEnds = new Int32Array(length)
  }
}

/** Query terms `SearchScratch`'s per-term arrays hold at first (a query has a few dozen). */
const QUERY_TERMS_KEPT = 64

/** `searchWindowed`'s order of its terms: lowest bound first. */
const byBound = (a: QueryTerm, b: QueryTerm) => a.bound - b.bound

/** The query's distinct terms found in the indexes, with their counts and bounds. */
export function queryTerms(
  terms: readonly string[],
  index: Bm25Postings,
  expansion: Bm25Postings | undefined,
  expansionWeight: number,
): QueryTerm[] {
  const counts = new Map<string, number>()
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
  const found: QueryTerm[] = []
  const toolIds = recentIds(index)
  const expansionIds = expansion && expansionWeight > 0 ? recentIds(expansion) : undefined
  for (const [term, count] of counts) {
    const tool = postingsOf(index, toolIds, term, count, 1, false)
    if (tool) found.push(tool)
    if (expansionIds) {
      const expanded = postingsOf(expansion!, expansionIds, term, count, expansionWeight, true)
      if (expanded) found.push(expanded)
    }
  }
  return found
}

/**
 * Per index: the ids of recent query terms (-1: not in the index), keyed by the query's own term
 * strings. A query's terms are the tokenizer's cached strings, the same objects from request to
 * request, which this small map finds by identity; in the index's term dictionary (6k terms at
 * 10k tools, 15k at 100k, its keys other string objects of the same text) each lookup compares
 * the characters, and in a large library misses the processor's caches. BM25 per request 0.96-0.99
 * of without at 100k tools and 10k (bench/README.md, round 18).
 */
const recentTermIds = new WeakMap<Bm25Postings, Map<string, number>>()
/** Terms remembered per index (terms have at most 64 characters); the map is cleared when full. */
const RECENT_TERM_IDS = 4096

function recentIds(postings: Bm25Postings): Map<string, number> {
  let recent = recentTermIds.get(postings)
  if (recent === undefined) {
    recent = new Map()
    recentTermIds.set(postings, recent)
  }
  return recent
}

/** The term's id in the index, -1 when it has none (`recent`: the index's `recentIds`). */
function termId(postings: Bm25Postings, recent: Map<string, number>, term: string): number {
  let id = recent.get(term)
  if (id === undefined) {
    id = postings.termIndex.get(term) ?? -1
    if (recent.size >= RECENT_TERM_IDS) recent.clear()
    recent.set(term, id)
  }
  return id
}

function postingsOf(
  postings: Bm25Postings,
  recent: Map<string, number>,
  term: string,
  count: number,
  scale: number,
  expansion: boolean,
): QueryTerm | undefined {
  const id = termId(postings, recent, term)
  if (id < 0) return undefined
  const start = postings.offsets[id]
  const end = postings.offsets[id + 1]
  if (end === start) return undefined
  return {
    expansion,
    docs: postings.docs,
    weights: postings.weights,
    from: start,
    to: end,
    count,
    bound: scale * count * postings.maxWeights[id],
    least: scale * count * postings.minWeights[id],
    factor: scale * count,
    postings,
    id,
  }
}

/** A final score from the two exact sums (millionths). */
function finalScore(tool: number, expansion: number, expansionWeight: number): number {
  return Math.round(tool + expansionWeight * expansion) / WEIGHT_SCALE
}

/** Whether `searchWindowed` applies: it needs every contribution to be positive. */
export function canPrune(terms: readonly QueryTerm[]): boolean {
  return terms.every((term) => term.least > 0)
}

export function searchExhaustive(
  terms: readonly QueryTerm[],
  expansionWeight: number,
  scratch: SearchScratch,
  top: TopK,
  minScore: number,
): ScoredPosition[] {
  const { seen, touched } = scratch
  let touchedCount = 0
  for (const term of terms) {
    const sums = term.expansion ? scratch.expansion : scratch.tool
    const { docs, weights, count, to } = term
    for (let at = term.from; at < to; at += 1) {
      const doc = docs[at]
      if (seen[doc] === 0) {
        seen[doc] = 1
        touched[touchedCount++] = doc
      }
      sums[doc] += count * weights[at]
    }
  }
  for (let at = 0; at < touchedCount; at += 1) {
    const doc = touched[at]
    const score = finalScore(scratch.tool[doc], scratch.expansion[doc], expansionWeight)
    if (score > minScore) top.push(doc, score)
    scratch.tool[doc] = 0
    scratch.expansion[doc] = 0
    seen[doc] = 0
  }
  return top.sorted()
}

/**
 * MaxScore a window of documents at a time (as Lucene's MaxScoreBulkScorer); requires
 * `canPrune(terms)`. Same result as `searchExhaustive`.
 *
 * Terms are sorted by their largest contribution; at each window the terms whose bounds together
 * can't lift a document above the k-th score so far (or `minScore`) are non-essential. The
 * essential terms' postings inside the window are summed term at a time into small accumulators
 * (a window's, so they stay in cache), and the documents they hit are listed once each. Before
 * the documents are scored, the highest non-essential terms whose postings in the window number at
 * most `NON_ESSENTIAL_SUM_SHARE` of the essential postings summed there are summed as well, into
 * the same accumulators but marking no document seen (their sums for documents not seen are
 * cleared after the window): a document's sums then hold them exactly. Then each document seen
 * is scored when every term is summed; otherwise those that the other terms' bounds can still
 * lift to the k-th score are put in document order and get the remaining non-essential terms'
 * weights (galloping search), highest bound first, while they can still make the top k. Unlike
 * document-at-a-time MaxScore there is no per-document merge of the essential lists, so a long
 * query (a whole instruction of 20 terms) costs about its essential postings; unlike term at a
 * time over the whole index, the common words stop being walked as soon as the first windows have
 * set a threshold. Until the top k is full, the window's own sums seed that threshold: the
 * essential terms are summed highest bound first, and before a term with many postings in the
 * window the k-th largest sum of the documents seen so far (k of them score at least that) may
 * make it and the terms below it non-essential already (`SEED_CHECK_SHARE`); the first window
 * then sums about half the postings it did (at 100k tools). Before that, the threshold starts at
 * the largest k-th largest contribution of a query term (k documents score at least that;
 * round 13: BM25 0.95 of without at 10k and 100k tools). The documents seen are walked in the
 * order they were hit, not by a bit set in document order: which of a window's 128 bit words hold
 * a document is random, and the branches of that scan were mispredicted (bench/README.md, "Round
 * 10"). Once a threshold is known (the top k full, or a seed from the terms' k-th weights or a
 * window's sums), a query without expansion terms lists no documents seen at all: a window's
 * essential postings are summed, then walked again to score, drop or keep the documents they hit
 * ("plain" windows; BM25 0.93 of the list at 100k tools, 1.0 at 10k: "Round 12"; from a seed too,
 * not only once the top k is full: 0.88 at 10k, 0.95 at 100k, "Round 14"); its
 * non-essential terms are summed only into the documents seen (sums above 0), which leaves nothing
 * to clear after the window (0.93-0.94 at 100k, 0.99 at 10k). A plain window sums into 32-bit
 * integers (`SearchScratch.windowSums`, half the cache of doubles), which needs the query's
 * bounds together below 2^31 (any query of up to 24 words; round 42).
 */
export function searchWindowed(
  queryTerms: readonly QueryTerm[],
  expansionWeight: number,
  scratch: SearchScratch,
  top: TopK,
  minScore: number,
): ScoredPosition[] {
  const terms = [...queryTerms].sort(byBound)
  const n = terms.length
  // Without expansion terms the expansion sums stay 0: they are then neither read nor cleared.
  const anyExpansion = terms.some((term) => term.expansion)
  // The per-term arrays are the scratch's (their first n places are this query's).
  scratch.reserveTerms(n)
  // prefix[i]: the most terms 0…i can add together.
  const prefix = scratch.termPrefix
  for (let i = 0; i < n; i += 1) prefix[i] = (i > 0 ? prefix[i - 1] : 0) + terms[i].bound
  const cursors = scratch.termCursors
  for (let i = 0; i < n; i += 1) cursors[i] = terms[i].from
  // Per window: where each term's postings inside the window start and end (the terms summed;
  // each place is written in a window before that window reads it).
  const froms = scratch.termFroms
  const ends = scratch.termEnds
  const { windowTool, windowExpansion, windowSeen, windowTouched, windowSums } = scratch
  const window = windowTool.length
  // Plain windows sum into 32-bit integers: exact while every sum stays below 2^31.
  const plainSums = !anyExpansion && n > 0 && prefix[n - 1] <= MOST_PLAIN_BOUND
  // A document whose sums can reach at most `bound` millionths scores at most
  // round(bound) / 1e6 ≤ (bound + 0.5) / 1e6: it is hopeless when bound < limit, 2 millionths
  // (float noise aside: 0.5 would do) below minScore and below the k-th score so far (a tie with
  // the k-th may still enter: ties rank by id).
  const minLimit = minScore * WEIGHT_SCALE - 2
  let kth = top.threshold
  // A limit from k documents' partial sums (see SEED_CHECK_SHARE), -Infinity until one is found.
  let seedLimit = -Infinity
  const k = top.k
  // Before the first window: k documents get at least a term's k-th largest contribution, so
  // the k-th score will be at least the largest such contribution over the query's terms, and
  // the terms whose bounds together stay below it are non-essential from the first window on.
  if (kth === -Infinity && k > 0 && k <= SEED_MAX_K) {
    let seed = -Infinity
    let toolWeights: Int32Array | undefined
    let expansionWeights: Int32Array | undefined
    for (const term of terms) {
      const postings = term.to - term.from
      if (postings < k || postings > KTH_WEIGHT_POSTINGS) continue
      const known = term.expansion
        ? (expansionWeights ??= kthWeightsOf(term.postings, k))
        : (toolWeights ??= kthWeightsOf(term.postings, k))
      if (known === undefined) continue
      const least = term.factor * kthLargestWeight(term, k, known)
      if (least > seed) seed = least
    }
    if (seed > -Infinity) seedLimit = Math.round(seed) - 2
  }
  let limit = Math.max(minLimit, seedLimit, kth * WEIGHT_SCALE - 2)
  let essential = 0
  for (;;) {
    while (essential < n && prefix[essential] < limit) essential += 1
    // The window starts at the first document an essential term has left.
    let start = 0x7fffffff
    for (let i = essential; i < n; i += 1) {
      const docs = terms[i].docs
      if (cursors[i] < terms[i].to && docs[cursors[i]] < start) start = docs[cursors[i]]
    }
    if (start === 0x7fffffff) break
    let summed = 0
    let touched = 0
    let kept = 0
    const seeding = kth === -Infinity && k <= SEED_MAX_K
    // A plain window (a threshold known: the top k full or a seed; the limit above 0; no expansion
    // terms and bounds whose sum fits `windowSums`: most windows) keeps no bit set or list of the
    // documents seen: its essential postings are summed alone, then walked again (in cache) to
    // score or keep the documents they hit, below. That takes the list, whose every posting waited
    // on the one before, out of the summing loop. A seeded window below a full top k pushes what
    // reaches the limit, as any other: the seed is a lower bound of the k-th score, so nothing it
    // drops could make the top k (the window-sum seeding below, which needs the list, is then
    // skipped: plain windows from the seed on were faster at 10k and 100k tools all the same,
    // bench/README.md "Round 14").
    const plain = plainSums && (kth !== -Infinity || seedLimit > -Infinity) && limit > 0
    if (plain) {
      for (let i = n - 1; i >= essential; i -= 1) {
        const { docs, weights, count, to } = terms[i]
        let at = cursors[i]
        froms[i] = at
        for (; at < to; at += 1) {
          const slot = docs[at] - start
          if (slot >= window) break
          windowSums[slot] += count * weights[at]
        }
        cursors[i] = at
        summed += at - froms[i]
      }
    }
    // Otherwise each document seen joins `windowTouched` once: its bit in `windowSeen` tells, and
    // the list grows by 0 or 1 without a branch (a branch on whether a document was seen is taken
    // at random, and mispredicted branches were most of the cost of a window).
    for (let i = n - 1; !plain && i >= essential; i -= 1) {
      // Before a term with many postings here, while the top k is not full: k documents seen
      // whose sums (of the terms above) reach S score at least round(S) millionths, so the k-th
      // score will too, and the terms whose bounds together stay below that are non-essential.
      if (
        seeding &&
        touched >= k &&
        i < n - 1 &&
        advance(terms[i].docs, cursors[i], terms[i].to, start + window) - cursors[i] >=
          touched * SEED_CHECK_SHARE
      ) {
        const seed = Math.round(kthLargestSum(k, touched, expansionWeight, scratch)) - 2
        if (seed > limit) {
          seedLimit = seed
          limit = seed
          while (essential <= i && prefix[essential] < limit) essential += 1
          if (essential > i) break
        }
      }
      const { docs, weights, count, to } = terms[i]
      const sums = terms[i].expansion ? windowExpansion : windowTool
      let at = cursors[i]
      const from = at
      for (; at < to; at += 1) {
        const slot = docs[at] - start
        if (slot >= window) break
        const word = windowSeen[slot >>> 5]
        windowSeen[slot >>> 5] = word | (1 << (slot & 31))
        windowTouched[touched] = slot
        touched += ((word >>> (slot & 31)) & 1) ^ 1
        sums[slot] += count * weights[at]
      }
      cursors[i] = at
      summed += at - from
    }
    // The highest non-essential terms with few postings in the window for the documents seen are
    // summed too, without marking documents seen: cheaper than a search of their postings for
    // every document seen. Terms `scored`…n-1 are then summed; a document's sums hold all of them.
    let scored = essential
    while (scored > 0) {
      const i = scored - 1
      const { docs, to } = terms[i]
      const from = advance(docs, cursors[i], to, start)
      // Too many postings in the window when the one just past the share is still inside it: one
      // read instead of a galloping search for the window's end, which the loop below finds.
      const past = from + summed * (plain ? PLAIN_NON_ESSENTIAL_SUM_SHARE : NON_ESSENTIAL_SUM_SHARE)
      if (past < to && docs[past] < start + window) break
      const { weights, count } = terms[i]
      const sums = terms[i].expansion ? windowExpansion : windowTool
      let at = from
      if (plain) {
        // Only into the documents seen (a sum above 0: every weight is), so that nothing is left
        // to clear after the window: its cursor moves past the window now.
        for (; at < to; at += 1) {
          const slot = docs[at] - start
          if (slot >= window) break
          const sum = windowSums[slot]
          if (sum > 0) windowSums[slot] = sum + count * weights[at]
        }
        cursors[i] = at
      } else {
        for (; at < to; at += 1) {
          const slot = docs[at] - start
          if (slot >= window) break
          sums[slot] += count * weights[at]
        }
        cursors[i] = from
      }
      ends[i] = at
      scored = i
    }
    // Each document seen, in the order it was first hit. One that can't reach the limit even
    // with the terms not summed is dropped (its sums cleared); with every term summed (`scored`
    // 0) the others are scored now; otherwise they are kept, in document order (the searches
    // below only move forward), in the first places of `windowTouched` (t ≥ kept: those are read).
    const unsummed = scored > 0 ? prefix[scored - 1] : 0
    // A plain window walks its essential postings again. With every term summed, a document's sum
    // is its score's: it is scored or dropped, its sum cleared (a document hit again then has 0,
    // below the limit). Otherwise a document whose sum the terms not summed can still lift to the
    // limit is kept as in the general loop below (in document order in `windowTouched`'s first
    // places), its sum put in `windowTool` (as the general loop leaves one) and `KEPT` left in
    // its place, so that a later hit drops it (0 then, and `unsummed` < limit: those terms are
    // non-essential).
    for (let i = n - 1; plain && i >= essential; i -= 1) {
      const docs = terms[i].docs
      const end = cursors[i]
      for (let at = froms[i]; at < end; at += 1) {
        const slot = docs[at] - start
        const tool = windowSums[slot]
        if (scored === 0) {
          windowSums[slot] = 0
          if (tool < limit) continue
          const score = finalScore(tool, 0, expansionWeight)
          if (score > minScore && score >= kth) {
            top.push(start + slot, score)
            kth = top.threshold
            limit = Math.max(minLimit, seedLimit, kth * WEIGHT_SCALE - 2)
          }
        } else if (tool + unsummed < limit) {
          windowSums[slot] = 0
        } else {
          windowTool[slot] = tool
          windowSums[slot] = KEPT
          keepInOrder(windowTouched, kept, slot)
          kept += 1
        }
      }
    }
    // The kept documents' sums are in `windowTool` now; `windowSums` is left all 0 again.
    for (let at = 0; plain && at < kept; at += 1) windowSums[windowTouched[at]] = 0
    for (let t = 0; t < touched; t += 1) {
      const slot = windowTouched[t]
      windowSeen[slot >>> 5] = 0
      const tool = windowTool[slot]
      const expansion = anyExpansion ? windowExpansion[slot] : 0
      if (scored > 0 && tool + expansionWeight * expansion + unsummed >= limit) {
        keepInOrder(windowTouched, kept, slot)
        kept += 1
        continue
      }
      windowTool[slot] = 0
      if (anyExpansion) windowExpansion[slot] = 0
      if (scored > 0 || tool + expansionWeight * expansion < limit) continue
      const score = finalScore(tool, expansion, expansionWeight)
      if (score > minScore && score >= kth) {
        top.push(start + slot, score)
        kth = top.threshold
        limit = Math.max(minLimit, seedLimit, kth * WEIGHT_SCALE - 2)
      }
    }
    // The kept documents get the terms not summed (galloping search), highest bound first,
    // while they can still make the top k.
    for (let at = 0; at < kept; at += 1) {
      const slot = windowTouched[at]
      const doc = start + slot
      let tool = windowTool[slot]
      let expansion = 0
      windowTool[slot] = 0
      if (anyExpansion) {
        expansion = windowExpansion[slot]
        windowExpansion[slot] = 0
      }
      let i = scored - 1
      for (; i >= 0; i -= 1) {
        if (tool + expansionWeight * expansion + prefix[i] < limit) break
        const term = terms[i]
        const cursor = advance(term.docs, cursors[i], term.to, doc)
        cursors[i] = cursor
        if (cursor < term.to && term.docs[cursor] === doc) {
          if (term.expansion) expansion += term.count * term.weights[cursor]
          else tool += term.count * term.weights[cursor]
        }
      }
      if (i >= 0 || tool + expansionWeight * expansion < limit) continue
      const score = finalScore(tool, expansion, expansionWeight)
      if (score > minScore && score >= kth) {
        top.push(doc, score)
        kth = top.threshold
        limit = Math.max(minLimit, seedLimit, kth * WEIGHT_SCALE - 2)
      }
    }
    // Clear what the non-essential terms summed for documents not seen (none in a plain window).
    for (let i = scored; i < essential; i += 1) {
      const docs = terms[i].docs
      const sums = terms[i].expansion ? windowExpansion : windowTool
      for (let at = cursors[i]; at < ends[i]; at += 1) sums[docs[at] - start] = 0
      cursors[i] = ends[i]
    }
  }
  return top.sorted()
}

/**
 * The k-th largest sum (tool + expansionWeight × expansion) of the window's first `touched`
 * documents seen (k ≤ touched, k ≤ SEED_MAX_K), with a min-heap of k scores. Not `TopK`: this
 * loop takes every document the window has seen so far, needs no positions or ties, and TopK's
 * tie-aware comparisons in it made BM25 3-4% slower at 10k tools (bench/bm25-ab.ts, round 11).
 */
function kthLargestSum(
  k: number,
  touched: number,
  expansionWeight: number,
  scratch: SearchScratch,
): number {
  const { windowTool, windowExpansion, windowTouched } = scratch
  const heap = seedHeap
  let size = 0
  for (let t = 0; t < touched; t += 1) {
    const slot = windowTouched[t]
    const sum = windowTool[slot] + expansionWeight * windowExpansion[slot]
    if (size < k) {
      // Sift up.
      let child = size
      size += 1
      heap[child] = sum
      while (child > 0) {
        const parent = (child - 1) >> 1
        if (heap[parent] <= sum) break
        heap[child] = heap[parent]
        heap[parent] = sum
        child = parent
      }
    } else if (sum > heap[0]) {
      // Replace the smallest and sift down.
      let parent = 0
      heap[0] = sum
      for (;;) {
        const left = 2 * parent + 1
        let least = parent
        if (left < k && heap[left] < heap[least]) least = left
        if (left + 1 < k && heap[left + 1] < heap[least]) least = left + 1
        if (least === parent) break
        heap[parent] = heap[least]
        heap[least] = sum
        parent = least
      }
    }
  }
  return heap[0]
}

/**
 * The first index at or after `from` (below `length`, the term's end in `docs`) whose document is
 * ≥ `target` (galloping, then binary search); `length` when none.
 */
function advance(docs: Int32Array, from: number, length: number, target: number): number {
  if (from >= length || docs[from] >= target) return from
  let low = from
  let step = 1
  let high = from + 1
  while (high < length && docs[high] < target) {
    low = high
    step *= 2
    high = low + step
  }
  if (high > length) high = length
  // docs[low] < target, and high is the end or docs[high] ≥ target.
  while (high - low > 1) {
    const middle = (low + high) >>> 1
    if (docs[middle] < target) low = middle
    else high = middle
  }
  return high
}

/**
 * Puts `slot` into `slots[0..count)`, kept in ascending order (insertion: the slots kept in a
 * window are few, and mostly arrive in order); the caller counts it (`count + 1` are then used).
 */
function keepInOrder(slots: Int32Array, count: number, slot: number): void {
  let at = count
  while (at > 0 && slots[at - 1] > slot) {
    slots[at] = slots[at - 1]
    at -= 1
  }
  slots[at] = slot
}
