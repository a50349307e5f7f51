/**
 * The body of a `POST /v1/select-tools` answer, as the same bytes as `JSON.stringify` of the
 * route's response object (`{...result, tools}` with each tool's `id, name, description,
 * [parameters,] namespace`), made without serialising what repeats from request to request:
 *
 * - each tool's JSON (with and without its schema) is kept per tool object (a library's tool
 *   objects are shared by the requests that use them and never change);
 * - each step candidate's `{"id":…,"name":…,"score":` is kept by its library position (by id
 *   when it has none; checked against id and name, so another library's tool at that place or a
 *   tool renamed in another version gets its own), at most
 *   `CANDIDATE_JSON_KEPT` of them (`CandidatePrefixes`: a full cache takes one candidate missed
 *   in 8, in the place of the one kept longest);
 * - a score's text is written from its millionths (`numberJson`) instead of by the general
 *   double-to-text conversion, which was about a third of the serialising;
 * - the rest (each step's text and choice, timings, components, usage, examples) goes through
 *   `JSON.stringify` as before. The pipeline's result has `tools` and `steps` first, as written
 *   here (the test compares the whole text).
 *
 * An answer holds at most MAX_ANSWER_TOOL_BYTES of tools with their schemas (`schemasPastBudget`,
 * judged from each tool's saved size before anything is written; the first tool always whole):
 * a tool past it is written without its schema (toolsel's shape) or left out (a provider's), and
 * `warnings`, last, names it. The per-tool caches stay right: a tool's JSON is kept with and
 * without its schema apart, and which one an answer takes is decided per answer.
 *
 * A request's 50-odd candidates (3.5 steps × 15) are most of its bytes. In process this takes
 * 0.56-0.84 of `JSON.stringify`'s time over the benchmark's answers, 5-10 µs per request
 * (bench/README, request path, round 15).
 * @module
 */
import {
  CANDIDATE_POSITION,
  type StepCandidate,
  type StepResult,
  type SelectToolsResult,
} from '../pipeline.ts'
import type { Tool } from '../library/tool.ts'
import { toolHints } from '../library/tool-hints.ts'
import { KeepRing } from '../keep-ring.ts'
import {
  schemasLeftOutWarning,
  schemasPastBudget,
  toolsWithinBudget,
} from '../library/tool-library.ts'
import {
  providerTool,
  providerToolIds,
  providerToolsAnswer,
  type ProviderToolFormat,
  type ToolFormat,
} from '../library/provider-tools.ts'

/** A character past Latin-1: a string holding one can only be stored two bytes a character. */
const PAST_LATIN1 = /[^\u0000-\u00ff]/

/**
 * `text` stored one byte a character when its characters allow it (the same characters).
 *
 * V8 keeps a string one byte a character (Latin-1) or two (UTF-16), by how it was made, not by
 * what it holds: a key first met in a `JSON.parse` of two-byte text (a tools line with one
 * character past Latin-1) is kept two-byte for the whole process, and `JSON.stringify` of any
 * object with that key, and every string made by joining that text to others, is two-byte too.
 * One such piece made every answer of the 10k benchmark library two-byte (the tail's
 * `"components"` key, learned from a tool's schema): the server flattens the answer to count its
 * UTF-8 bytes and again to write them, twice as many bytes each time and the slow UTF-8 path
 * (bench/README.md, "Round 55 … (perf18)"). Applied where a piece is made once and kept (each
 * tool's JSON, a candidate's prefix) and to the answer's short tail; a one-byte string is
 * copied too (JavaScript can't tell how a string is stored), a few hundred nanoseconds.
 */
export function oneByteWhereItCan(text: string): string {
  return PAST_LATIN1.test(text) ? text : Buffer.from(text, 'latin1').toString('latin1')
}

/**
 * Candidate prefixes kept at most (about 150 bytes each with the map's entry: some 5 MB; the two
 * generations of 16,384 before round 44 kept as many at most).
 */
export const CANDIDATE_JSON_KEPT = 32_768

/**
 * The keys this module writes for a step, in the pipeline's order. The check below makes a new
 * field of `StepResult` or `StepCandidate` a type error here rather than a field the answer
 * silently drops.
 */
