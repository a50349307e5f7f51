/**
 * The nearest-example memory: past instructions vote for the tools that served them. Examples
 * are TF-IDF vectors (the BM25 tokenizer's terms, log tf × idf, unit length) in an inverted
 * index; a query's neighbours are the examples with the highest cosine similarity, and each
 * neighbour votes for its tools with its similarity.
 * @module
 */
import { tokenize } from '../retrieve/bm25/tokenize.ts'
import { TopK } from '../retrieve/top-k.ts'
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'
import type { UsageExample } from './usage-example.ts'

/** Neighbours that vote when a call does not say. */
export const DEFAULT_MEMORY_NEIGHBORS = 10

export interface ExampleNeighbor {
  example: UsageExample
  /** Cosine similarity of the TF-IDF vectors, 0-1. */
  similarity: number
}

export interface MemoryVote {
  /**
   * Tool id → vote, 0-1: the share of the neighbours' similarity mass held by neighbours that
   * used the tool (Σ similarity of neighbours using it / Σ similarity of all neighbours). 1 means
   * every similar example used it; tools no neighbour used are absent (vote 0).
   */
  readonly scores: ReadonlyMap<string, number>
  /** Cosine similarity of the closest example, 0-1 (0 when the memory is empty or nothing matches). */
  readonly topSimilarity: number
  /** The neighbours that voted, most similar first. */
  readonly neighbors: readonly ExampleNeighbor[]
}

const EMPTY_VOTE: MemoryVote = { scores: new Map(), topSimilarity: 0, neighbors: [] }

/**
 * What an ExampleMemory is made of (see `indexExamples`): a few typed arrays and one string, so a
 * memory built on a worker thread is handed to the main thread without copying many small
 * objects (`ExampleMemory.parts` / `ExampleMemory.fromParts`, build-worker.ts).
 *
 * - `terms`: every term, in id order (first seen), concatenated; term `id` is
 *   `terms.slice(termStart[id], termStart[id + 1])`.
 * - `termTable`: open-addressing hash table (FNV-1a of the term, linear probing) of term id + 1
 *   (0: empty slot); its length is a power of two, at least twice the term count.
 * - `idf[id]`; the postings of term `id` are `postingStart[id]` up to `postingStart[id + 1]` in
 *   `postingDocs` (example positions, ascending) and `postingWeights` (the example's unit-length
 *   TF-IDF weight of the term).
 */
export interface MemoryParts {
  readonly wordPairs: boolean
  readonly terms: string
  readonly termStart: Int32Array
  readonly termTable: Int32Array
  readonly idf: Float64Array
  readonly postingStart: Int32Array
  readonly postingDocs: Int32Array
  readonly postingWeights: Float64Array
}

type MemoryIndex = Omit<MemoryParts, 'wordPairs'>

export class ExampleMemory {
  readonly #examples: readonly UsageExample[]
  readonly #index: MemoryIndex
  readonly #scores: Float64Array
  readonly #seen: Uint8Array
  /** Whether adjacent word pairs are terms too (see `withWordPairs`). */
  readonly wordPairs: boolean

  private constructor(examples: readonly UsageExample[], wordPairs: boolean, index: MemoryIndex) {
    this.#examples = examples
    this.wordPairs = wordPairs
    this.#scores = new Float64Array(examples.length)
    this.#seen = new Uint8Array(examples.length)
    this.#index = index
  }

  static build(
    examples: readonly UsageExample[],
    options: { wordPairs?: boolean } = {},
  ): ExampleMemory {
    const wordPairs = options.wordPairs ?? false
    return new ExampleMemory(examples, wordPairs, runSteps(indexExamples(examples, wordPairs)))
  }

  /**
   * `build`, yielding to the event loop every few milliseconds (a write of usage examples must
   * not stall the requests meanwhile); the same memory. Throws the signal's reason once aborted.
   */
  static async buildSliced(
    examples: readonly UsageExample[],
    options: { wordPairs?: boolean; signal?: AbortSignal } = {},
  ): Promise<ExampleMemory> {
    const wordPairs = options.wordPairs ?? false
    const index = await runStepsSliced(indexExamples(examples, wordPairs), options.signal)
    return new ExampleMemory(examples, wordPairs, index)
  }

