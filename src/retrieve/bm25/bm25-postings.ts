/**
 * The BM25 index data: built and serialised by wink-bm25-text-search, held in memory as flat
 * typed-array postings. After consolidation wink keeps, per document, an object of term weights
 * plus an inverted index of ids; the postings hold the same numbers in a fraction of the memory
 * (60 MiB less at 50k tools), so the wink engine is dropped once they are built and its JSON
 * export is regenerated from them on save. `importJSON` reads that export back (tests check it).
 * @module
 */
import { createRequire } from 'node:module'
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import { BM25_FIELDS, toolToBm25Document, type Bm25Field } from './bm25-document.ts'
import { tokenize } from './tokenize.ts'

const require = createRequire(import.meta.url)
const createWinkEngine = require('wink-bm25-text-search') as () => WinkBm25Engine

interface WinkDocument {
  freq: Record<string, number | string>
  fieldValues: Record<string, unknown>
  length: number
}

export interface WinkBm25Engine {
  defineConfig(config: object): boolean
  definePrepTasks(tasks: Array<(input: never) => unknown>): number
  addDoc(doc: Record<string, string>, id: string): number
  consolidate(precision?: number): boolean
  search(text: string, limit?: number): Array<[string, number]>
  getDocs(): Record<string, WinkDocument>
  getTokens(): Record<string, number>
  getConfig(): object
  getTotalCorpusLength(): number
  importJSON(json: string): boolean
  exportJSON(): string
}

/** Index-time BM25 settings (query-time `tau` lives in the retrieve options). */
export interface Bm25Settings {
  /** Term-frequency saturation; 1.2-2 recommended. */
  k1: number
  /** Length normalisation, 0-1. */
  b: number
  /**
   * Relative weight of each field's term frequencies. `examples` weighs the separate expansion
   * index (usage examples' instructions, see `buildExpansionPostings`) against the tool fields.
   */
  fieldWeights: Record<Bm25Field, number> & { examples?: number }
}

export interface Bm25Postings {
  /** Tool ids by document position. */
  ids: string[]
  /** Term → term index (wink's token numbering). */
  termIndex: Map<string, number>
  /** Per term: the positions of the documents containing it, and its BM25 weight in each. */
  postingDocs: Int32Array[]
  postingWeights: Float64Array[]
  /** Kept only to regenerate wink's export byte-compatible: lengths, corpus length, config. */
  docLengths: Float64Array
  paddingDocs: number
  totalCorpusLength: number
  winkConfig: object
  /** Scratch buffers reused by every query; safe because search is synchronous. */
  scores: Float64Array
  seen: Uint8Array
}

/** wink refuses to consolidate fewer than 3 documents; tiny libraries get empty padding documents. */
const PADDING_PREFIX = '\u0000pad'
const MIN_DOCUMENTS = 3
const WEIGHT_PRECISION = 6

/** The field of the expansion index's documents. */
const EXPANSION_FIELD = 'examples'

export function createBm25Engine(settings: Bm25Settings): WinkBm25Engine {
  const engine = createWinkEngine()
  const { examples: _expansion, ...fieldWeights } = settings.fieldWeights
  engine.defineConfig({
    fldWeights: fieldWeights,
    bm25Params: { k1: settings.k1, b: settings.b, k: 1 },
  })
  engine.definePrepTasks([tokenize as (input: never) => unknown])
  return engine
}

export interface BuildPostingsOptions {
  onProgress?: (done: number, total: number) => void
  signal?: AbortSignal
}

export function buildPostings(
  tools: readonly Tool[],
  settings: Bm25Settings,
  options: BuildPostingsOptions = {},
): Bm25Postings {
  const steps = buildSteps(tools, settings, options)
  let step = steps.next()
  while (!step.done) step = steps.next()
  return step.value
}

/** Longest stretch, in ms, that `buildPostingsAsync` holds the event loop before yielding. */
const YIELD_EVERY_MS = 10

/**
 * `buildPostings` that yields to the event loop every few milliseconds, so that the server keeps
 * answering (health checks, other requests, the build's own deadline) while a large library is
 * tokenized.
 */
export async function buildPostingsAsync(
  tools: readonly Tool[],
  settings: Bm25Settings,
  options: BuildPostingsOptions = {},
): Promise<Bm25Postings> {
  const steps = buildSteps(tools, settings, options)
  let sliceStart = performance.now()
  let step = steps.next()
  while (!step.done) {
    if (performance.now() - sliceStart > YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      throwIfAborted(options.signal)
      sliceStart = performance.now()
    }
    step = steps.next()
  }
  return step.value
}

