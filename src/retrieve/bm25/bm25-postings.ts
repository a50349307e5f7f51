/**
 * The BM25 index data: flat typed-array postings (term dictionary, per-term document positions and
 * weights), built here directly from the tools without wink-bm25-text-search's in-memory engine,
 * with wink's exact arithmetic: the same term numbering, document lengths, IDF and the BM25F
 * weight of every (document, term) pair rounded to 6 decimals as wink's `consolidate(6)` does. A
 * test builds the same library with wink and compares every weight. Weights are kept as integers
 * in millionths (`Int32Array`): lossless, because wink rounds them to 6 decimals, and 4 bytes each.
 * wink itself still reads indexes saved by earlier versions (its JSON export, `postingsFromWinkJson`).
 * @module
 */
import { createRequire } from 'node:module'
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { IdList } from '../../library/id-table.ts'
import type { Tool } from '../../library/tool.ts'
import type { ToolSequence } from '../../library/tool-library.ts'
import {
  ENUM_VALUE_WEIGHT,
  enumValueText,
  toolToBm25Document,
  type Bm25Field,
} from './bm25-document.ts'
import { tokenize } from './tokenize.ts'
import { createTimeSlicer, runSteps, runStepsSliced, type Steps } from '../../time-slicer.ts'

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

/** Weights are stored as integers in these units: wink rounds every weight to 6 decimals. */
export const WEIGHT_SCALE = 1e6

export interface Bm25Postings {
  /** Documents (tools), positions 0…documents-1 in library order. */
  documents: number
  /** Term → term id (wink's numbering: order of first occurrence). */
  termIndex: Map<string, number>
  /** Term t's postings are positions offsets[t] … offsets[t+1]-1 of `docs` and `weights`. */
  offsets: Uint32Array
  /** Document positions, ascending within each term. */
  docs: Int32Array
  /** BM25 weight of (term, document) in millionths (`WEIGHT_SCALE`). */
  weights: Int32Array
  /** Per term: its largest and smallest weight (the upper bounds of query-time pruning). */
  maxWeights: Int32Array
  minWeights: Int32Array
  /** Per document: its length (tokens × field weight), as wink counts it. */
  docLengths: Float64Array
  totalCorpusLength: number
}

/** wink refuses to consolidate fewer than 3 documents and counts empty padding documents. */
const MIN_DOCUMENTS = 3
const PADDING_PREFIX = '\u0000pad'

/** The field of the expansion index's documents. */
const EXPANSION_FIELD = 'examples'

/** The tool fields and their weights, in the order wink walks them (the config's). */
function toolFields(settings: Bm25Settings): Array<[string, number]> {
  const { examples: _expansion, ...fieldWeights } = settings.fieldWeights
  return Object.entries(fieldWeights)
}

/**
 * (document, term) pairs per block of a builder's pair storage (64k: 768 KB a block). The pairs
 * are kept in blocks that are added, not in one array that doubles: at 90k tools a doubling
 * copied 1M pairs (12 MB) into fresh memory in one piece, 41-47 ms of main-thread CPU on this
 * machine (its first touch of new pages is the cost: bench/README round 16).
 */
const PAIR_BLOCK_BITS = 16
const PAIR_BLOCK = 1 << PAIR_BLOCK_BITS
const PAIR_MASK = PAIR_BLOCK - 1

/**
 * Accumulates documents one at a time (document-major, a few typed arrays that grow and blocks
 * of pairs), then turns them into term-major postings. Memory: about 12 bytes per (document,
 * term) pair while building, 8 in the result; no object per document or posting.
 */
export class PostingsBuilder {
  readonly #fields: Array<[string, number]>
  readonly #k1: number
  readonly #b: number
  readonly #termIndex = new Map<string, number>()
  #documentFrequency = new Int32Array(1024)
  /** Per term: the last document that had it, and where its frequency is in this document. */
  #lastDocument = new Int32Array(1024).fill(-1)
  #slot = new Int32Array(1024)
  /** Pair p's term and frequency: block p >>> PAIR_BLOCK_BITS, entry p & PAIR_MASK. */
  #pairTerms: Int32Array[] = [new Int32Array(PAIR_BLOCK)]
  #pairFrequencies: Float64Array[] = [new Float64Array(PAIR_BLOCK)]
  #pairs = 0
  #documentStarts: number[] = [0]
  #docLengths = new Float64Array(1024)
  #documents = 0
  #totalCorpusLength = 0

  constructor(fields: Array<[string, number]>, k1: number, b: number) {
    this.#fields = fields
    this.#k1 = k1
    this.#b = b
  }

