/**
 * A deterministic bag-of-words embedder with no dependencies: each lower-cased word is hashed to
 * one of `dimensions` buckets with a ±1 sign (the "hashing trick", Weinberger et al. 2009,
 * https://arxiv.org/abs/0902.2206). It knows no synonyms, so it is a fallback and a test double,
 * not a semantic model.
 * @module
 */
import { throwIfAborted } from '../errors.ts'
import { idHash } from '../library/id-table.ts'
import { normalizeL2, type EmbedOptions, type EmbeddingModel } from './embedding-model.ts'

/** Default vector length of `hashing` ids without a number. */
export const DEFAULT_HASHING_DIMENSIONS = 256

/** Whether `dimensions` is a vector length `hashing:<dimensions>` takes: an integer in 8-65536. */
export function validHashingDimensions(dimensions: number): boolean {
  return Number.isInteger(dimensions) && dimensions >= 8 && dimensions <= 65_536
}

const WORD = /[\p{L}\p{N}]+/gu

export class HashingEmbeddingModel implements EmbeddingModel {
  readonly modelId: string
  readonly dimensions: number
  /** Hashing is cheap and has no forward pass, so there is no batch limit. */
  readonly maxBatchSize = Infinity

  /** @param dimensions Vector length, 8-65536. Default 256. */
  constructor(dimensions = DEFAULT_HASHING_DIMENSIONS) {
    if (!validHashingDimensions(dimensions)) {
      throw new RangeError(
        `Hashing embedder dimensions must be an integer in 8-65536, got ${dimensions}.`,
      )
    }
    this.dimensions = dimensions
    this.modelId = `hashing:${dimensions}`
  }

  /** Unit vectors; a text without words gets the zero vector. `kind` is ignored (symmetric model). */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    throwIfAborted(options.signal)
    return texts.map((text) => this.#embedOne(text))
  }

  #embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions)
    for (const [word] of text.toLowerCase().matchAll(WORD)) {
      const hash = idHash(word)
      // The top bit picks the sign so that collisions cancel out on average instead of piling up.
      vector[hash % this.dimensions] += hash & 0x80000000 ? -1 : 1
    }
    return normalizeL2(vector)
  }
}
