/**
 * Dense retrieval: embed the query, find the nearest tool vectors, map positions to tool ids.
 * @module
 */
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { EmbeddingModel } from '../../models/embedding-model.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../../contracts.ts'
import type { DenseIndex } from './dense-index.ts'

export interface DenseRetrieverOptions {
  embedder: EmbeddingModel
  /** Built with the same embedder (checked: INDEX_MISMATCH otherwise). */
  index: DenseIndex
  /**
   * Cosine threshold used when a call passes no `minScore`. Default `-Infinity` (keep the top k):
   * useful cut-offs depend on the model (about 0.3 for use-lite, 0.5-0.8 for e5/bge).
   */
  minScore?: number
}

export class DenseRetriever implements Retriever {
  readonly name: string
  readonly embedder: EmbeddingModel
  readonly defaultMinScore: number
  readonly #index: DenseIndex

  constructor(options: DenseRetrieverOptions) {
    const { embedder, index } = options
    if (
      index.index.embedderId !== embedder.modelId ||
      index.index.dimensions !== embedder.dimensions
    ) {
      throw new ToolselError(
        'INDEX_MISMATCH',
        `Dense index was built with ${index.index.embedderId} (${index.index.dimensions} dims), but the retriever embeds queries with ${embedder.modelId} (${embedder.dimensions}). Rebuild the index with --embedder ${embedder.modelId}.`,
        { details: { builtWith: index.index.embedderId, embedder: embedder.modelId } },
      )
    }
    this.name = `dense:${embedder.modelId}`
    this.embedder = embedder
    this.defaultMinScore = options.minScore ?? -Infinity
    this.#index = index
  }

  async retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]> {
    throwIfAborted(options.signal)
    const k = Math.floor(options.k)
    if (k <= 0) return []
    const [vector] = await this.embedder.embed([query], { kind: 'query', signal: options.signal })
    throwIfAborted(options.signal)
    // A zero query vector (no known words, for the hashing model) carries no signal: every
    // cosine would be 0 and the "ranking" would be insertion order.
    if (vector.every((value) => value === 0)) return []
    const minScore = options.minScore ?? this.defaultMinScore
    return this.#index.index
      .search(vector, k)
      .filter((hit) => hit.score >= minScore)
      .map((hit) => ({ id: this.#index.ids[hit.position], score: hit.score }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }
}
