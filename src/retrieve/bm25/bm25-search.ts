/**
 * Scoring a query against BM25 postings, two ways with the same result:
 *
 * - `searchExhaustive` (term at a time): sums every posting of every query term into per-document
 *   accumulators, then keeps the top k. Cost: the total length of the query terms' postings.
 * - `searchTermPruned` (term at a time with a cut-off): like `searchExhaustive`, rare terms
 *   (largest contributions) first; before a long postings list it checks whether the terms left
 *   can still lift a document it has not seen into the top k (above the k-th best partial score
 *   so far, which the final k-th score can only exceed). Once they can't, only the documents
 *   that can still make it are kept and the remaining lists are searched (galloping) for them
 *   alone. A whole instruction's very common words ("api": 94% of 100k tools) are never walked.
 * - `searchPruned` (document at a time, MaxScore, Turtle & Flood 1995): terms sorted by their
 *   largest possible contribution; the terms whose bounds together can't lift a document above
 *   the current k-th score (or above `minScore`) are "non-essential": documents are enumerated
 *   from the other terms' postings only, and the non-essential terms are looked up (galloping
 *   search) just for documents that can still make it. Common words (long postings, low weight)
 *   become non-essential after a few documents, so a query costs about the postings of its rare
 *   terms.
 *
 * A score is `round(Σ tool weights + examplesWeight × Σ expansion weights)` in millionths: both
 * sums are exact integers, so the order of the additions does not change a score and both ways
 * give identical results (a test compares them on random queries).
 * @module
 */
import { TopK, type ScoredPosition } from '../top-k.ts'
import { WEIGHT_SCALE, type Bm25Postings } from './bm25-postings.ts'

export interface QueryTerm {
  /** Whether the term is from the expansion index (scaled by the examples weight). */
  expansion: boolean
  /** The term's postings (views into the index). */
  docs: Int32Array
  weights: Int32Array
  /** Occurrences of the term in the query. */
  count: number
  /** Largest contribution to a score, in millionths. */
  bound: number
  /** Smallest (the pruning needs every contribution positive). */
  least: number
}

/** Reusable per-document accumulators of an index; safe to share because search is synchronous. */
export class SearchScratch {
  readonly tool: Float64Array
  readonly expansion: Float64Array
  readonly seen: Uint8Array
  readonly touched: Int32Array

  constructor(documents: number) {
    this.tool = new Float64Array(documents)
    this.expansion = new Float64Array(documents)
    this.seen = new Uint8Array(documents)
    this.touched = new Int32Array(documents)
  }
}

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
  for (const [term, count] of counts) {
    const tool = postingsOf(index, term, count, 1, false)
    if (tool) found.push(tool)
    if (expansion && expansionWeight > 0) {
      const expanded = postingsOf(expansion, term, count, expansionWeight, true)
      if (expanded) found.push(expanded)
    }
  }
  return found
}

function postingsOf(
  postings: Bm25Postings,
  term: string,
  count: number,
  scale: number,
  expansion: boolean,
): QueryTerm | undefined {
  const id = postings.termIndex.get(term)
  if (id === undefined) return undefined
  const start = postings.offsets[id]
  const end = postings.offsets[id + 1]
  if (end === start) return undefined
  return {
    expansion,
    docs: postings.docs.subarray(start, end),
    weights: postings.weights.subarray(start, end),
    count,
    bound: scale * count * postings.maxWeights[id],
    least: scale * count * postings.minWeights[id],
  }
}

/** A final score from the two exact sums (millionths). */
function finalScore(tool: number, expansion: number, expansionWeight: number): number {
  return Math.round(tool + expansionWeight * expansion) / WEIGHT_SCALE
}

