/**
 * How a tool becomes a BM25 document: one text per weighted field.
 * @module
 */
import type { JsonSchema, Tool } from '../../library/tool.ts'

export const BM25_FIELDS = ['name', 'description', 'parameters', 'namespace'] as const
export type Bm25Field = (typeof BM25_FIELDS)[number]

/** Parameter names and descriptions, nested objects and array items included (depth-limited). */
export function parameterText(schema: JsonSchema, depth = 0): string {
  const properties = schema.properties
  if (depth > 3 || properties === null || typeof properties !== 'object') return ''
  const parts: string[] = []
  for (const [name, value] of Object.entries(properties as Record<string, unknown>)) {
    parts.push(name)
    if (value === null || typeof value !== 'object') continue
    const property = value as JsonSchema
    if (typeof property.description === 'string') parts.push(property.description)
    parts.push(parameterText(property, depth + 1))
    const items = property.items
    if (items !== null && typeof items === 'object')
      parts.push(parameterText(items as JsonSchema, depth + 1))
  }
  return parts.filter((part) => part.length > 0).join(' ')
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
 * depth-limited), at most MAX_INDEXED_ENUM_VALUES per parameter. A request often names one ("in
 * fahrenheit", "by FedEx", "into Japanese"), sometimes the only word it shares with the tool.
 * BM25 indexes them (`ENUM_VALUE_WEIGHT` times the parameters' weight) without counting them in
 * the tool's length (`PostingsBuilder.add`'s unmeasured text): a tool with long enum lists is not
 * diluted for the words of its name and description, and tools without enums do not gain on it
 * through a longer average length.
 */
export function enumValueText(schema: JsonSchema, depth = 0): string {
  const properties = schema.properties
  if (depth > 3 || properties === null || typeof properties !== 'object') return ''
  const parts: string[] = []
  for (const value of Object.values(properties as Record<string, unknown>)) {
    if (value === null || typeof value !== 'object') continue
    const property = value as JsonSchema
    const items = property.items
    const schemas =
      items !== null && typeof items === 'object' ? [property, items as JsonSchema] : [property]
    for (const part of schemas) {
      const values = part.enum
      if (Array.isArray(values) && values.length <= MAX_INDEXED_ENUM_VALUES) {
        for (const item of values) if (typeof item === 'string') parts.push(item)
      }
      parts.push(enumValueText(part, depth + 1))
    }
  }
  return parts.filter((part) => part.length > 0).join(' ')
}

export function toolToBm25Document(tool: Tool): Record<Bm25Field, string> {
  return {
    name: tool.name,
    description: descriptionWithoutCrossReferences(tool.description, tool.name),
    parameters: parameterText(tool.parameters),
    namespace: tool.namespace ?? '',
  }
}
