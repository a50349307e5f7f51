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
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../../contracts.ts'
import {
  buildExpansionPostings,
  buildPostings,
  buildPostingsAsync,
  createBm25Engine,
  expansionPostingsFromWinkJson,
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
  /**
   * Tool id → text of its `examples` expansion field (usage examples' instructions); indexed
   * when `settings.fieldWeights.examples` is set.
   */
  expansions?: ReadonlyMap<string, string>
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
  /** The expansion index (usage examples' instructions per tool), same document order. */
  readonly #expansion: Bm25Postings | undefined

  private constructor(
    index: Bm25Postings,
    settings: Bm25Settings,
    queryOptions: Bm25QueryOptions,
    expansion?: Bm25Postings,
  ) {
    if (expansion && !sameIds(index.ids, expansion.ids)) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        'The BM25 expansion index (usage examples) does not list the same tools as the BM25 index.',
      )
    }
    this.#index = index
    this.settings = settings
    this.queryOptions = queryOptions
    this.#expansion = expansion
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
    const expansions = options.expansions
    return new Bm25Retriever(
      buildPostings(tools, settings, options),
      settings,
      DEFAULT_QUERY_OPTIONS,
      expansions && expansions.size > 0
        ? buildExpansionPostings(tools, expansions, settings)
        : undefined,
    )
  }

  /** `build` that yields to the event loop while it works (for servers). */
  static async buildAsync(
    tools: readonly Tool[],
    settings: Bm25Settings,
    options: Bm25BuildOptions = {},
  ): Promise<Bm25Retriever> {
    const expansions = options.expansions
    return new Bm25Retriever(
      await buildPostingsAsync(tools, settings, options),
      settings,
      DEFAULT_QUERY_OPTIONS,
      expansions && expansions.size > 0
        ? buildExpansionPostings(tools, expansions, settings)
        : undefined,
    )
  }

  /**
   * Restores an index written by `toJSON` (and `expansionToJSON`), built with the same settings
   * (the manifest checks that).
   */
  static fromJSON(json: string, settings: Bm25Settings, expansionJson?: string): Bm25Retriever {
    return new Bm25Retriever(
      postingsFromWinkJson(json, settings),
      settings,
      DEFAULT_QUERY_OPTIONS,
      expansionJson === undefined
        ? undefined
        : expansionPostingsFromWinkJson(expansionJson, settings),
    )
  }

  /** A retriever over the same index with other query-time options. */
  withQueryOptions(options: Partial<Bm25QueryOptions>): Bm25Retriever {
    return new Bm25Retriever(
      this.#index,
      this.settings,
      { ...this.queryOptions, ...options },
      this.#expansion,
    )
  }

  /** The index in wink-bm25-text-search's export format. */
  toJSON(): string {
    return postingsToWinkJson(this.#index)
  }

  /** The expansion index in the same format, or undefined when the library has no usage examples. */
  expansionToJSON(): string | undefined {
    return this.#expansion && postingsToWinkJson(this.#expansion)
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

  /**
   * Synchronous core of `retrieve`: candidates scoring above `minScore`, best first, at most `k`.
   * With usage examples, a tool's score is its BM25 score plus `fieldWeights.examples` times the
   * BM25 score of its expansion document.
   */
  search(query: string, k: number, minScore: number): Candidate[] {
    const { scores, seen, ids } = this.#index
    const touched: number[] = []
    const terms = tokenize(query)
    // Each term costs a walk over its postings: a query's first MAX_QUERY_TERMS terms are used.
    if (terms.length > MAX_QUERY_TERMS) terms.length = MAX_QUERY_TERMS
    accumulate(this.#index, terms, 1, scores, seen, touched)
    const expansionWeight = this.settings.fieldWeights.examples ?? 0
    if (this.#expansion && expansionWeight > 0) {
      accumulate(this.#expansion, terms, expansionWeight, scores, seen, touched)
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

/** Adds `weight` × each term's BM25 weights into `scores` (positions of `index`'s documents). */
function accumulate(
  index: Bm25Postings,
  terms: readonly string[],
  weight: number,
  scores: Float64Array,
  seen: Uint8Array,
  touched: number[],
): void {
  const { termIndex, postingDocs, postingWeights } = index
  for (const term of terms) {
    const termId = termIndex.get(term)
    if (termId === undefined) continue
    const docs = postingDocs[termId]
    const weights = postingWeights[termId]
    for (let position = 0; position < docs.length; position += 1) {
      const doc = docs[position]
      if (seen[doc] === 0) {
        seen[doc] = 1
        touched.push(doc)
      }
      scores[doc] += weight * weights[position]
    }
  }
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, position) => id === b[position])
}