/** The build, one tool per step. */
function* buildSteps(
  tools: readonly Tool[],
  settings: Bm25Settings,
  options: BuildPostingsOptions,
): Generator<void, Bm25Postings> {
  const engine = createBm25Engine(settings)
  for (const [position, tool] of tools.entries()) {
    if (position % 1000 === 0) {
      throwIfAborted(options.signal)
      options.onProgress?.(position, tools.length)
    }
    engine.addDoc(toolToBm25Document(tool), tool.id)
    yield
  }
  for (let padding = tools.length; padding < MIN_DOCUMENTS; padding += 1) {
    const empty = Object.fromEntries(BM25_FIELDS.map((field) => [field, '']))
    engine.addDoc(empty, `${PADDING_PREFIX}${padding}`)
  }
  engine.consolidate(WEIGHT_PRECISION)
  options.onProgress?.(tools.length, tools.length)
  return postingsFromEngine(engine)
}

/**
 * The expansion index: one document per tool (same order as `tools`) whose one field is the
 * tool's expansion text (usage examples' instructions; empty for a tool without). Kept apart
 * from the tool fields so that example words do not change the tool fields' IDF: in a small
 * library every tool's examples share the common words, and a joint index would make those
 * words worthless in names and descriptions too.
 */
export function buildExpansionPostings(
  tools: readonly Tool[],
  expansions: ReadonlyMap<string, string>,
  settings: Bm25Settings,
): Bm25Postings {
  const engine = createExpansionEngine(settings)
  for (const tool of tools)
    engine.addDoc({ [EXPANSION_FIELD]: expansions.get(tool.id) ?? '' }, tool.id)
  for (let padding = tools.length; padding < MIN_DOCUMENTS; padding += 1) {
    engine.addDoc({ [EXPANSION_FIELD]: '' }, `${PADDING_PREFIX}${padding}`)
  }
  engine.consolidate(WEIGHT_PRECISION)
  return postingsFromEngine(engine)
}

/** Reads an expansion index file (wink's export) into postings. */
export function expansionPostingsFromWinkJson(json: string, settings: Bm25Settings): Bm25Postings {
  return postingsFromEngineJson(createExpansionEngine(settings), json)
}

function createExpansionEngine(settings: Bm25Settings): WinkBm25Engine {
  const engine = createWinkEngine()
  engine.defineConfig({
    fldWeights: { [EXPANSION_FIELD]: 1 },
    bm25Params: { k1: settings.k1, b: settings.b, k: 1 },
  })
  engine.definePrepTasks([tokenize as (input: never) => unknown])
  return engine
}

/** Reads wink's JSON export (an index file) into postings. */
export function postingsFromWinkJson(json: string, settings: Bm25Settings): Bm25Postings {
  return postingsFromEngineJson(createBm25Engine(settings), json)
}

function postingsFromEngineJson(engine: WinkBm25Engine, json: string): Bm25Postings {
  try {
    engine.importJSON(json)
  } catch (error) {
    throw new ToolselError('INDEX_CORRUPT', 'The BM25 index file could not be read.', {
      cause: error,
    })
  }
  // importJSON resets the engine, dropping the prep tasks (wink's documented caveat).
  engine.definePrepTasks([tokenize as (input: never) => unknown])
  return postingsFromEngine(engine)
}

function postingsFromEngine(engine: WinkBm25Engine): Bm25Postings {
  const docs = engine.getDocs()
  const allIds = Object.keys(docs)
  const ids = allIds.filter((id) => !id.startsWith(PADDING_PREFIX))
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
    ids,
    termIndex,
    postingDocs: docLists.map((list) => Int32Array.from(list)),
    postingWeights: weightLists.map((list) => Float64Array.from(list)),
    docLengths: Float64Array.from(ids, (id) => docs[id].length),
    paddingDocs: allIds.length - ids.length,
    totalCorpusLength: engine.getTotalCorpusLength(),
    winkConfig: engine.getConfig(),
    scores: new Float64Array(ids.length),
    seen: new Uint8Array(ids.length),
  }
}

/** wink's `exportJSON` format, regenerated from the postings (wink's `importJSON` reads it). */
export function postingsToWinkJson(postings: Bm25Postings): string {
  const { ids, termIndex, postingDocs, postingWeights, docLengths } = postings
  const documents: Record<string, WinkDocument> = {}
  for (const [position, id] of ids.entries()) {
    documents[id] = { freq: {}, fieldValues: {}, length: docLengths[position] }
  }
  const invertedIndex: string[][] = postingDocs.map((docs, term) => {
    const weights = postingWeights[term]
    return Array.from(docs, (doc, index) => {
      documents[ids[doc]].freq[term] = weights[index]
      return ids[doc]
    })
  })
  for (let padding = 0; padding < postings.paddingDocs; padding += 1) {
    documents[`${PADDING_PREFIX}${ids.length + padding}`] = { freq: {}, fieldValues: {}, length: 0 }
  }
  const docStats = {
    totalCorpusLength: postings.totalCorpusLength,
    totalDocs: ids.length + postings.paddingDocs,
    consolidated: true,
  }
  const tokens = Object.fromEntries(termIndex)
  return JSON.stringify([
    postings.winkConfig,
    docStats,
    documents,
    invertedIndex,
    termIndex.size,
    tokens,
    {},
    [],
    [],
  ])
}

/** Drops padding documents from wink search results. */
export function isPadding(id: string): boolean {
  return id.startsWith(PADDING_PREFIX)
}
