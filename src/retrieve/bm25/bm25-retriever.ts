/**
 * BM25F retrieval over tool documents. The index holds wink-bm25-text-search's weights (its
 * tokenising per field, field-weighted term frequencies, IDF, the saturated, length-normalised
 * BM25 weight of every (document, term) pair), built directly into flat typed-array postings; see
 * bm25-postings.ts, and bm25-search.ts for the scoring (MaxScore pruning, a window of documents
 * at a time). wink's own `search` builds and sorts an object of every matching document, which
 * costs milliseconds at 10k tools; the two give the same scores (a test checks this).
 * @module
 */
import { ToolselError, throwIfAborted } from '../../errors.ts'
import { idArray, type IdList } from '../../library/id-table.ts'
import type { Tool } from '../../library/tool.ts'
import type { ToolSequence } from '../../library/tool-library.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../../contracts.ts'
import {
  buildExpansionPostings,
  buildExpansionPostingsAsync,
  buildPostings,
  buildPostingsAsync,
  expansionPostingsFromWinkJson,
  postingsFromWinkJson,
  type Bm25Postings,
  type Bm25Settings,
} from './bm25-postings.ts'
import {
  canPrune,
  queryTerms,
  SearchScratch,
  searchExhaustive,
  searchWindowed,
} from './bm25-search.ts'
import { expandHeadVerb } from './query-expansion.ts'
import { tokenizeQuery } from './tokenize.ts'
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

/** A query's top k up to this many is kept on the retriever's own heap, reset per query. */
const KEPT_TOP_K = 1_024

const DEFAULT_QUERY_OPTIONS: Bm25QueryOptions = { defaultMinScore: 0, expandHeadVerbs: true }

export class Bm25Retriever implements Retriever {
  readonly name = 'bm25'
  /** `retrieve` runs to its end without waiting (see Retriever.synchronous). */
  readonly synchronous = true
  readonly settings: Bm25Settings
  readonly queryOptions: Bm25QueryOptions
  /** Tool ids by document position. */
  readonly #ids: IdList
  readonly #index: Bm25Postings
  /** The expansion index (usage examples' instructions per tool), same document order. */
  readonly #expansion: Bm25Postings | undefined
  readonly #scratch: SearchScratch
  /** Whether queries may use MaxScore pruning (tests turn it off to compare). */
  readonly #prune: boolean
  /** Ties of scores rank by tool id: whether the tool at `a` ranks after the one at `b`. */
  readonly #after: (a: number, b: number) => boolean
  /**
   * The top k of the query being searched, reset per query (`search` is synchronous: one query at
   * a time): two typed arrays per query fewer (k = 15: the scores' 120 bytes are past V8's limit
   * for arrays kept on the heap, so each had a backing store of its own). Up to KEPT_TOP_K.
   */
  readonly #top: TopK

