/**
 * BM25F retrieval over tool documents. wink-bm25-text-search does the indexing: tokenising each
 * field, weighting term frequencies by field, computing IDF and the saturated, length-normalised
 * BM25 weight of every (document, term) pair at consolidation, and the JSON export. Queries are
 * scored from those same weights with flat typed-array postings: wink's own `search` builds and
 * sorts an object of every matching document, which costs milliseconds at 10k tools, while
 * summing postings into a Float64Array and keeping the top k costs tens of microseconds. The two
 * give the same scores (a test checks this).
 * @module
 */
import { createRequire } from 'node:module'
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../retriever.ts'
import { BM25_FIELDS, toolToBm25Document, type Bm25Field } from './bm25-document.ts'
import { expandHeadVerb } from './query-expansion.ts'
import { tokenize } from './tokenize.ts'
import { topKAbove } from './top-k.ts'

const require = createRequire(import.meta.url)
const createWinkEngine = require('wink-bm25-text-search') as () => WinkBm25Engine

interface WinkBm25Engine {
  defineConfig(config: object): boolean
  definePrepTasks(tasks: Array<(input: never) => unknown>): number
  addDoc(doc: Record<string, string>, id: string): number
  consolidate(precision?: number): boolean
  search(text: string, limit?: number): Array<[string, number]>
  getDocs(): Record<string, { freq: Record<string, number | string> }>
  getTokens(): Record<string, number>
  exportJSON(): string
  importJSON(json: string): boolean
}

/** Index-time BM25 settings (query-time `tau` lives in the retrieve options). */
export interface Bm25Settings {
  /** Term-frequency saturation; 1.2-2 recommended. */
  k1: number
  /** Length normalisation, 0-1. */
  b: number
  /** Relative weight of each field's term frequencies. */
  fieldWeights: Record<Bm25Field, number>
}

export interface Bm25BuildOptions {
  /** Called every 1,000 tools and at the end with (done, total). */
  onProgress?: (done: number, total: number) => void
  signal?: AbortSignal
}

/** wink refuses to consolidate fewer than 3 documents; tiny libraries get empty padding documents. */
const PADDING_PREFIX = '\u0000pad'
const WEIGHT_PRECISION = 6

/**
 * Sums of 6-decimal weights: round away float noise so that equal inputs give equal scores and
 * the threshold compares the score the caller sees.
 */
function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6
}

function createEngine(settings: Bm25Settings): WinkBm25Engine {
  const engine = createWinkEngine()
  engine.defineConfig({
    fldWeights: settings.fieldWeights,
    bm25Params: { k1: settings.k1, b: settings.b, k: 1 },
  })
  engine.definePrepTasks([tokenize as (input: never) => unknown])
  return engine
}

/** The searchable form of a consolidated wink index, shared by retrievers that differ only in tau. */
interface Bm25Postings {
  engine: WinkBm25Engine
  ids: string[]
  termIndex: Map<string, number>
  postingDocs: Int32Array[]
  postingWeights: Float64Array[]
  // Scratch buffers reused by every query; safe because `search` is synchronous.
  scores: Float64Array
  seen: Uint8Array
}

function createPostings(engine: WinkBm25Engine): Bm25Postings {
  const docs = engine.getDocs()
  const ids = Object.keys(docs).filter((id) => !id.startsWith(PADDING_PREFIX))
  const termIndex = new Map(Object.entries(engine.getTokens()))
  const docLists: number[][] = Array.from({ length: termIndex.size }, () => [])
  const weightLists: number[][] = Array.from({ length: termIndex.size }, () => [])
  for (const [position, id] of ids.entries()) {
    for (const [term, weight] of Object.entries(docs[id].freq)) {
      docLists[Number(term)].push(position)
      weightLists[Number(term)].push(Number(weight))
    }
  }
  return {
    engine,
    ids,
    termIndex,
    postingDocs: docLists.map((list) => Int32Array.from(list)),
    postingWeights: weightLists.map((list) => Float64Array.from(list)),
    scores: new Float64Array(ids.length),
    seen: new Uint8Array(ids.length),
  }
}

/** Query-time behaviour; changing it needs no rebuild. */
export interface Bm25QueryOptions {
  /** Threshold when a call passes no `minScore` (the paper's tau). Default 0. */
  defaultMinScore: number
  /** Append the canonical phrase of denominal head verbs ("email …" → "send email"). Default true. */
  expandHeadVerbs: boolean
}

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
    const engine = createEngine(settings)
    for (const [position, tool] of tools.entries()) {
      if (position % 1000 === 0) {
        throwIfAborted(options.signal)
        options.onProgress?.(position, tools.length)
      }
      engine.addDoc(toolToBm25Document(tool), tool.id)
    }
    for (let padding = tools.length; padding < 3; padding += 1) {
      const empty = Object.fromEntries(BM25_FIELDS.map((field) => [field, '']))
      engine.addDoc(empty, `${PADDING_PREFIX}${padding}`)
    }
    engine.consolidate(WEIGHT_PRECISION)
    options.onProgress?.(tools.length, tools.length)
    return new Bm25Retriever(createPostings(engine), settings, DEFAULT_QUERY_OPTIONS)
  }

  /** Restores an index written by `toJSON`, built with the same settings (the manifest checks that). */
  static fromJSON(json: string, settings: Bm25Settings): Bm25Retriever {
    const engine = createEngine(settings)
    try {
      engine.importJSON(json)
    } catch (error) {
      throw new ToolselError('INDEX_CORRUPT', 'The BM25 index file could not be read.', {
        cause: error,
      })
    }
    // importJSON resets the engine, dropping the prep tasks; they must be defined again.
    engine.definePrepTasks([tokenize as (input: never) => unknown])
    return new Bm25Retriever(createPostings(engine), settings, DEFAULT_QUERY_OPTIONS)
  }

  /** A retriever over the same index with other query-time options. */
  withQueryOptions(options: Partial<Bm25QueryOptions>): Bm25Retriever {
    return new Bm25Retriever(this.#index, this.settings, { ...this.queryOptions, ...options })
  }

  /** A retriever over the same index whose default threshold is `minScore`. */
  withDefaultMinScore(minScore: number): Bm25Retriever {
    return this.withQueryOptions({ defaultMinScore: minScore })
  }

  toJSON(): string {
    return this.#index.engine.exportJSON()
  }

  get size(): number {
    return this.#index.ids.length
  }

  /** wink's own search, for cross-checking the fast path in tests. */
  winkSearch(query: string, limit: number): Array<[string, number]> {
    return this.#index.engine.search(query, limit).filter(([id]) => !id.startsWith(PADDING_PREFIX))
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
    for (const term of tokenize(query)) {
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
    for (const doc of touched) scores[doc] = roundScore(scores[doc])
    const best = topKAbove(touched, scores, k, minScore, ids)
    for (const doc of touched) {
      scores[doc] = 0
      seen[doc] = 0
    }
    return best.map(({ doc, score }) => ({ id: ids[doc], score }))
  }
}
