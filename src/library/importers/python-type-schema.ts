/**
 * Python type names (annotations, docstring types, Gorilla's `type` fields) as JSON Schema.
 * @module
 */
import type { JsonSchema } from '../tool.ts'

const BASE_TYPES: Readonly<Record<string, JsonSchema>> = {
  str: { type: 'string' },
  string: { type: 'string' },
  int: { type: 'integer' },
  integer: { type: 'integer' },
  float: { type: 'number' },
  number: { type: 'number' },
  bool: { type: 'boolean' },
  boolean: { type: 'boolean' },
  list: { type: 'array' },
  tuple: { type: 'array' },
  set: { type: 'array' },
  sequence: { type: 'array' },
  dict: { type: 'object' },
  mapping: { type: 'object' },
}

/**
 * The JSON Schema for a Python type, or undefined when JSON has no counterpart (`pd.DataFrame`,
 * `ImagePatch`, `sympy.Expr`…): such parameters are left untyped rather than guessed.
 * `Optional[X]` and `X | None` map like `X`; a union of numeric types (`int or float`,
 * `Union[int, float]`) is a number.
 */
export function pythonTypeSchema(typeText: string | undefined): JsonSchema | undefined {
  if (typeText === undefined) return undefined
  let text = typeText.trim().replace(/^typing\./, '')
  const optional = /^Optional\[(.*)\]$/.exec(text)
  if (optional) text = optional[1]
  const union = /^Union\[(.*)\]$/.exec(text)
  // `int or float`, `int | None`: white space runs collapsed first (each member is trimmed and read
  // by its base name, so that changes nothing), because `\s+or\s+|\s*\|\s*` on a long run of
  // spaces tried every start in the run and ran over the rest of it (32,000 spaces: 5.5 s).
  const members = (union ? union[1].split(',') : text.replace(/\s+/g, ' ').split(/ or | ?\| ?/))
    .map((member) => member.trim())
    .filter((member) => member !== '' && member !== 'None')
  if (members.length === 0) return undefined
  if (members.length === 1) {
    const base = members[0]
      .replace(/\[.*$/s, '')
      .replace(/^typing\./, '')
      .toLowerCase()
    return Object.hasOwn(BASE_TYPES, base) ? { ...BASE_TYPES[base] } : undefined
  }
  const schemas = members.map((member) => pythonTypeSchema(member)?.type)
  if (schemas.every((type) => type === 'number' || type === 'integer')) return { type: 'number' }
  return undefined
}
