/**
 * Gorilla's `api_arguments` as JSON Schema. The field is free-form and varies by record (counted
 * over the three API databases): a dict (`{"pretrained_model_name": "facebook/bart-large"}`,
 * 749), a list (695) of names, `name: description` strings, Python snippets or
 * `{name, type, description}` objects, a string (273) such as `"text, candidate_labels"` or
 * `"URL of the model"`, or null (9). What reads as parameter names becomes properties; other text
 * is kept as the schema's description, so nothing the database says is lost. The raw value is
 * also kept in `source.apiArguments`.
 * @module
 */
import type { JsonSchema } from '../tool.ts'
import { pythonLiteral } from './python-literal.ts'
import { pythonTypeSchema } from './python-type-schema.ts'

const NO_ARGUMENTS = /^(n\/a|none|null|)$/i
const IDENTIFIER = /^[A-Za-z_]\w*$/
const NAME_AND_DESCRIPTION = /^([A-Za-z_]\w*)\s*:\s*(\S.*)$/s
const NAME_AND_VALUE = /^([A-Za-z_]\w*)\s*=\s*(\S.*)$/s

/** Converts one record's `api_arguments`; never throws (any JSON value is accepted). */
export function gorillaArgumentsSchema(value: unknown): JsonSchema {
  const properties = new Map<string, JsonSchema>()
  const notes: string[] = []
  const add = (name: string, schema: JsonSchema) => {
    if (!properties.has(name)) properties.set(name, schema)
  }

  const addText = (text: string) => {
    const trimmed = text.trim()
    if (NO_ARGUMENTS.test(trimmed)) return
    const pieces = trimmed.split(',').map((piece) => piece.trim())
    if (pieces.length > 1 && pieces.every((piece) => IDENTIFIER.test(piece))) {
      pieces.forEach((piece) => add(piece, {}))
      return
    }
    if (IDENTIFIER.test(trimmed)) return add(trimmed, {})
    const described = NAME_AND_DESCRIPTION.exec(trimmed)
    if (described) return add(described[1], { description: described[2].trim() })
    const assigned = NAME_AND_VALUE.exec(trimmed)
    const literal = assigned ? pythonLiteral(assigned[2].trim()) : undefined
    if (assigned && literal !== undefined) return add(assigned[1], withDefault({}, literal))
    notes.push(trimmed)
  }

  const addMapping = (mapping: Record<string, unknown>) => {
    for (const [name, inner] of Object.entries(mapping)) {
      if (typeof inner === 'string') add(name, { description: inner })
      else add(name, withDefault({}, inner))
    }
  }

  if (typeof value === 'string') addText(value)
  else if (Array.isArray(value)) {
    for (const element of value) {
      if (typeof element === 'string') addText(element)
      else if (isObject(element) && typeof element.name === 'string') {
        add(element.name, namedArgument(element))
      } else if (isObject(element)) addMapping(element)
      else if (element !== null) notes.push(JSON.stringify(element))
    }
  } else if (isObject(value)) addMapping(value)

  const schema: JsonSchema = { type: 'object', properties: Object.fromEntries(properties) }
  if (notes.length > 0) schema.description = notes.join('; ')
  return schema
}

/** `{name, type, description, default?}`, the one structured form in the databases. */
function namedArgument(argument: Record<string, unknown>): JsonSchema {
  const typeText = typeof argument.type === 'string' ? argument.type : undefined
  const schema: JsonSchema = { ...pythonTypeSchema(typeText) }
  if (typeof argument.description === 'string' && argument.description !== '') {
    schema.description = argument.description
  }
  return withDefault(schema, argument.default)
}

function withDefault(schema: JsonSchema, value: unknown): JsonSchema {
  if (value === undefined || value === null) return schema
  const type =
    typeof value === 'boolean' ? 'boolean' : typeof value === 'number' ? 'number' : undefined
  return { ...(type && schema.type === undefined ? { type } : {}), ...schema, default: value }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
