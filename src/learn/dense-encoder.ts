/**
 * The encoder of the learned selector's dense features (learn/dense-features.ts): static GloVe
 * word vectors, loaded once per process (about a second from the binary cache that `npm ci`
 * writes; see models/static/word-vectors.ts). When they cannot be loaded the selector works
 * without them (neutral feature values) and says so once on stderr.
 * @module
 */
import { StaticEmbeddingModel } from '../models/static/static-embedding-model.ts'
import { DenseToolVectors } from './dense-features.ts'

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
