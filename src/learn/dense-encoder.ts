/**
 * The encoder of the learned selector's dense features (learn/dense-features.ts): static GloVe
 * word vectors, loaded once per process (about a second from the binary cache that `npm ci`
 * writes; see models/static/word-vectors.ts). When they cannot be loaded the selector works
 * without them (neutral feature values) and says so once on stderr.
 * @module
 */
import { StaticEmbeddingModel } from '../models/static/static-embedding-model.ts'
import { DenseToolVectors } from './dense-features.ts'
import { mappedToolVectors } from './dense-map.ts'

let loading: Promise<DenseToolVectors | undefined> | undefined

/** The process' dense tool vectors (undefined when the word vectors are unavailable). */
export function denseToolVectors(): Promise<DenseToolVectors | undefined> {
  loading ??= StaticEmbeddingModel.load('glove-100d', (message) =>
    process.stderr.write(`${message}\n`),
  ).then(
    (model) => new DenseToolVectors(model),
    (error: unknown) => {
      process.stderr.write(
        `learned selector: static word vectors unavailable, dense features left neutral (${(error as Error).message})\n`,
      )
      return undefined
    },
  )
  return loading
}

/** The map part of a model's `denseMap` (learned-model.ts). */
export interface StoredDenseMap {
  size: number
  query: readonly number[]
  tool: readonly number[]
}

const learned = new WeakMap<StoredDenseMap, Promise<DenseToolVectors | undefined>>()

/**
 * Dense tool vectors in a model's learned space (learn/dense-map.ts): the process' static word
 * vectors through the model's request and tool maps; one instance (and tool-vector memo) per map.
 * Undefined when the word vectors are unavailable, as for denseToolVectors.
 */
export function learnedToolVectors(map: StoredDenseMap): Promise<DenseToolVectors | undefined> {
  let vectors = learned.get(map)
  if (vectors === undefined) {
    vectors = denseToolVectors().then((base) => base && mappedToolVectors(base, map))
    learned.set(map, vectors)
  }
  return vectors
}
