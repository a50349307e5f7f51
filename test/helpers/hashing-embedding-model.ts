/**
 * Test doubles built on real `EmbeddingModel` implementations (no module mocks): the hashing
 * embedder, and a wrapper that records every `embed` call (vercel/ai's MockEmbeddingModel idea).
 * @module
 */
import type { EmbedOptions, EmbeddingModel } from '../../src/models/embedding-model.ts'
import { HashingEmbeddingModel } from '../../src/models/hashing-embedding-model.ts'

export { HashingEmbeddingModel }

/** A deterministic hashing embedder; 256 dimensions unless told otherwise. */
export function createHashingEmbeddingModel(dimensions = 256): HashingEmbeddingModel {
  return new HashingEmbeddingModel(dimensions)
}

export interface RecordedEmbedCall {
  texts: readonly string[]
  options: EmbedOptions
}

/** Wraps `inner` and keeps every call in `calls`, so tests can count what was embedded. */
export function recordEmbedCalls(
  inner: EmbeddingModel,
): EmbeddingModel & { calls: RecordedEmbedCall[]; embeddedTexts(): number } {
  const calls: RecordedEmbedCall[] = []
  return {
    modelId: inner.modelId,
    dimensions: inner.dimensions,
    maxBatchSize: inner.maxBatchSize,
    calls,
    embeddedTexts: () => calls.reduce((sum, call) => sum + call.texts.length, 0),
    embed(texts, options = {}) {
      calls.push({ texts: [...texts], options })
      return inner.embed(texts, options)
    },
  }
}