const STEP_KEYS = ['text', 'candidates', 'selected', 'whole'] as const
const CANDIDATE_KEYS = ['id', 'name', 'score', 'features', CANDIDATE_POSITION] as const
type Exhaustive<T, K extends readonly PropertyKey[]> =
  Exclude<keyof T, K[number]> extends never ? true : never
const checked: [
  Exhaustive<StepResult, typeof STEP_KEYS>,
  Exhaustive<StepCandidate, typeof CANDIDATE_KEYS>,
] = [true, true]
void checked

/**
 * A tool as the answer shows it: its public fields, the parameters' schema only when asked, and
 * with it an MCP tool's behaviour hints (`toolHints`: four booleans, as get_tool_schemas and
 * select_tools give them over MCP).
 */
function publicTool(tool: Tool, includeSchemas: boolean) {
  const { id, name, description, parameters, namespace } = tool
  return includeSchemas
    ? { id, name, description, parameters, namespace, annotations: toolHints(tool) }
    : { id, name, description, namespace }
}

/**
 * The tools whose schemas the answer leaves out (`schemasPastBudget`: past MAX_ANSWER_TOOL_BYTES
 * of schemas, the first tool always whole): in toolsel's shape they come without `parameters`,
 * in a provider's (which needs the schema) not at all; `warnings` names them.
 */
function schemasLeftOut(result: SelectToolsResult, includeSchemas: boolean, format: ToolFormat) {
  const left = includeSchemas || format !== 'toolsel' ? schemasPastBudget(result.tools) : []
  if (left.length === 0) return undefined
  const library = result.components.library
  const fetch = `fetch each one with GET /v1/libraries/${library}/tools/<id> (or POST /v1/libraries/${library}/tools/batch, within the same limit)`
  return {
    left,
    // In a provider's shape a tool without its schema is left out (its tool format needs one).
    answered: format === 'toolsel' ? result.tools : toolsWithinBudget(result.tools, left),
    warnings: [schemasLeftOutWarning(left, fetch)],
  }
}

/**
 * The answer as an object: `JSON.stringify` of it is the text `selectResponseJson` writes (what
 * the route answered with `c.json` before; the test and bench/select-response-ab.ts compare).
 */
export function selectResponseObject(
  result: SelectToolsResult,
  includeSchemas: boolean,
  format: ToolFormat = 'toolsel',
) {
  const leftOut = schemasLeftOut(result, includeSchemas, format)
  const warnings = leftOut && { warnings: leftOut.warnings }
  if (format !== 'toolsel') {
    const { tools, ...rest } = result
    return { ...providerToolsAnswer(leftOut?.answered ?? tools, format), ...rest, ...warnings }
  }
  return {
    ...result,
    tools: result.tools.map((tool) =>
      publicTool(tool, includeSchemas && !leftOut?.left.includes(tool)),
    ),
    ...warnings,
  }
}

const withSchemas = new WeakMap<Tool, string>()
const withoutSchemas = new WeakMap<Tool, string>()

function toolJson(tool: Tool, includeSchemas: boolean): string {
  const cache = includeSchemas ? withSchemas : withoutSchemas
  let json = cache.get(tool)
  if (json === undefined) {
    json = oneByteWhereItCan(JSON.stringify(publicTool(tool, includeSchemas)))
    cache.set(tool, json)
  }
  return json
}

const providerJson: Record<ProviderToolFormat, WeakMap<Tool, string>> = {
  openai: new WeakMap(),
  'openai-responses': new WeakMap(),
  anthropic: new WeakMap(),
}

/** `tool` in a provider's shape as JSON, kept per tool object like `toolJson`. */
function providerToolJson(tool: Tool, format: ProviderToolFormat): string {
  const cache = providerJson[format]
  let json = cache.get(tool)
  if (json === undefined) {
    json = oneByteWhereItCan(JSON.stringify(providerTool(tool, format)))
    cache.set(tool, json)
  }
  return json
}

interface CandidatePrefix {
  readonly id: string
  readonly name: string
  /** `{"id":…,"name":…,"score":` */
  readonly json: string
  /** `"…"`: the id alone, as a step's `selected` writes it. */
  readonly idJson: string
}