  /**
   * Adds one document: its text per field, in the order of the builder's fields, and optionally
   * an unmeasured text: its terms count with `weight` like a field's, but not in the document's
   * length (a tool's enum values, see `enumValueText`). Without one the arithmetic is wink's.
   */
  add(texts: readonly string[], unmeasured?: { text: string; weight: number }): void {
    const document = this.#documents
    let length = 0
    const fieldCount = this.#fields.length
    const extra = unmeasured && unmeasured.text !== '' ? unmeasured : undefined
    for (let field = 0; field < fieldCount + (extra ? 1 : 0); field += 1) {
      const measured = field < fieldCount
      const weight = measured ? this.#fields[field][1] : extra!.weight
      const terms = tokenize(measured ? (texts[field] ?? '') : extra!.text)
      for (const term of terms) {
        let id = this.#termIndex.get(term)
        if (id === undefined) {
          id = this.#termIndex.size
          this.#termIndex.set(term, id)
          this.#growTerms(id + 1)
        }
        if (this.#lastDocument[id] === document) {
          const pair = this.#slot[id]
          this.#pairFrequencies[pair >>> PAIR_BLOCK_BITS][pair & PAIR_MASK] += weight
        } else {
          const pair = this.#pairs
          const block = pair >>> PAIR_BLOCK_BITS
          if (block === this.#pairTerms.length) {
            this.#pairTerms.push(new Int32Array(PAIR_BLOCK))
            this.#pairFrequencies.push(new Float64Array(PAIR_BLOCK))
          }
          this.#lastDocument[id] = document
          this.#slot[id] = pair
          this.#pairTerms[block][pair & PAIR_MASK] = id
          this.#pairFrequencies[block][pair & PAIR_MASK] = weight
          this.#pairs = pair + 1
          this.#documentFrequency[id] += 1
        }
      }
      if (!measured) continue
      const fieldLength = terms.length * Math.abs(weight)
      length += fieldLength
      this.#totalCorpusLength += fieldLength
    }
    if (document >= this.#docLengths.length) this.#docLengths = grow(this.#docLengths, document + 1)
    this.#docLengths[document] = length
    this.#documents += 1
    this.#documentStarts.push(this.#pairs)
  }

  /** The postings; wink's `consolidate(6)` arithmetic, operation for operation. */
  finish(): Bm25Postings {
    return runSteps(this.finishSteps())
  }

  /**
   * `finish`, one document per step: a sliced build yields between them (at 90k tools the
   * weights of every (tool, term) pair are ~0.1-0.2 s of work).
   */
  *finishSteps(): Steps<Bm25Postings> {
    const terms = this.#termIndex.size
    const documents = this.#documents
    if (this.#pairs > 0xffffffff) {
      throw new ToolselError(
        'INVALID_INPUT',
        `The library has ${this.#pairs} (tool, term) pairs; a BM25 index holds at most 4,294,967,295. Split it into several libraries.`,
      )
    }
    // Libraries under wink's 3-document minimum count empty padding documents, as wink did.
    const totalDocs = Math.max(documents, MIN_DOCUMENTS)
    const k1 = this.#k1
    const b = this.#b
    const idf = new Float64Array(terms)
    const offsets = new Uint32Array(terms + 1)
    for (let term = 0; term < terms; term += 1) {
      const n = this.#documentFrequency[term]
      idf[term] = Math.log((totalDocs - n + 0.5) / (n + 0.5) + 1)
      offsets[term + 1] = offsets[term] + n
    }
    const avgCorpusLength = this.#totalCorpusLength / totalDocs
    const docs = new Int32Array(this.#pairs)
    const weights = new Int32Array(this.#pairs)
    const next = offsets.slice(0, terms)
    for (let document = 0; document < documents; document += 1) {
      const normalizationFactor = 1 - b + b * (this.#docLengths[document] / avgCorpusLength)
      for (
        let pair = this.#documentStarts[document];
        pair < this.#documentStarts[document + 1];
        pair++
      ) {
        const term = this.#pairTerms[pair >>> PAIR_BLOCK_BITS][pair & PAIR_MASK]
        const freq = this.#pairFrequencies[pair >>> PAIR_BLOCK_BITS][pair & PAIR_MASK]
        const value = Math.abs((freq * (k1 + 1)) / (k1 * normalizationFactor + freq)) * idf[term]
        const weight = Math.sign(freq) * toMillionths(value)
        if (!(Math.abs(weight) <= 0x7fffffff)) {
          throw new ToolselError(
            'INVALID_INPUT',
            `A BM25 weight of ${weight / WEIGHT_SCALE} does not fit the index (at most 2147): lower retrieve.bm25.k1 (${k1}) or the field weights.`,
          )
        }
        const at = next[term]++
        docs[at] = document
        weights[at] = weight
      }
      yield
    }
    return yield* withBoundsSteps({
      documents,
      termIndex: this.#termIndex,
      offsets,
      docs,
      weights,
      docLengths: this.#docLengths.slice(0, documents),
      totalCorpusLength: this.#totalCorpusLength,
    })
  }

  #growTerms(size: number): void {
    if (size <= this.#documentFrequency.length) return
    this.#documentFrequency = grow(this.#documentFrequency, size)
    const lastDocument = grow(this.#lastDocument, size)
    lastDocument.fill(-1, this.#lastDocument.length)
    this.#lastDocument = lastDocument
    this.#slot = grow(this.#slot, size)
  }
}

/**
 * `Number(value.toFixed(6)) × 1e6` as an exact integer (wink stores `toFixed(6)`), without
 * formatting a string except when the value is within float noise of a rounding boundary.
 */
function toMillionths(value: number): number {
  const scaled = value * WEIGHT_SCALE
  const fraction = scaled - Math.floor(scaled)
  if (Math.abs(fraction - 0.5) > 1e-6) return Math.round(scaled)
  return Math.round(Number(value.toFixed(6)) * WEIGHT_SCALE)
}

function grow<T extends Int32Array | Float64Array>(array: T, size: number): T {
  const grown = new (array.constructor as new (length: number) => T)(
    Math.max(size, array.length * 2),
  )
  grown.set(array)
  return grown
}

/** Adds the per-term weight bounds. */
export function withBounds(
  postings: Omit<Bm25Postings, 'maxWeights' | 'minWeights'>,
): Bm25Postings {
  return runSteps(withBoundsSteps(postings))
}

/** `withBounds` as steps: a yield every few terms (each term reads all its postings). */
export function* withBoundsSteps(
  postings: Omit<Bm25Postings, 'maxWeights' | 'minWeights'>,
): Steps<Bm25Postings> {
  const terms = postings.offsets.length - 1
  const maxWeights = new Int32Array(terms)
  const minWeights = new Int32Array(terms)
  const { offsets, weights } = postings
  for (let term = 0; term < terms; term += 1) {
    let max = -0x80000000
    let min = 0x7fffffff
    for (let at = offsets[term]; at < offsets[term + 1]; at += 1) {
      const weight = weights[at]
      if (weight > max) max = weight
      if (weight < min) min = weight
    }
    maxWeights[term] = max
    minWeights[term] = min
    if (term % 16 === 15) yield
  }
  return { ...postings, maxWeights, minWeights }
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

/**
 * `buildPostings` that yields to the event loop every few milliseconds (`createTimeSlicer`), so
 * that the server keeps answering (health checks, other requests, the build's own deadline)
 * while a large library is tokenized.
 */
export async function buildPostingsAsync(
  tools: ToolSequence,
  settings: Bm25Settings,
  options: BuildPostingsOptions = {},
): Promise<Bm25Postings> {
  const steps = buildSteps(tools, settings, options)
  const slicer = createTimeSlicer(options.signal)
  let step = steps.next()
  while (!step.done) {
    await slicer.next()
    step = steps.next()
  }
  return step.value
}

/** The build, one tool per step. */
function* buildSteps(
  tools: ToolSequence,
  settings: Bm25Settings,
  options: BuildPostingsOptions,
): Generator<void, Bm25Postings> {
  const fields = toolFields(settings)
  const builder = new PostingsBuilder(fields, settings.k1, settings.b)
  const enumWeight = ENUM_VALUE_WEIGHT * settings.fieldWeights.parameters
  for (let position = 0; position < tools.length; position += 1) {
    if (position % 1000 === 0) {
      throwIfAborted(options.signal)
      options.onProgress?.(position, tools.length)
    }
    const tool = tools.at(position)!
    const document = toolToBm25Document(tool)
    builder.add(
      fields.map(([field]) => document[field as Bm25Field] ?? ''),
      { text: enumValueText(tool.parameters), weight: enumWeight },
    )
    yield
  }
  const postings = yield* builder.finishSteps()
  options.onProgress?.(tools.length, tools.length)
  return postings
}

/**
 * The expansion index: one document per tool (same order as `tools`) whose one field is the
 * tool's expansion text (usage examples' instructions; empty for a tool without). Kept apart
 * from the tool fields so that example words do not change the tool fields' IDF: in a small
 * library every tool's examples share the common words, and a joint index would make those
 * words worthless in names and descriptions too.
 */
export function buildExpansionPostings(
  ids: IdList,
  expansions: ReadonlyMap<string, string>,
  settings: Bm25Settings,
): Bm25Postings {
  return runSteps(expansionSteps(ids, expansions, settings))
}

/**
 * `buildExpansionPostings`, yielding to the event loop every few milliseconds (a library with
 * thousands of usage examples tokenizes them all); the same postings.
 */
export function buildExpansionPostingsAsync(
  ids: IdList,
  expansions: ReadonlyMap<string, string>,
  settings: Bm25Settings,
  signal?: AbortSignal,
): Promise<Bm25Postings> {
  return runStepsSliced(expansionSteps(ids, expansions, settings), signal)
}

function* expansionSteps(
  ids: IdList,
  expansions: ReadonlyMap<string, string>,
  settings: Bm25Settings,
): Steps<Bm25Postings> {
  const builder = new PostingsBuilder([[EXPANSION_FIELD, 1]], settings.k1, settings.b)
  for (let position = 0; position < ids.length; position += 1) {
    builder.add([expansions.get(ids.at(position)!) ?? ''])
    yield
  }
  return yield* builder.finishSteps()
}

/** A wink engine configured as the builder is: the reference the tests compare against. */
export function createBm25Engine(settings: Bm25Settings): WinkBm25Engine {
  return createWinkEngine$(Object.fromEntries(toolFields(settings)), settings)
}

function createExpansionEngine(settings: Bm25Settings): WinkBm25Engine {
  return createWinkEngine$({ [EXPANSION_FIELD]: 1 }, settings)
}

function createWinkEngine$(
  fieldWeights: Record<string, number>,
  settings: Bm25Settings,
): WinkBm25Engine {
  const engine = createWinkEngine()
  engine.defineConfig({
    fldWeights: fieldWeights,
    bm25Params: { k1: settings.k1, b: settings.b, k: 1 },
  })
  engine.definePrepTasks([tokenize as (input: never) => unknown])
  return engine
}

/** Postings read from an index saved by an earlier version: wink's JSON export, and its ids. */
export interface WinkJsonPostings {
  postings: Bm25Postings
  /** Tool ids by document position (wink's document order). */
  ids: string[]
}

/** Reads wink's JSON export (an index file of an earlier version) into postings. */
export function postingsFromWinkJson(json: string, settings: Bm25Settings): WinkJsonPostings {
  return postingsFromEngineJson(createBm25Engine(settings), json)
}

/** Reads an expansion index file of an earlier version (wink's export) into postings. */
export function expansionPostingsFromWinkJson(
  json: string,
  settings: Bm25Settings,
): WinkJsonPostings {
  return postingsFromEngineJson(createExpansionEngine(settings), json)
}

function postingsFromEngineJson(engine: WinkBm25Engine, json: string): WinkJsonPostings {
  try {
    engine.importJSON(json)
  } catch (error) {
    throw new ToolselError('INDEX_CORRUPT', 'The BM25 index file could not be read.', {
      cause: error,
    })
  }
  return postingsFromEngine(engine)
}

/** A consolidated wink engine's weights as postings (old index files; the tests' reference). */
export function postingsFromEngine(engine: WinkBm25Engine): WinkJsonPostings {
  const docs = engine.getDocs()
  const ids = Object.keys(docs).filter((id) => !id.startsWith(PADDING_PREFIX))
  const termIndex = new Map(Object.entries(engine.getTokens()))
  const counts = new Uint32Array(termIndex.size + 1)
  for (const id of ids) for (const term of Object.keys(docs[id].freq)) counts[Number(term) + 1]++
  for (let term = 0; term < termIndex.size; term += 1) counts[term + 1] += counts[term]
  const offsets = counts.slice()
  const next = counts.slice(0, termIndex.size)
  const postingDocs = new Int32Array(offsets[termIndex.size])
  const weights = new Int32Array(offsets[termIndex.size])
  let totalCorpusLength = 0
  for (const [position, id] of ids.entries()) {
    totalCorpusLength += docs[id].length
    for (const [term, weight] of Object.entries(docs[id].freq)) {
      const at = next[Number(term)]++
      postingDocs[at] = position
      weights[at] = Math.round(Number(weight) * WEIGHT_SCALE)
    }
  }
  const postings = withBounds({
    documents: ids.length,
    termIndex,
    offsets,
    docs: postingDocs,
    weights,
    docLengths: Float64Array.from(ids, (id) => docs[id].length),
    totalCorpusLength,
  })
  return { postings, ids }
}
