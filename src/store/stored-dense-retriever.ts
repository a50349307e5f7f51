/**
 * A library's dense retriever together with what saving it needs: the vector index and, after a
 * build, the embedding cache. The index store finds it under `retrievers.get('dense')`.
 * @module
 */
import type { EmbeddingModel } from '../models/embedding-model.ts'
import type { DenseIndex } from '../retrieve/dense/dense-index.ts'
import { DenseRetriever } from '../retrieve/dense/dense-retriever.ts'
import type { EmbeddingCache } from '../retrieve/dense/embedding-cache.ts'

export interface StoredDenseRetrieverOptions {
  embedder: EmbeddingModel
  index: DenseIndex
  /** Cosine threshold when a call passes none. Default none (the k nearest). */
  minScore?: number
  /** The tool vectors by content hash; set after a build, absent after a load. */
  cache?: EmbeddingCache
}

export class StoredDenseRetriever extends DenseRetriever {
  /** The vectors and tool ids this retriever searches. */
  readonly dense: DenseIndex
  /** Saved as `embeddings.cache` so that the next build of this library re-embeds only changed tools. */
  readonly cache?: EmbeddingCache

  constructor(options: StoredDenseRetrieverOptions) {
    super(options)
    this.dense = options.index
    this.cache = options.cache
  }
}
