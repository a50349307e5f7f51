/**
 * The canonical tool: what every importer produces and every other stage consumes.
 * @module
 */
import { createHash } from 'node:crypto'
import { ToolselError } from '../errors.ts'
import { shownName } from './name-characters.ts'

/** A JSON Schema object describing a tool's arguments (usually `{type:'object', properties}`). */
export type JsonSchema = Record<string, unknown>

export interface ToolSource {
  /** The importer format that produced the tool, e.g. `mcp`, `openai`, `toolbench`. */
  format: string
  /** The base name of the file it came from (`mail.json`, not its path), when imported from a file. */
  file?: string
  /** Position of the record in that file (0-based), for error messages and provenance. */
  record?: number
  /** Anything else the format carries that is worth keeping (category, api_call, url…). */
  [key: string]: unknown
}

export interface Tool {
  /** Stable, unique id within a library, e.g. `weather.get_forecast` or `The Cocktail DB::List of Cocktails`. */
  id: string
  /** The name an agent calls the tool by (not necessarily unique across namespaces). */
  name: string
  /** What the tool does, in natural language. May be empty. */
  description: string
  /** JSON Schema of the arguments. `{type:'object', properties:{}}` when the tool takes none. */
  parameters: JsonSchema
  /** The server or provider the tool belongs to (MCP server name, ToolBench tool name…). */
  namespace?: string
  /** Free-form labels (category, domain…) used for scoping and display. */
  tags?: string[]
  /** Where the tool came from. */
  source?: ToolSource
}

export const EMPTY_PARAMETERS: JsonSchema = Object.freeze({ type: 'object', properties: {} })

/** Deepest nesting of objects and arrays accepted in a tool's parameters (JSON handling recurses). */
export const MAX_PARAMETER_DEPTH = 64

/**
 * Most JSON values (objects, arrays, strings, numbers, booleans, nulls) an import accepts in one
 * tool's parameters, counted once an OpenAPI spec's `$ref`s are resolved. The import walks each
 * several times (schema rewrite, ajv; ~4-6 µs a value) and every answer that includes schemas
 * sends them. Most real tools stay far under it (Kubernetes 5,094, GitHub 1,248); the largest
 * among the 1,075 specs over 50 KB of APIs.guru's directory holds 70,442 (Google Chat). An
 * OpenAPI operation past it once its `$ref`s are copied inline keeps the spec's shared schemas in
 * `$defs` instead, cut by reference level where even that passes it (openapi-defs.ts;
 * bench/README rounds 21, 22 and 27).
 */
export const MAX_PARAMETER_VALUES = 100_000

/**
 * Most members (keys) an import accepts in one object of a tool's parameters, e.g. the
 * parameters of one `properties`. Every use of a tool parses its saved line, and `JSON.parse`
 * of wide objects is slow: one tool of 20,000 parameters held the event loop 40-60 ms on each
 * read (49,000: 130-270 ms), where Google Chat's tool of 70,442 values in narrow objects takes
 * 30 ms. Real tools stay far under it: the widest object among the 1,063 specs over 50 KB of
 * APIs.guru's directory that import has 582 members (gsmtasks `task_exports_list`; bench/README
 * round 22).
 */
export const MAX_PARAMETER_KEYS = 2048

/**
 * Most bytes of one tool's saved JSON line an upload imported in a worker accepts (8 MiB). Every
 * use of a tool on the event loop decodes and parses its line (the BM25 build of the upload,
 * answers with schemas, token counts): one tool of 30 MB (1,000 parameters of 30,000-character
 * descriptions, within every other limit) held the loop ~220-330 ms on each read, where Google
 * Chat's `spaces.messages.create`, the largest real tool among the 1,075 specs over 50 KB of
 * APIs.guru's directory (5,489,008 bytes), takes ~40-80 ms (bench/README round 23).
 */
export const MAX_TOOL_LINE_BYTES = 8 * 1024 * 1024