  /** What the memory is made of (typed arrays and one string: cheap to transfer to another thread). */
  get parts(): MemoryParts {
    return { wordPairs: this.wordPairs, ...this.#index }
  }

  /**
   * The memory of `examples` made of `parts` (a memory's `parts`, built from the same examples in
   * the same order, e.g. on a worker thread): nothing is computed. The parts' sizes are checked
   * (not every posting: at 16.8k examples that alone held the event loop for 5-100 ms).
   */
  static fromParts(examples: readonly UsageExample[], parts: MemoryParts): ExampleMemory {
    const terms = parts.termStart.length - 1
    const postings = parts.postingDocs.length
    const consistent =
      terms >= 0 &&
      parts.termStart[terms] === parts.terms.length &&
      parts.idf.length === terms &&
      parts.postingStart.length === terms + 1 &&
      parts.postingStart[terms] === postings &&
      parts.postingWeights.length === postings &&
      parts.termTable.length >= 2 * terms &&
      (parts.termTable.length & (parts.termTable.length - 1)) === 0
    if (!consistent)
      throw new Error('ExampleMemory.fromParts: the parts are not a memory of these examples.')
    const { wordPairs, ...index } = parts
    return new ExampleMemory(examples, wordPairs, index)
  }

  get size(): number {
    return this.#examples.length
  }

  /** The examples, in the order they were given (oldest first). */
  get examples(): readonly UsageExample[] {
    return this.#examples
  }

  /** The id of `term`, or -1 when no example has it. */
  #termId(term: string): number {
    const { terms, termStart, termTable } = this.#index
    const mask = termTable.length - 1
    for (let slot = termHash(term) & mask; ; slot = (slot + 1) & mask) {
      const id = termTable[slot] - 1
      if (id < 0) return -1
      const start = termStart[id]
      if (termStart[id + 1] - start === term.length && terms.startsWith(term, start)) return id
    }
  }