  private constructor(
    ids: IdList,
    index: Bm25Postings,
    settings: Bm25Settings,
    queryOptions: Bm25QueryOptions,
    expansion: Bm25Postings | undefined,
    scratch?: SearchScratch,
    prune = true,
  ) {
    if (index.documents !== ids.length) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `The BM25 index holds ${index.documents} tools, the library ${ids.length}.`,
      )
    }
    if (expansion && expansion.documents !== index.documents) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        'The BM25 expansion index (usage examples) does not hold as many tools as the BM25 index.',
      )
    }
    this.#ids = ids
    this.#index = index
    this.settings = settings
    this.queryOptions = queryOptions
    this.#expansion = expansion
    this.#scratch = scratch ?? new SearchScratch(index.documents)
    this.#prune = prune
    this.#after = ids.after ? ids.after.bind(ids) : (a, b) => ids.at(a)! > ids.at(b)!
    this.#top = new TopK(0, this.#after)
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
    const ids = tools.map((tool) => tool.id)
    return new Bm25Retriever(
      ids,
      buildPostings(tools, settings, options),
      settings,
      DEFAULT_QUERY_OPTIONS,
      expansions && expansions.size > 0
        ? buildExpansionPostings(ids, expansions, settings)
        : undefined,
    )
  }

  /**
   * `build` that yields to the event loop while it works (for servers). `tools` may be a
   * library's `walk` (each tool read when its turn comes, none kept) with the library's `ids`.
   */
  static async buildAsync(
    tools: ToolSequence,
    settings: Bm25Settings,
    options: Bm25BuildOptions & { ids?: IdList } = {},
  ): Promise<Bm25Retriever> {
    const expansions = options.expansions
    const ids = options.ids ?? Array.from({ length: tools.length }, (_, at) => tools.at(at)!.id)
    return new Bm25Retriever(
      ids,
      await buildPostingsAsync(tools, settings, options),
      settings,
      DEFAULT_QUERY_OPTIONS,
      expansions && expansions.size > 0
        ? await buildExpansionPostingsAsync(ids, expansions, settings, options.signal)
        : undefined,
    )
  }

  /**
   * This retriever's tool index (same ids, postings and settings) with the expansion index of
   * `expansions` in its place (none when undefined or empty): what `buildAsync` of the same tools
   * with these expansions gives, without tokenizing the tools again. Yields to the event loop.
   */
  async withExpansionsAsync(
    expansions: ReadonlyMap<string, string> | undefined,
    signal?: AbortSignal,
  ): Promise<Bm25Retriever> {
    return new Bm25Retriever(
      this.#ids,
      this.#index,
      this.settings,
      DEFAULT_QUERY_OPTIONS,
      expansions && expansions.size > 0
        ? await buildExpansionPostingsAsync(this.#ids, expansions, this.settings, signal)
        : undefined,
    )
  }

  /**
   * A retriever over saved postings (see store/kinds/bm25-file.ts), built with the same settings
   * (the manifest checks that). `ids`: the tool ids in the postings' document order.
   */
  static fromPostings(
    ids: IdList,
    index: Bm25Postings,
    settings: Bm25Settings,
    expansion?: Bm25Postings,
  ): Bm25Retriever {
    return new Bm25Retriever(ids, index, settings, DEFAULT_QUERY_OPTIONS, expansion)
  }

  /**
   * Restores an index saved by toolsel before the binary format (wink-bm25-text-search's JSON
   * export, and the expansion index's), built with the same settings.
   */
  static fromWinkJson(json: string, settings: Bm25Settings, expansionJson?: string): Bm25Retriever {
    const { ids, postings } = postingsFromWinkJson(json, settings)
    const expansion =
      expansionJson === undefined
        ? undefined
        : expansionPostingsFromWinkJson(expansionJson, settings)
    if (expansion && !sameIds(ids, expansion.ids)) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        'The BM25 expansion index (usage examples) does not list the same tools as the BM25 index.',
      )
    }
    return new Bm25Retriever(ids, postings, settings, DEFAULT_QUERY_OPTIONS, expansion?.postings)
  }

  /** A retriever over the same index with other query-time options. */
  withQueryOptions(options: Partial<Bm25QueryOptions>): Bm25Retriever {
    return new Bm25Retriever(
      this.#ids,
      this.#index,
      this.settings,
      { ...this.queryOptions, ...options },
      this.#expansion,
      this.#scratch,
      this.#prune,
    )
  }

  /** The same index scored exhaustively, never pruned (for tests and benchmarks). */
  withoutPruning(): Bm25Retriever {
    return new Bm25Retriever(
      this.#ids,
      this.#index,
      this.settings,
      this.queryOptions,
      this.#expansion,
      this.#scratch,
      false,
    )
  }

  /** The postings, for saving. */
  get postings(): Bm25Postings {
    return this.#index
  }

  /** The expansion index's postings, or undefined when the library has no usage examples. */
  get expansionPostings(): Bm25Postings | undefined {
    return this.#expansion
  }

  /** Tool ids by document position. */
  get ids(): readonly string[] {
    return idArray(this.#ids)
  }

  get size(): number {
    return this.#ids.length
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
    const ids = this.#ids
    const all = tokenizeQuery(query)
    // Each term costs a walk over its postings: a query's first MAX_QUERY_TERMS terms are used.
    const words = all.length > MAX_QUERY_TERMS ? all.slice(0, MAX_QUERY_TERMS) : all
    const expansionWeight = this.settings.fieldWeights.examples ?? 0
    const terms = queryTerms(words, this.#index, this.#expansion, expansionWeight)
    const top = k >= 1 && k <= KEPT_TOP_K ? this.#top.reset(k) : new TopK(k, this.#after)
    const hits =
      this.#prune && canPrune(terms)
        ? searchWindowed(terms, expansionWeight, this.#scratch, top, minScore)
        : searchExhaustive(terms, expansionWeight, this.#scratch, top, minScore)
    return hits.map(({ position, score }) => ({ id: ids.at(position)!, score, position }))
  }
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, position) => id === b[position])
}
