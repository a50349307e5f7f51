/**
 * Validates one input record with a zod schema and turns the first problem into an IMPORT_FAILED
 * that names the record, the field, what was expected and what was found.
 * @module
 */
import { z } from 'zod'
import { importFailed, type ImportContext } from './import-context.ts'

const NON_EMPTY_STRING = 'expected a non-empty string'

/** A string with at least one non-blank character; the message is shared by every importer. */
export const nonEmptyString = () =>
  z.string({ error: NON_EMPTY_STRING }).regex(/\S/, { error: NON_EMPTY_STRING })

/**
 * Returns the parsed record or throws IMPORT_FAILED for its first problem.
 * @param record 0-based position of the record, or undefined for the document as a whole.
 * @param fieldPrefix prepended to field paths, e.g. `result.` when the record is nested.
 */
export function parseRecord<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  context: ImportContext,
  record: number | undefined,
  fieldPrefix = '',
): z.output<Schema> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const [issue, ...rest] = result.error.issues
  let path: PropertyKey[] = issue.path
  let message: string
  if (issue.code === 'unrecognized_keys') {
    path = [...path, issue.keys[0]]
    message = 'unknown field; remove it or check its spelling'
  } else {
    message = `${expectation(issue)}, got ${describeValue(valueAt(value, path))}`
  }
  if (rest.length > 0) message += ` (and ${rest.length} more problem(s) in this record)`
  const field = path.length === 0 && fieldPrefix === '' ? undefined : fieldPrefix + fieldPath(path)
  throw importFailed(context, { record, field: field?.replace(/\.$/, ''), message })
}

function expectation(issue: z.core.$ZodIssue): string {
  // Our own messages start with "expected"; zod's defaults start with "Invalid input: expected …".
  if (issue.message.startsWith('expected')) return issue.message
  if (issue.code === 'invalid_type') return `expected ${withArticle(issue.expected)}`
  if (issue.code === 'invalid_value') {
    return `expected one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`
  }
  return issue.message
    .replace(/^Invalid input: /, '')
    .replace(/^\w/, (first) => first.toLowerCase())
}

function withArticle(type: string): string {
  const name = type === 'record' ? 'object' : type
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`
}

/** `api_list[2].required_parameters[0].name` */
function fieldPath(path: readonly PropertyKey[]): string {
  let text = ''
  for (const key of path) {
    text += typeof key === 'number' ? `[${key}]` : `${text === '' ? '' : '.'}${String(key)}`
  }
  return text
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current
}

/** A short rendering of a bad value for messages: `42`, `""`, `null`, `{"a":1}`, `nothing …`. */
export function describeValue(value: unknown, maxLength = 60): string {
  if (value === undefined) return 'nothing (the field is missing)'
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= maxLength ? text : `${text.slice(0, maxLength - 1)}…`
}