  /** The `count` examples most similar to `query`, most similar first (ties: older first). */
  neighbors(query: string, count = DEFAULT_MEMORY_NEIGHBORS): ExampleNeighbor[] {
    if (this.#examples.length === 0 || count <= 0) return []
    const { idf, postingStart, postingDocs, postingWeights } = this.#index
    const counts = countTerms(tokenize(query), this.wordPairs)
    const ids = new Map<string, number>()
    for (const term of counts.keys()) ids.set(term, this.#termId(term))
    const vector = weigh(counts, (term) => {
      const termId = ids.get(term)!
      return termId < 0 ? 0 : idf[termId]
    })
    const scores = this.#scores
    const seen = this.#seen
    const touched: number[] = []
    for (const [term, weight] of vector) {
      const termId = ids.get(term)!
      if (termId < 0) continue
      const end = postingStart[termId + 1]
      for (let index = postingStart[termId]; index < end; index += 1) {
        const doc = postingDocs[index]
        if (seen[doc] === 0) {
          seen[doc] = 1
          touched.push(doc)
        }
        scores[doc] += weight * postingWeights[index]
      }
    }
    const best = new TopK(count)
    for (const doc of touched) {
      best.push(doc, Math.min(1, Math.round(scores[doc] * 1e9) / 1e9))
      scores[doc] = 0
      seen[doc] = 0
    }
    return best
      .sorted()
      .filter(({ score }) => score > 0)
      .map(({ position, score }) => ({ example: this.#examples[position], similarity: score }))
  }

  /** How the `neighbors` most similar examples vote for their tools (see MemoryVote). */
  vote(query: string, options: { neighbors?: number } = {}): MemoryVote {
    const neighbors = this.neighbors(query, options.neighbors ?? DEFAULT_MEMORY_NEIGHBORS)
    if (neighbors.length === 0) return EMPTY_VOTE
    const mass = neighbors.reduce((sum, neighbor) => sum + neighbor.similarity, 0)
    const scores = new Map<string, number>()
    for (const { example, similarity } of neighbors) {
      for (const id of example.tools) scores.set(id, (scores.get(id) ?? 0) + similarity / mass)
    }
    for (const [id, score] of scores) scores.set(id, Math.min(1, Math.round(score * 1e9) / 1e9))
    return { scores, topSimilarity: neighbors[0].similarity, neighbors }
  }
}

/** FNV-1a over the term's UTF-16 code units (the memory's term table). */
function termHash(term: string): number {
  let hash = 0x811c9dc5
  for (let index = 0; index < term.length; index += 1) {
    hash = Math.imul(hash ^ term.charCodeAt(index), 0x01000193)
  }
  return hash >>> 0
}

/**
 * The TF-IDF inverted index of `examples`, a step per example and per batch of terms. Terms get
 * ids in first-seen order; each example keeps only its term ids and counts (typed arrays), and
 * the postings are laid out in flat arrays allocated at their final size: a build of thousands of
 * examples leaves few objects for the collector to copy, and the result is a handful of typed
 * arrays (see MemoryParts).
 */
function* indexExamples(examples: readonly UsageExample[], wordPairs: boolean): Steps<MemoryIndex> {
  const termIndex = new Map<string, number>()
  const frequency: number[] = []
  const exampleTerms: Int32Array[] = []
  const exampleCounts: Int32Array[] = []
  for (const example of examples) {
    const counts = countTerms(tokenize(example.instruction), wordPairs)
    const terms = new Int32Array(counts.size)
    const termCounts = new Int32Array(counts.size)
    let slot = 0
    for (const [term, count] of counts) {
      let termId = termIndex.get(term)
      if (termId === undefined) {
        termId = frequency.length
        termIndex.set(term, termId)
        frequency.push(0)
      }
      frequency[termId] += 1
      terms[slot] = termId
      termCounts[slot] = count
      slot += 1
    }
    exampleTerms.push(terms)
    exampleCounts.push(termCounts)
    yield
  }
  const termCount = frequency.length
  const idf = new Float64Array(termCount)
  const postingStart = new Int32Array(termCount + 1)
  for (let termId = 0; termId < termCount; termId += 1) {
    idf[termId] = Math.log(1 + examples.length / frequency[termId])
    postingStart[termId + 1] = postingStart[termId] + frequency[termId]
  }
  const postingDocs = new Int32Array(postingStart[termCount])
  const postingWeights = new Float64Array(postingStart[termCount])
  const filled = postingStart.slice(0, termCount)
  const weights: number[] = []
  for (let position = 0; position < exampleTerms.length; position += 1) {
    // What `weigh` computes, in the same order: (1 + ln tf) × idf, scaled to unit length. Every
    // weight is positive here (tf ≥ 1, and idf = ln(1 + N / df) > 0), so each term of the
    // example gets its posting and every term's postings come out exactly full.
    const terms = exampleTerms[position]
    const counts = exampleCounts[position]
    weights.length = 0
    let norm = 0
    for (let slot = 0; slot < terms.length; slot += 1) {
      const weight = (1 + Math.log(counts[slot])) * idf[terms[slot]]
      weights.push(weight)
      norm += weight * weight
    }
    norm = Math.sqrt(norm)
    for (let slot = 0; slot < terms.length; slot += 1) {
      const at = filled[terms[slot]]++
      postingDocs[at] = position
      postingWeights[at] = weights[slot] / norm
    }
    yield
  }
  // The term table: the terms concatenated, and their ids hashed (a Map of every term would be as
  // many objects to copy from a worker thread; this is two arrays and one string).
  const termList: string[] = []
  const termStart = new Int32Array(termCount + 1)
  let capacity = 16
  while (capacity < 2 * termCount) capacity *= 2
  const termTable = new Int32Array(capacity)
  const mask = capacity - 1
  let termId = 0
  for (const term of termIndex.keys()) {
    termList.push(term)
    termStart[termId + 1] = termStart[termId] + term.length
    let slot = termHash(term) & mask
    while (termTable[slot] !== 0) slot = (slot + 1) & mask
    termTable[slot] = termId + 1
    termId += 1
    if ((termId & 1023) === 0) yield
  }
  return {
    terms: termList.join(''),
    termStart,
    termTable,
    idf,
    postingStart,
    postingDocs,
    postingWeights,
  }
}

function countTerms(terms: readonly string[], wordPairs: boolean): Map<string, number> {
  const counts = new Map<string, number>()
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
  if (wordPairs) {
    // A space never occurs inside a token, so a pair is never confused with a word.
    for (let index = 0; index + 1 < terms.length; index += 1) {
      const pair = `${terms[index]} ${terms[index + 1]}`
      counts.set(pair, (counts.get(pair) ?? 0) + 1)
    }
  }
  return counts
}

/** (1 + ln tf) × idf per term, scaled to unit length; terms with idf 0 are left out. */
function weigh(
  counts: ReadonlyMap<string, number>,
  idf: (term: string) => number,
): Map<string, number> {
  const vector = new Map<string, number>()
  let norm = 0
  for (const [term, count] of counts) {
    const weight = (1 + Math.log(count)) * idf(term)
    if (weight <= 0) continue
    vector.set(term, weight)
    norm += weight * weight
  }
  norm = Math.sqrt(norm)
  for (const [term, weight] of vector) vector.set(term, weight / norm)
  return vector
}

const paired = new WeakMap<ExampleMemory, ExampleMemory>()

/**
 * The same examples indexed with adjacent word pairs as terms too (built on first use, cached with
 * the memory): neighbours that repeat a request's phrasing, not only its words, rank first. The
 * example-aware decision reads its neighbours from it; the set proposal and its self-check keep
 * the word memory (their thresholds were set on word similarities).
 */
export function withWordPairs(memory: ExampleMemory): ExampleMemory {
  if (memory.wordPairs) return memory
  let pairs = paired.get(memory)
  if (!pairs)
    paired.set(memory, (pairs = ExampleMemory.build(memory.examples, { wordPairs: true })))
  return pairs
}

/** The word-pair memory of `memory` if it was built already (builds nothing). */
export function cachedWordPairs(memory: ExampleMemory): ExampleMemory | undefined {
  return memory.wordPairs ? memory : paired.get(memory)
}

/** Caches `pairs` as `memory`'s word-pair memory (built elsewhere, e.g. on a worker thread). */
export function adoptWordPairs(memory: ExampleMemory, pairs: ExampleMemory): void {
  if (!pairs.wordPairs || pairs.examples !== memory.examples)
    throw new Error('adoptWordPairs: not a word-pair memory of the same examples.')
  if (!memory.wordPairs && !paired.has(memory)) paired.set(memory, pairs)
}

/** `withWordPairs`, built with `ExampleMemory.buildSliced` (yielding to the event loop). */
export async function withWordPairsSliced(
  memory: ExampleMemory,
  signal?: AbortSignal,
): Promise<ExampleMemory> {
  if (memory.wordPairs) return memory
  let pairs = paired.get(memory)
  if (!pairs) {
    pairs = await ExampleMemory.buildSliced(memory.examples, { wordPairs: true, signal })
    // Another caller may have built it meanwhile: keep the first (equal either way).
    if (!paired.has(memory)) paired.set(memory, pairs)
    pairs = paired.get(memory)!
  }
  return pairs
}

export interface SetProposal {
  /** The proposed tool ids, in the order of the example that named them. */
  tools: readonly string[]
  /** Similarity of the closest example, 0-1. */
  similarity: number
  /** Summed similarity of the neighbours that used exactly this set. */
  support: number
  /** Neighbours that used exactly this set. */
  agreeing: number
}

/**
 * The tool set with the most neighbour similarity behind it (ties: the one with the closer
 * neighbour), whatever the thresholds; undefined without neighbours.
 */
export function bestNeighborSet(neighbors: readonly ExampleNeighbor[]): SetProposal | undefined {
  if (neighbors.length === 0) return undefined
  const sets = new Map<string, SetProposal>()
  for (const { example, similarity } of neighbors) {
    const key = [...example.tools].sort().join('\u0001')
    const entry = sets.get(key)
    if (entry) {
      entry.support += similarity
      entry.agreeing += 1
    } else
      sets.set(key, {
        tools: example.tools,
        similarity: neighbors[0].similarity,
        support: similarity,
        agreeing: 1,
      })
  }
  // Map order is first-seen, i.e. by the closest neighbour of each set: ties go to the closer one.
  let best: SetProposal | undefined
  for (const entry of sets.values()) if (!best || entry.support > best.support) best = entry
  return best
}