/** Positions per page of the positional store (pages are made when a position in them is used). */
const PAGE_BITS = 12
const PAGE_SIZE = 1 << PAGE_BITS
/** Positions past this (a retriever's hint: libraries hold at most 100,000,000 tools) go by id. */
const MAX_POSITION = 2 ** 27

/**
 * Each step candidate's `{"id":…,"name":…,"score":`, checked against its id and name. A candidate
 * with a library position (`StepCandidate[CANDIDATE_POSITION]`) is found by it, in paged arrays as
 * src/library/tool-memo.ts keeps its entries: two array reads and two comparisons, where a `Map`
 * by id (whose buckets, entries and key strings lie scattered over a large heap) cost about 10 µs
 * a request at 10k tools, nearly all of it cache misses (bench/README.md, "Round 56 … (perf21)").
 * A candidate without one (a retriever that gives none) is found by id in a map. A hit writes
 * nothing. Which misses are kept: src/keep-ring.ts, one ring over both (every one until
 * `capacity`, then one in KEEP_ONE_MISS_IN in the place of the one kept longest; the others are
 * answered with a prefix made for that answer only, which dies young).
 *
 * Positions are not per library: another library's tool at the same position (another id or
 * name) takes the place's entry, as a renamed tool takes its id's.
 *
 * Until round 44 it was two generations of 16,384 (a full one became the previous one; a hit
 * there moved the entry back): with more distinct candidates between two requests for one of
 * them than a generation holds (13,646 per pass of the benchmark instructions at 100k tools, more
 * with a larger library or more varied requests), nearly every lookup added an entry that lived
 * through scavenges and died in the old generation (bench/README.md, "Round 44").
 */
export class CandidatePrefixes {
  readonly #pages: Array<Array<CandidatePrefix | undefined> | undefined> = []
  readonly #byId = new Map<string, CandidatePrefix>()
  readonly #kept: KeepRing<number | string>
  /** Prefixes made (lookups missed), for tests. */
  made = 0

