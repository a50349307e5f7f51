/**
 * How a tool becomes a BM25 document: one text per weighted field.
 * @module
 */
import { localTarget } from '../../library/schema/local-ref.ts'
import type { JsonSchema, Tool } from '../../library/tool.ts'

export const BM25_FIELDS = ['name', 'description', 'parameters', 'namespace'] as const
export type Bm25Field = (typeof BM25_FIELDS)[number]

/**
 * Most parameters (properties, nested ones included) of one tool whose text a document takes:
 * `parameterText` and `enumValueText` stop after this many, in schema order. Real tools stay far
 * under it: the most in the four levels read here among 1,063 real OpenAPI specs (APIs.guru's
 * directory, every file over 50 KB) is 775 (adyen CheckoutService `post-payments`; bench/README
 * round 22). Without it one uploaded tool of 20,000 parameters was tokenized in one piece, 150-200
 * ms of the event loop, and the learned selector read them all again for each request it ranked.
 */
export const MAX_INDEXED_PARAMETERS = 2048

/**
 * Most characters of one field of one tool's document (name, description, parameters, enum
 * values); the rest is not indexed. Real tools stay far under it: the longest parameter text in
 * the same survey is 190,918 characters (googleapis tagmanager), the longest description 23,532
 * (atlassian jira `createWorkflow`). A 30 MB description took 1.3 s to tokenize in one piece.
 */
export const MAX_FIELD_CHARS = 500_000

/** What a walk of one tool's parameters (`walkParameters`) does at each parameter. */
interface ParameterVisit {
  /** Each parameter, with its name. */
  parameter?: (name: string, value: unknown) => void
  /** Each schema a parameter holds, before the walk goes into it: itself, then its array items. */
  schema?: (schema: JsonSchema) => void
}

/** Most `$ref` hops followed from one schema (a chain of references to references). */
const MAX_REF_HOPS = 8

/**
 * How many times one reference is read inside itself along a path: what the inline form of an
 * OpenAPI import keeps of a recursive schema (openapi-importer.ts `RECURSION_DEPTH`).
 */
const MAX_SAME_REF = 2

/** The references read along the path to a schema, each with how many times. */
type Followed = ReadonlyMap<string, number>

/**
 * `schema` read as if its local `$ref` were copied in: the target's keywords under the
 * schema's own (a `description` next to the `$ref` wins), a chain followed up to MAX_REF_HOPS,
 * one reference at most MAX_SAME_REF times along the path. Without one, or past that, as it is.
 */
function followRef(
  schema: JsonSchema,
  root: JsonSchema,
  followed: Followed,
): [JsonSchema, Followed] {
  let current = schema
  let path = followed
  for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
    const ref = current.$ref
    if (typeof ref !== 'string') break
    const times = path.get(ref) ?? 0
    const target = times < MAX_SAME_REF ? localTarget(root, ref) : undefined
    if (!isSchema(target)) break
    const { $ref: _ref, ...rest } = current
    current = { ...target, ...rest }
    path = new Map(path).set(ref, times + 1)
  }
  return [current, path]
}

/**
 * Walks the first MAX_INDEXED_PARAMETERS parameters of `schema` in schema order, depth first,
 * nested objects and array items included, four levels deep. A parameter or items schema that is
 * a local `$ref` (`#/$defs/…` of an OpenAPI import that keeps shared schemas as definitions) is
 * read as its target (`followRef`): the text is the one the spec's inline form gives.
 */
function walkParameters(
  schema: JsonSchema,
  visit: ParameterVisit,
  depth = 0,
  budget = { left: MAX_INDEXED_PARAMETERS },
  root = schema,
  followed: Followed = new Map(),
): void {
  const properties = schema.properties
  if (depth > 3 || properties === null || typeof properties !== 'object') return
  for (const name in properties) {
    if (!Object.hasOwn(properties, name)) continue
    if (budget.left <= 0) return
    budget.left -= 1
    const given = (properties as Record<string, unknown>)[name]
    if (!isSchema(given)) {
      visit.parameter?.(name, given)
      continue
    }
    const [value, path] = followRef(given, root, followed)
    visit.parameter?.(name, value)
    const parts: Array<[JsonSchema, Followed]> = [[value, path]]
    if (isSchema(value.items)) parts.push(followRef(value.items, root, path))
    for (const [part, partPath] of parts) {
      visit.schema?.(part)
      walkParameters(part, visit, depth + 1, budget, root, partPath)
    }
  }
}

