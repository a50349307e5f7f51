/**
 * BM25F retrieval over tool documents. wink-bm25-text-search does the indexing (tokenising each
 * field, weighting term frequencies by field, IDF, the saturated, length-normalised BM25 weight of
 * every (document, term) pair, the JSON format on disk); see bm25-postings.ts. Queries are scored
 * from those same weights with flat typed-array postings: wink's own `search` builds and sorts an
 * object of every matching document, which costs milliseconds at 10k tools, while summing
 * postings into a Float64Array and keeping the top k costs tens of microseconds. The two give the
 * same scores (a test checks this).
 * @module
 */
import { throwIfAborted } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../../contracts.ts'
import {
  buildPostings,
  buildPostingsAsync,
  createBm25Engine,
  isPadding,
  postingsFromWinkJson,
  postingsToWinkJson,
  type Bm25Postings,
  type Bm25Settings,
} from './bm25-postings.ts'
import { expandHeadVerb } from './query-expansion.ts'
import { tokenize } from './tokenize.ts'
import { TopK } from '../top-k.ts'

export type { Bm25Settings } from './bm25-postings.ts'

export interface Bm25BuildOptions {
  /** Called every 1,000 tools and at the end with (done, total). */
  onProgress?: (done: number, total: number) => void
  signal?: AbortSignal
}

/**
 * Sums of 6-decimal weights: round away float noise so that equal inputs give equal scores and
 * the threshold compares the score the caller sees.
 */
function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6
}

/** Query-time behaviour; changing it needs no rebuild. */
export interface Bm25QueryOptions {
  /** Threshold when a call passes no `minScore` (the paper's tau). Default 0. */
  defaultMinScore: number
  /** Append the canonical phrase of denominal head verbs ("email …" → "send email"). Default true. */
  expandHeadVerbs: boolean
}

/**
 * Most query terms scored; later ones are ignored. A term costs time linear in the number of tools
 * containing it, so an 8,000-character query of common words could otherwise cost milliseconds
 * per term at 50k tools. Instructions and steps are a few dozen terms.
 */
export const MAX_QUERY_TERMS = 256

const DEFAULT_QUERY_OPTIONS: Bm25QueryOptions = { defaultMinScore: 0, expandHeadVerbs: true }

export class Bm25Retriever implements Retriever {
  readonly name = 'bm25'
  readonly settings: Bm25Settings
  readonly queryOptions: Bm25QueryOptions
  readonly #index: Bm25Postings

  private constructor(index: Bm25Postings, settings: Bm25Settings, queryOptions: Bm25QueryOptions) {
    this.#index = index
    this.settings = settings
    this.queryOptions = queryOptions
  }

  /** Default threshold when a call passes no `minScore` (the paper's tau). */
  get defaultMinScore(): number {
    return this.queryOptions.defaultMinScore
  }

  /** Indexes `tools` (ids must be unique: ToolLibrary guarantees it). */
  static build(
    tools: readonly Tool[],
    settings: Bm25Settings,
    options: Bm25BuildOptions = {},
  ): Bm25Retriever {
    return new Bm25Retriever(
      buildPostings(tools, settings, options),
      settings,
      DEFAULT_QUERY_OPTIONS,
    )
  }

  /** `build` that yields to the event loop while it works (for servers). */
  static async buildAsync(
    tools: readonly Tool[],
    settings: Bm25Settings,
    options: Bm25BuildOptions = {},
  ): Promise<Bm25Retriever> {
    return new Bm25Retriever(
      await buildPostingsAsync(tools, settings, options),
      settings,
      DEFAULT_QUERY_OPTIONS,
    )
  }

  /** Restores an index written by `toJSON`, built with the same settings (the manifest checks that). */
  static fromJSON(json: string, settings: Bm25Settings): Bm25Retriever {
    return new Bm25Retriever(postingsFromWinkJson(json, settings), settings, DEFAULT_QUERY_OPTIONS)
  }

  /** A retriever over the same index with other query-time options. */
  withQueryOptions(options: Partial<Bm25QueryOptions>): Bm25Retriever {
    return new Bm25Retriever(this.#index, this.settings, { ...this.queryOptions, ...options })
  }

  /** The index in wink-bm25-text-search's export format. */
  toJSON(): string {
    return postingsToWinkJson(this.#index)
  }

  get size(): number {
    return this.#index.ids.length
  }

  /** wink's own search over this index's export, for cross-checking the fast path in tests. */
  winkSearch(query: string, limit: number): Array<[string, number]> {
    const engine = createBm25Engine(this.settings)
    engine.importJSON(this.toJSON())
    engine.definePrepTasks([tokenize as (input: never) => unknown])
    return engine.search(query, limit).filter(([id]) => !isPadding(id))
  }

  async retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]> {
    throwIfAborted(options.signal)
    const text = this.queryOptions.expandHeadVerbs ? expandHeadVerb(query) : query
    return this.search(text, options.k, options.minScore ?? this.defaultMinScore)
  }

  /** Synchronous core of `retrieve`: candidates scoring above `minScore`, best first, at most `k`. */
  search(query: string, k: number, minScore: number): Candidate[] {
    const { scores, seen, ids, termIndex, postingDocs, postingWeights } = this.#index
    const touched: number[] = []
    const terms = tokenize(query)
    // Each term costs a walk over its postings: a query's first MAX_QUERY_TERMS terms are used.
    if (terms.length > MAX_QUERY_TERMS) terms.length = MAX_QUERY_TERMS
    for (const term of terms) {
      const termId = termIndex.get(term)
      if (termId === undefined) continue
      const docs = postingDocs[termId]
      const weights = postingWeights[termId]
      for (let index = 0; index < docs.length; index += 1) {
        const doc = docs[index]
        if (seen[doc] === 0) {
          seen[doc] = 1
          touched.push(doc)
        }
        scores[doc] += weights[index]
      }
    }
    const best = new TopK(k, (a, b) => ids[a] > ids[b])
    for (const doc of touched) {
      const score = roundScore(scores[doc])
      if (score > minScore) best.push(doc, score)
      scores[doc] = 0
      seen[doc] = 0
    }
    return best.sorted().map(({ position, score }) => ({ id: ids[position], score }))
  }
}
