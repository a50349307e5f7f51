/**
 * ToolBench API parameters (`required_parameters` / `optional_parameters`, also the
 * `required_params` / `optional_params` of the COLT corpus) as one JSON Schema object.
 * @module
 */
import { z } from 'zod'
import type { JsonSchema } from '../tool.ts'
import { addWarning, type ImportContext } from './import-context.ts'
import { nonEmptyString } from './parse-record.ts'
import { shownName } from '../name-characters.ts'

/** One entry of `required_parameters` / `optional_parameters`: `{name, type, description, default}`. */
export const ToolbenchParameterSchema = z.looseObject({
  name: nonEmptyString(),
  type: z.string().optional(),
  description: z.string().nullish(),
  default: z.unknown().optional(),
})

/** A validated ToolBench parameter. */
export type ToolbenchParameter = z.output<typeof ToolbenchParameterSchema>

/**
 * ToolBench type names (matched case-insensitively on the word before any parenthesised hint:
 * the data has `STRING`, `string`, `NUMBER`, `BOOLEAN`, `ENUM`, `ARRAY`, `OBJECT`, `BINARY`,
 * `DATE (YYYY-MM-DD)`, `TIME (24-hour HH:MM)`). ENUM carries no allowed values in ToolBench,
 * so it can only be a string.
 */
const TYPE_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  string: { type: 'string' },
  str: { type: 'string' },
  enum: { type: 'string' },
  number: { type: 'number' },
  float: { type: 'number' },
  double: { type: 'number' },
  integer: { type: 'integer' },
  int: { type: 'integer' },
  boolean: { type: 'boolean' },
  bool: { type: 'boolean' },
  array: { type: 'array' },
  list: { type: 'array' },
  object: { type: 'object' },
  dict: { type: 'object' },
  json: { type: 'object' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', format: 'date-time' },
  time: { type: 'string' },
  binary: { type: 'string', format: 'binary' },
  file: { type: 'string', format: 'binary' },
}

export interface ParameterConversion {
  /** `{type: 'object', properties, required?}`. */
  schema: JsonSchema
  /** Type names outside the table; those parameters get no JSON Schema `type`. */
  unknownTypes: string[]
  /** Names listed more than once (the first definition is kept). */
  duplicateNames: string[]
}

/**
 * Converts both lists to `{type: 'object', properties, required}`. Descriptions and defaults are
 * kept, except ToolBench's empty-string default, which means "no default". A hint such as
 * `(24-hour HH:MM)` that no JSON Schema keyword expresses is appended to the description.
 */
export function toolbenchParameters(
  required: readonly ToolbenchParameter[],
  optional: readonly ToolbenchParameter[],
): ParameterConversion {
  // A Map, because a parameter may be called `__proto__` or `constructor`.
  const properties = new Map<string, JsonSchema>()
  const requiredNames: string[] = []
  const unknownTypes: string[] = []
  const duplicateNames: string[] = []
  for (const [index, parameter] of [...required, ...optional].entries()) {
    if (properties.has(parameter.name)) {
      duplicateNames.push(parameter.name)
      continue
    }
    const { schema, known } = propertySchema(parameter)
    if (!known && parameter.type !== undefined) unknownTypes.push(parameter.type)
    properties.set(parameter.name, schema)
    if (index < required.length) requiredNames.push(parameter.name)
  }
  const schema: JsonSchema = { type: 'object', properties: Object.fromEntries(properties) }
  if (requiredNames.length > 0) schema.required = requiredNames
  return { schema, unknownTypes, duplicateNames }
}

function propertySchema(parameter: ToolbenchParameter): { schema: JsonSchema; known: boolean } {
  const match = /^\s*([A-Za-z_]+)\s*(?:\((.*)\))?\s*$/.exec(parameter.type ?? '')
  const key = match?.[1].toLowerCase()
  const mapped =
    key !== undefined && Object.hasOwn(TYPE_SCHEMAS, key) ? TYPE_SCHEMAS[key] : undefined
  const schema: JsonSchema = { ...mapped }
  const hint = mapped && mapped.format === undefined ? match?.[2]?.trim() : undefined
  const description = [parameter.description?.trim(), hint && `(${hint})`].filter(Boolean)
  if (description.length > 0) schema.description = description.join(' ')
  const value = parameter.default
  if (value !== undefined && value !== null && value !== '') schema.default = value
  return { schema, known: mapped !== undefined }
}

/** Warns about what `toolbenchParameters` had to drop or leave untyped for the API `id`. */
export function warnParameterProblems(
  context: ImportContext,
  record: number,
  id: string,
  conversion: ParameterConversion,
): void {
  for (const name of new Set(conversion.duplicateNames)) {
    addWarning(
      context,
      record,
      `${shownName(id)} lists parameter ${shownName(name)} twice; kept the first`,
    )
  }
  for (const type of new Set(conversion.unknownTypes)) {
    addWarning(
      context,
      record,
      `${shownName(id)}: unknown parameter type ${shownName(type)}, imported without a type`,
    )
  }
}