function isSchema(value: unknown): value is JsonSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * The non-empty parts of one field joined by spaces, cut at MAX_FIELD_CHARS characters. Parts
 * past the cut are not kept: joining 1,000 descriptions of 30,000 characters (30 MB, within the
 * upload limits) to keep the first 500,000 took ~170 ms of the event loop (bench/README round 23).
 */
class FieldText {
  readonly #parts: string[] = []
  /** Characters of the parts kept, joined (-1: none yet). */
  #length = -1

  /** Whether the parts kept reach the cut: further ones are not read. */
  get full(): boolean {
    return this.#length >= MAX_FIELD_CHARS
  }

  add(part: string): void {
    if (part.length === 0 || this.full) return
    this.#parts.push(part)
    this.#length += part.length + 1
  }

  text(): string {
    return this.#parts.join(' ').slice(0, MAX_FIELD_CHARS)
  }
}

/**
 * Parameter names and descriptions, nested objects and array items included (depth-limited), of
 * the first MAX_INDEXED_PARAMETERS parameters, at most MAX_FIELD_CHARS characters.
 */
export function parameterText(schema: JsonSchema): string {
  const field = new FieldText()
  walkParameters(schema, {
    parameter: (name, value) => {
      if (field.full) return
      field.add(name)
      const description = (value as JsonSchema | null)?.description
      if (typeof description === 'string') field.add(description)
    },
  })
  return field.text()
}

/** An identifier such as `get_weather_forecast` or `getWeatherForecast`. */
const IDENTIFIER = /\b(?:[a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+(?:[A-Z][a-z0-9]+)+)\b/g

/**
 * Drops description sentences that point to other tools ("Use get_weather_forecast for future
 * days."). They describe the other tool, and indexing them makes a query for that tool match this
 * one: MCP servers write such hints for models, which is good for selection but bad for BM25.
 * A description is never emptied: when every sentence names some identifier (a one-sentence
 * "…given the city, review_rate and top number."), all of them stay.
 */
export function descriptionWithoutCrossReferences(description: string, ownName: string): string {
  const sentences = description.split(/(?<=[.!?])\s+/)
  const kept = sentences.filter((sentence) =>
    [...sentence.matchAll(IDENTIFIER)].every(([identifier]) => identifier === ownName),
  )
  return kept.length === 0 ? description : kept.join(' ')
}

/** Enum values indexed per parameter, at most: a longer list is a code table, not request words. */
export const MAX_INDEXED_ENUM_VALUES = 32

/**
 * An enum value's BM25 weight, as a fraction of the parameters field's: a value is an option a
 * call may pass ("fahrenheit", "express", "scorpio"), weaker evidence of what the tool does than
 * its name, description or parameter names. Half: decided on the two self-written
 * function-calling sets and the demo library (bench/README.md "Round 18"); at the parameters'
 * full weight generic values ("clean", "open", "all") pull tools into unrelated requests.
 */
export const ENUM_VALUE_WEIGHT = 0.5

/**
 * The string enum values of a tool's parameters (nested objects and array items included,
 * depth-limited), at most MAX_INDEXED_ENUM_VALUES per parameter, of its first
 * MAX_INDEXED_PARAMETERS parameters, at most MAX_FIELD_CHARS characters. A request often names
 * one ("in fahrenheit", "by FedEx", "into Japanese"), sometimes the only word it shares with the
 * tool. BM25 indexes them (`ENUM_VALUE_WEIGHT` times the parameters' weight) without counting
 * them in the tool's length (`PostingsBuilder.add`'s unmeasured text): a tool with long enum lists
 * is not diluted for the words of its name and description, and tools without enums do not gain
 * on it through a longer average length.
 */
export function enumValueText(schema: JsonSchema): string {
  const field = new FieldText()
  walkParameters(schema, {
    schema: (part) => {
      const values = part.enum
      if (Array.isArray(values) && values.length <= MAX_INDEXED_ENUM_VALUES) {
        for (const item of values) if (typeof item === 'string') field.add(item)
      }
    },
  })
  return field.text()
}

/** A tool's document: each field at most MAX_FIELD_CHARS characters. */
export function toolToBm25Document(tool: Tool): Record<Bm25Field, string> {
  const name = tool.name.slice(0, MAX_FIELD_CHARS)
  return {
    name,
    description: descriptionWithoutCrossReferences(
      tool.description.slice(0, MAX_FIELD_CHARS),
      name,
    ),
    parameters: parameterText(tool.parameters),
    namespace: (tool.namespace ?? '').slice(0, MAX_FIELD_CHARS),
  }
}