  constructor(capacity = CANDIDATE_JSON_KEPT) {
    const pages = this.#pages
    const byId = this.#byId
    this.#kept = new KeepRing<number | string>(capacity, (key) => {
      if (typeof key === 'number') pages[key >>> PAGE_BITS]![key & (PAGE_SIZE - 1)] = undefined
      else byId.delete(key)
    })
  }

  get capacity(): number {
    return this.#kept.capacity
  }

  /** Candidates kept. */
  get size(): number {
    return this.#kept.size
  }

  /** `{"id":…,"name":…,"score":` of a candidate (`position`: its library position, if known). */
  prefix(id: string, name: string, position?: number): string {
    return this.entry(id, name, position).json
  }

  /** The candidate's kept entry, or one made for this answer when it is not kept. */
  entry(id: string, name: string, position?: number): CandidatePrefix {
    const placed =
      position !== undefined && position >= 0 && position < MAX_POSITION && position % 1 === 0
    let entry = placed
      ? this.#pages[position >>> PAGE_BITS]?.[position & (PAGE_SIZE - 1)]
      : this.#byId.get(id)
    if (entry !== undefined && entry.id === id && entry.name === name) return entry
    this.made += 1
    const whole = JSON.stringify({ id, name, score: 0 })
    const json = oneByteWhereItCan(whole.slice(0, whole.length - 2))
    const taken = entry !== undefined
    entry = { id, name, json, idJson: oneByteWhereItCan(JSON.stringify(id)) }
    // Another tool's place (another library, or a tool renamed) is taken in its place.
    if (placed) {
      if (taken || this.#kept.admit(position)) {
        const slots = (this.#pages[position >>> PAGE_BITS] ??= new Array(PAGE_SIZE))
        slots[position & (PAGE_SIZE - 1)] = entry
      }
    } else if (taken || this.#kept.admit(id)) this.#byId.set(id, entry)
    return entry
  }
}

/**
 * `JSON.stringify(id)`, stored one byte a character where it can be: a step's `selected`. The
 * selected tool is nearly always one of the step's candidates, whose entry the answer has just
 * read, so this is that entry's where each step made the text and copied it
 * (`oneByteWhereItCan`) before round 56 (bench/README.md, "Round 56 … (perf20)").
 */
function selectedJson(selected: string, entry: CandidatePrefix | undefined): string {
  return entry !== undefined && entry.id === selected
    ? entry.idJson
    : oneByteWhereItCan(JSON.stringify(selected))
}

const candidatePrefixes = new CandidatePrefixes()

/**
 * `JSON.stringify` of a number. Scores are rounded to millionths (`score: 8.888515`), and the
 * shortest decimal of such a double is its millionths with trailing zeros dropped, which integer
 * arithmetic writes at a fraction of the cost of the general double-to-text conversion (a third
 * of the serialising before). Other numbers take `String` (non-finite ones are `null`).
 */
export function numberJson(value: number): string {
  const millionths = Math.round(value * 1e6)
  // `millionths / 1e6` is the double nearest to that decimal; when it is `value`, the decimal
  // (at most 15 significant digits: no other such decimal maps to the same double) is the
  // shortest text that reads back as `value`, i.e. what `String(value)` writes.
  if (millionths / 1e6 === value && millionths !== 0 && Math.abs(millionths) < 1e15) {
    const magnitude = Math.abs(millionths)
    const whole = Math.floor(magnitude / 1e6)
    let fraction = magnitude - whole * 1e6
    let text = `${millionths < 0 ? '-' : ''}${whole}`
    if (fraction === 0) return text
    let digits = 6
    while (fraction % 10 === 0) {
      fraction /= 10
      digits -= 1
    }
    const written = `${fraction}`
    text += '.'
    for (let pad = written.length; pad < digits; pad++) text += '0'
    return text + written
  }
  return Number.isFinite(value) ? String(value) : 'null'
}

function stepJson(step: StepResult): string {
  const { text, candidates, selected, whole } = step
  let json = `{"text":${JSON.stringify(text)},"candidates":[`
  let chosen: CandidatePrefix | undefined
  for (let index = 0; index < candidates.length; index++) {
    if (index > 0) json += ','
    const candidate = candidates[index]
    const { id, name, score, features } = candidate
    if (typeof id !== 'string' || typeof name !== 'string' || typeof score !== 'number') {
      json += JSON.stringify(candidate)
      continue
    }
    const entry = candidatePrefixes.entry(id, name, candidate[CANDIDATE_POSITION])
    if (id === selected) chosen = entry
    const head = entry.json + numberJson(score)
    json += features === undefined ? `${head}}` : `${head},"features":${JSON.stringify(features)}}`
  }
  // A tool's id, one byte a character where it can be (see oneByteWhereItCan).
  json += `],"selected":${typeof selected === 'string' ? selectedJson(selected, chosen) : JSON.stringify(selected)}`
  if (whole !== undefined) json += `,"whole":${JSON.stringify(whole)}`
  return `${json}}`
}

/**
 * The response body for `result`: the same text as `JSON.stringify(selectResponseObject(…))`
 * (test/server/select-response.test.ts compares the two over the benchmark's instructions, with
 * and without schemas and explain, in every tool format). A provider `format` writes the tools
 * in its shape and adds `toolIds` after them.
 */
export function selectResponseJson(
  result: SelectToolsResult,
  includeSchemas: boolean,
  format: ToolFormat = 'toolsel',
): string {
  const { tools: selected, steps, ...rest } = result
  const leftOut = schemasLeftOut(result, includeSchemas, format)
  const tools = leftOut?.answered ?? selected
  let json = '{"tools":['
  for (let index = 0; index < tools.length; index++) {
    if (index > 0) json += ','
    const tool = tools[index]
    json +=
      format === 'toolsel'
        ? toolJson(tool, includeSchemas && !leftOut?.left.includes(tool))
        : providerToolJson(tool, format)
  }
  json += ']'
  if (format !== 'toolsel') json += `,"toolIds":${JSON.stringify(providerToolIds(tools))}`
  json += ',"steps":['
  for (let index = 0; index < steps.length; index++) {
    if (index > 0) json += ','
    json += stepJson(steps[index])
  }
  json += ']'
  const tail = JSON.stringify(leftOut ? { ...rest, warnings: leftOut.warnings } : rest)
  return tail === '{}' ? `${json}}` : `${json},${oneByteWhereItCan(tail.slice(1))}`
}
