/** The process' static word vectors for tests that need them (fails the test when unavailable). */
import { denseToolVectors } from '../../src/learn/dense-encoder.ts'
import type { DenseToolVectors } from '../../src/learn/dense-features.ts'

/**
 * The static GloVe vectors (learn/dense-encoder.ts). The first load on a fresh install converts
 * the package's JSON (`npm ci` does it in `prepare`): give its beforeAll DENSE_LOAD_TIMEOUT_MS.
 */
export async function requireDenseVectors(): Promise<DenseToolVectors> {
  const loaded = await denseToolVectors()
  if (loaded === undefined) throw new Error('static word vectors unavailable')
  return loaded
}

export const DENSE_LOAD_TIMEOUT_MS = 180_000