/** Whether `searchPruned` applies: it needs every contribution to be positive. */
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
    const { docs, weights, count } = term
    for (let at = 0; at < docs.length; at += 1) {
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
 * A check costs a pass over the documents seen so far; it is made before a list at least this
 * many times longer, so a failed check costs at most half the walk it could have saved.
 */
const CUT_OFF_CHECK_RATIO = 2

/** Term at a time with a cut-off (see the module comment); requires `canPrune(terms)`. */
export function searchTermPruned(
  queryTerms: readonly QueryTerm[],
  expansionWeight: number,
  scratch: SearchScratch,
  top: TopK,
  minScore: number,
): ScoredPosition[] {
  const terms = [...queryTerms].sort((a, b) => b.bound - a.bound)
  const n = terms.length
  // rest[i]: the most terms i… can add together.
  const rest = new Float64Array(n + 1)
  for (let i = n - 1; i >= 0; i -= 1) rest[i] = rest[i + 1] + terms[i].bound
  const { seen, touched, tool: tools, expansion: expansions } = scratch
  const sumOf = (doc: number) => tools[doc] + expansionWeight * expansions[doc]
  let touchedCount = 0
  // The k-th best partial score at the last check: every later score is at least as high.
  let kth = Number.NEGATIVE_INFINITY
  const hopeless = (bound: number): boolean => {
    const best = (bound + 1) / WEIGHT_SCALE
    return best <= minScore || best < kth
  }
  let cut = n
  for (let i = 0; i < n; i += 1) {
    const term = terms[i]
    if (i > 0 && term.docs.length >= CUT_OFF_CHECK_RATIO * touchedCount) {
      const partial = new TopK(top.k)
      for (let at = 0; at < touchedCount; at += 1) {
        const doc = touched[at]
        partial.push(doc, finalScore(tools[doc], expansions[doc], expansionWeight))
      }
      kth = partial.threshold
      if (hopeless(rest[i])) {
        cut = i
        break
      }
    }
    const sums = term.expansion ? expansions : tools
    const { docs, weights, count } = term
    for (let at = 0; at < docs.length; at += 1) {
      const doc = docs[at]
      if (seen[doc] === 0) {
        seen[doc] = 1
        touched[touchedCount++] = doc
      }
      sums[doc] += count * weights[at]
    }
  }
  let candidates = touched.subarray(0, touchedCount)
  if (cut < n) {
    // Terms cut… can't bring in a new document: finish the ones that can still make it.
    const alive: number[] = []
    for (let at = 0; at < touchedCount; at += 1) {
      const doc = touched[at]
      if (!hopeless(sumOf(doc) + rest[cut])) alive.push(doc)
    }
    candidates = Int32Array.from(alive).sort()
    for (let i = cut; i < n; i += 1) {
      const { docs, weights, count } = terms[i]
      const sums = terms[i].expansion ? expansions : tools
      let cursor = 0
      for (let at = 0; at < candidates.length && cursor < docs.length; at += 1) {
        const doc = candidates[at]
        cursor = advance(docs, cursor, doc)
        if (cursor < docs.length && docs[cursor] === doc) sums[doc] += count * weights[cursor]
      }
    }
  }
  for (let at = 0; at < candidates.length; at += 1) {
    const doc = candidates[at]
    const score = finalScore(tools[doc], expansions[doc], expansionWeight)
    if (score > minScore) top.push(doc, score)
  }
  for (let at = 0; at < touchedCount; at += 1) {
    const doc = touched[at]
    tools[doc] = 0
    expansions[doc] = 0
    seen[doc] = 0
  }
  return top.sorted()
}

/** MaxScore; requires `canPrune(terms)`. Same result as `searchExhaustive`. */
export function searchPruned(
  queryTerms: readonly QueryTerm[],
  expansionWeight: number,
  top: TopK,
  minScore: number,
): ScoredPosition[] {
  const terms = [...queryTerms].sort((a, b) => a.bound - b.bound)
  const n = terms.length
  // prefix[i]: the most terms 0…i can add together.
  const prefix = new Float64Array(n)
  for (let i = 0; i < n; i += 1) prefix[i] = (i > 0 ? prefix[i - 1] : 0) + terms[i].bound
  const cursors = new Int32Array(n)
  // A document whose sums can reach at most `bound` millionths scores at most (bound + 1) / 1e6
  // after rounding; it is hopeless when that can't pass minScore or the k-th score so far (a tie
  // with the k-th may still enter: ties rank by id).
  const hopeless = (bound: number): boolean => {
    const best = (bound + 1) / WEIGHT_SCALE
    return best <= minScore || best < top.threshold
  }
  let essential = 0
  while (essential < n && hopeless(prefix[essential])) essential += 1
  while (essential < n) {
    let doc = 0x7fffffff
    for (let i = essential; i < n; i += 1) {
      const cursor = cursors[i]
      const docs = terms[i].docs
      if (cursor < docs.length && docs[cursor] < doc) doc = docs[cursor]
    }
    if (doc === 0x7fffffff) break
    let tool = 0
    let expansion = 0
    for (let i = essential; i < n; i += 1) {
      const term = terms[i]
      const cursor = cursors[i]
      if (cursor < term.docs.length && term.docs[cursor] === doc) {
        if (term.expansion) expansion += term.count * term.weights[cursor]
        else tool += term.count * term.weights[cursor]
        cursors[i] = cursor + 1
      }
    }
    let i = essential - 1
    for (; i >= 0; i -= 1) {
      if (hopeless(tool + expansionWeight * expansion + prefix[i])) break
      const term = terms[i]
      const cursor = advance(term.docs, cursors[i], doc)
      cursors[i] = cursor
      if (cursor < term.docs.length && term.docs[cursor] === doc) {
        if (term.expansion) expansion += term.count * term.weights[cursor]
        else tool += term.count * term.weights[cursor]
      }
    }
    if (i >= 0) continue
    const score = finalScore(tool, expansion, expansionWeight)
    if (score > minScore) {
      top.push(doc, score)
      while (essential < n && hopeless(prefix[essential])) essential += 1
    }
  }
  return top.sorted()
}

/** The first index at or after `from` whose document is ≥ `target` (galloping, then binary search). */
function advance(docs: Int32Array, from: number, target: number): number {
  const length = docs.length
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
