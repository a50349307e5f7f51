/**
 * The retrieval contract: a query in, scored tool ids out, best first.
 * @module
 */

/** One retrieved tool. Scores are only comparable within one retriever. */
export interface Candidate {
  /** Tool id in the library the retriever was built over. */
  id: string
  /** Retriever-specific relevance score; higher is better (BM25 score, cosine, fused score). */
  score: number
}

export interface RetrieveOptions {
  /** Maximum number of candidates to return. */
  k: number
  /**
   * Minimum score a candidate needs to be kept (exclusive for BM25: the paper keeps scores above
   * tau). `undefined` means the retriever's own configured threshold.
   */
  minScore?: number
  signal?: AbortSignal
}

export interface Retriever {
  /** Identifies the retriever in responses and benchmark rows: `bm25`, `dense:use-lite`, `hybrid(bm25+dense:use-lite)`. */
  readonly name: string
  /** Candidates sorted by descending score (ties by id), at most `k`, all above the threshold. */
  retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]>
}
