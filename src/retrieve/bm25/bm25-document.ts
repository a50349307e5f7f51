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

export function toolToBm25Document(tool: Tool): Record<Bm25Field, string> {
  return {
    name: tool.name,
    description: descriptionWithoutCrossReferences(tool.description, tool.name),
    parameters: parameterText(tool.parameters),
    namespace: tool.namespace ?? '',
  }
}