/**
 * Throws IMPORT_FAILED when `parameters` nests objects or arrays more than MAX_PARAMETER_DEPTH
 * levels deep or, given `maxValues` and `maxKeys`, holds more values than that or an object with
 * more members than that. One iterative pass, never overflows, and stops at the first value past
 * a limit.
 */
export function assertParameterShape(
  id: string,
  parameters: unknown,
  maxValues = Infinity,
  maxKeys = Infinity,
): void {
  const stack: Array<[unknown, number]> = [[parameters, 1]]
  let values = 0
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    values += 1
    if (values > maxValues) throw tooManyParameterValues(id, maxValues)
    if (current === null || typeof current !== 'object') continue
    if (depth > MAX_PARAMETER_DEPTH) {
      throw new ToolselError(
        'IMPORT_FAILED',
        `Tool ${shownName(id)}: its parameters are nested more than ${MAX_PARAMETER_DEPTH} levels deep; flatten the schema.`,
        { details: { id, maxDepth: MAX_PARAMETER_DEPTH } },
      )
    }
    const inner = Object.values(current)
    if (!Array.isArray(current) && inner.length > maxKeys) {
      throw new ToolselError(
        'IMPORT_FAILED',
        `Tool ${shownName(id)}: an object in its parameters has more than ${maxKeys.toLocaleString('en-US')} members (${inner.length.toLocaleString('en-US')}); split the tool or group its parameters.`,
        { details: { id, maxKeys } },
      )
    }
    for (const value of inner) stack.push([value, depth + 1])
  }
}

/** IMPORT_FAILED for a tool whose parameters hold more than `limit` values (`where` says when). */
export function tooManyParameterValues(id: string, limit: number, where = ''): ToolselError {
  return new ToolselError(
    'IMPORT_FAILED',
    `Tool ${shownName(id)}: its parameters hold more than ${limit.toLocaleString('en-US')} JSON values${where}; split the tool or simplify its schema.`,
    { details: { id, maxValues: limit } },
  )
}

/** Serialises a value with object keys sorted, so equal content always hashes equally. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner
    const sorted: Record<string, unknown> = {}
    for (const key of Object.keys(inner as object).sort()) {
      sorted[key] = (inner as Record<string, unknown>)[key]
    }
    return sorted
  })
}

/**
 * Hash of everything that affects retrieval and what the agent sees: id, name, description,
 * parameters, namespace and tags. Source metadata is excluded: re-importing the same tool from a
 * different file path must not invalidate indexes or embedding caches.
 */
export function toolContentHash(tool: Tool): string {
  const { id, name, description, parameters, namespace, tags } = tool
  assertParameterShape(id, parameters)
  return sha256(stableStringify({ id, name, description, parameters, namespace, tags }))
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

const oneLineCache = new Map<string, string>()
const ONE_LINE_CACHE_LIMIT = 100_000

/**
 * The first sentence (or the first 160 characters) of a description, for compact listings.
 * Memoised: the pipeline asks for it for every candidate of every step.
 */
export function oneLineDescription(description: string, maxLength = 160): string {
  if (maxLength !== 160) return computeOneLine(description, maxLength)
  let line = oneLineCache.get(description)
  if (line === undefined) {
    line = computeOneLine(description, maxLength)
    if (oneLineCache.size >= ONE_LINE_CACHE_LIMIT) oneLineCache.clear()
    oneLineCache.set(description, line)
  }
  return line
}

function computeOneLine(description: string, maxLength: number): string {
  const flat = description.replace(/\s+/g, ' ').trim()
  const sentenceEnd = flat.search(/[.!?](\s|$)/)
  const sentence = sentenceEnd >= 0 ? flat.slice(0, sentenceEnd + 1) : flat
  return sentence.length <= maxLength ? sentence : `${sentence.slice(0, maxLength - 1).trimEnd()}…`
}
