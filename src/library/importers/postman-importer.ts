/**
 * Postman collections (v2.0 and v2.1, as Postman exports them): one tool per request. Folders
 * (`item` inside `item`) name the tool's place: id `<folder>.<request>` in snake case (`orders.
 * list_orders`), the name the request's own (`list_orders`). Parameters: path variables (`:id`
 * segments, `url.variable`, and `{{var}}` segments after the host) are required strings; query
 * parameters (not `disabled`) optional strings; a JSON `raw` body is a required `body` whose
 * schema is inferred from the example, `urlencoded` / `formdata` fields strings, a GraphQL body
 * `{query, variables}`. Headers, auth and saved responses are not arguments and are left out.
 * A `{{variable}}` in the JSON body (`{"id": {{customerId}}}`, which is not JSON until Postman
 * substitutes it, or `"{{name}}"`) is a value named after its variable. The collection's own
 * `variable` list is what Postman substitutes when nothing overrides it: a variable it gives a
 * value (not empty, not disabled) is that value's type with the value as its `default` (a
 * `{{var}}` path segment so given is an optional parameter then), and descriptions read with it
 * substituted. Any other variable (an environment's, or one the collection leaves empty) stays a
 * placeholder: no value is made up for it.
 * @module
 */
import { z } from 'zod'
import type { JsonSchema, Tool } from '../tool.ts'
import { addWarning, sourceOf, type ImportContext } from './import-context.ts'
import { parseRecord } from './parse-record.ts'
import { shownName } from '../name-characters.ts'

/** Folders nested deeper than this are not walked (Postman's own UI stops far earlier). */
const MAX_FOLDER_DEPTH = 64

const DESCRIPTION = z.union([z.string(), z.looseObject({ content: z.string().optional() })])
const KEY_VALUE = z.looseObject({
  key: z.string().nullish(),
  value: z.unknown().optional(),
  description: DESCRIPTION.nullish(),
  disabled: z.boolean().optional(),
  type: z.string().optional(),
})
const URL_OBJECT = z.looseObject({
  raw: z.string().optional(),
  path: z
    .union([z.string(), z.array(z.union([z.string(), z.looseObject({ value: z.string() })]))])
    .optional(),
  query: z.array(KEY_VALUE).nullish(),
  variable: z.array(KEY_VALUE).nullish(),
})
const REQUEST = z.union([
  z.string(),
  z.looseObject({
    method: z.string().optional(),
    url: z.union([z.string(), URL_OBJECT]).optional(),
    description: DESCRIPTION.nullish(),
    body: z
      .looseObject({
        mode: z.string().optional(),
        raw: z.string().optional(),
        urlencoded: z.array(KEY_VALUE).optional(),
        formdata: z.array(KEY_VALUE).optional(),
        graphql: z.unknown().optional(),
      })
      .nullish(),
  }),
])
const COLLECTION = z.looseObject({
  info: z.looseObject({ name: z.string().optional() }),
  item: z.array(z.unknown()),
  variable: z.array(z.unknown()).nullish(),
})
const ITEM = z.looseObject({
  name: z.string().optional(),
  description: DESCRIPTION.nullish(),
  item: z.array(z.unknown()).optional(),
  request: REQUEST.optional(),
})

type UrlObject = z.infer<typeof URL_OBJECT>
type Request = Exclude<z.infer<typeof REQUEST>, string>
/** The collection's variables that have a value: name → the value Postman substitutes. */
type Values = ReadonlyMap<string, string | number | boolean>

/**
 * The collection's `variable` list as Postman substitutes it: each variable with a string (not
 * blank), number or boolean value that is not disabled. An entry of another shape is skipped.
 */
function collectionValues(variables: readonly unknown[]): Values {
  const values = new Map<string, string | number | boolean>()
  for (const entry of variables) {
    const parsed = KEY_VALUE.safeParse(entry)
    if (!parsed.success || parsed.data.disabled === true || !parsed.data.key) continue
    const { value } = parsed.data
    if (
      typeof value === 'string'
        ? value.trim() !== ''
        : typeof value === 'number' || typeof value === 'boolean'
    )
      values.set(parsed.data.key, value as string | number | boolean)
  }
  return values
}

/** `text` with each `{{name}}` the collection gives a value replaced by it. */
function substituted(text: string, values: Values): string {
  if (values.size === 0 || !text.includes('{{')) return text
  return text.replace(/\{\{\s*([^{}]+?)\s*\}\}/g, (whole, name: string) =>
    values.has(name) ? String(values.get(name)) : whole,
  )
}

/** Whether a JSON value is a Postman collection (v2.0/v2.1): `info` and an `item` list. */
export function isPostmanCollection(value: Record<string, unknown>): boolean {
  const info = value.info
  if (info === null || typeof info !== 'object' || !Array.isArray(value.item)) return false
  const schema = (info as Record<string, unknown>).schema
  return typeof schema !== 'string' || schema.includes('getpostman.com/json/collection')
}

export function importPostman(parsed: unknown, context: ImportContext): Tool[] {
  const collection = parseRecord(COLLECTION, parsed, context, undefined)
  const values = collectionValues(collection.variable ?? [])
  const tools: Tool[] = []
  // Depth-first in file order, without recursion (a deep folder tree can't exhaust the stack).
  const pending: Array<{ item: unknown; folders: string[] }> = collection.item
    .map((item) => ({ item, folders: [] as string[] }))
    .reverse()
  while (pending.length > 0) {
    const { item, folders } = pending.pop()!
    const record = tools.length
    const entry = parseRecord(ITEM, item, context, record)
    if (entry.item !== undefined) {
      if (folders.length >= MAX_FOLDER_DEPTH) {
        addWarning(
          context,
          undefined,
          `skipped folder ${shownName(entry.name)} nested deeper than ${MAX_FOLDER_DEPTH} folders`,
        )
        continue
      }
      const inner = [...folders, entry.name ?? '']
      for (const child of [...entry.item].reverse()) pending.push({ item: child, folders: inner })
      continue
    }
    if (entry.request === undefined) continue
    tools.push(requestTool(entry, entry.request, folders, record, context, values))
  }
  return tools
}

function requestTool(
  item: z.infer<typeof ITEM>,
  given: z.infer<typeof REQUEST>,
  folders: readonly string[],
  record: number,
  context: ImportContext,
  values: Values,
): Tool {
  const request: Request = typeof given === 'string' ? { url: given } : given
  const method = (request.method ?? 'GET').toUpperCase()
  const url: UrlObject =
    typeof request.url === 'string' ? { raw: request.url } : (request.url ?? {})
  const segments = pathSegments(url)
  const path = `/${segments.join('/')}`
  const name =
    snakeCase(item.name ?? '') ||
    snakeCase(`${method} ${segments.join(' ')}`) ||
    method.toLowerCase()
  const prefix = folders.map(snakeCase).filter((folder) => folder !== '')
  const id = [...(context.namespace ? [context.namespace] : []), ...prefix, name].join('.')
  const description = substituted(
    text(request.description) || text(item.description) || item.name?.trim() || `${method} ${path}`,
    values,
  )
  const source = sourceOf(context, 'postman', record)
  source.method = method
  source.path = path
  if (folders.length > 0) source.folder = folders.join('/')
  return {
    id,
    name,
    description,
    parameters: parametersOf(url, segments, request.body ?? undefined, values),
    ...(context.namespace && { namespace: context.namespace }),
    source,
  }
}

/** The URL's path segments after the host (`{{baseUrl}}/orders/:id` → `orders`, `:id`). */
function pathSegments(url: UrlObject): string[] {
  if (Array.isArray(url.path)) {
    return url.path.map((part) => (typeof part === 'string' ? part : part.value)).filter(Boolean)
  }
  const raw = (typeof url.path === 'string' ? url.path : (url.raw ?? '')).split(/[?#]/)[0]
  const withoutHost =
    typeof url.path === 'string' ? raw : raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/]*/i, '')
  return withoutHost.split('/').filter((part) => part !== '')
}

function parametersOf(
  url: UrlObject,
  segments: readonly string[],
  body: Request['body'],
  values: Values,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  const add = (key: string, schema: JsonSchema, isRequired: boolean) => {
    if (key === '' || key in properties) return
    properties[key] = schema
    if (isRequired) required.push(key)
  }
  const variables = new Map((url.variable ?? []).map((variable) => [variable.key ?? '', variable]))
  for (const segment of segments) {
    const key = /^:(.+)$/.exec(segment)?.[1]
    if (key !== undefined) add(key, stringSchema(variables.get(key)), true)
    const variable = /^\{\{(.+)\}\}$/.exec(segment)?.[1]
    if (variable === undefined) continue
    // One the collection gives a value is sent with it unless the caller gives another.
    const value = values.get(variable.trim())
    if (value === undefined) add(variable, stringSchema(variables.get(variable)), true)
    else add(variable, { ...stringSchema(variables.get(variable)), default: String(value) }, false)
  }
  for (const query of url.query ?? []) {
    if (query.disabled !== true) add(query.key ?? '', stringSchema(query), false)
  }
  if (body?.mode === 'raw' && body.raw !== undefined && body.raw.trim() !== '') {
    add('body', rawBodySchema(body.raw, values), true)
  } else if (body?.mode === 'urlencoded' || body?.mode === 'formdata') {
    for (const field of body[body.mode] ?? []) {
      if (field.disabled === true) continue
      const schema = stringSchema(field)
      if (field.type === 'file')
        schema.description = [schema.description, 'A file.'].filter(Boolean).join(' ')
      add(field.key ?? '', schema, false)
    }
  } else if (body?.mode === 'graphql') {
    add('query', { type: 'string', description: 'The GraphQL query.' }, true)
    add('variables', { type: 'object', description: 'The GraphQL variables.' }, false)
  }
  return { type: 'object', properties, ...(required.length > 0 && { required }) }
}

function stringSchema(entry: z.infer<typeof KEY_VALUE> | undefined): JsonSchema {
  const description = text(entry?.description)
  return { type: 'string', ...(description && { description }) }
}

/**
 * A JSON example body's schema (types of its values); text that is not JSON, even with its
 * `{{variables}}` read as strings, is a string.
 */
function rawBodySchema(raw: string, values: Values): JsonSchema {
  try {
    const schema = exampleSchema(JSON.parse(withVariablesAsStrings(raw)), 0, values)
    return { ...schema, description: schema.description ?? 'The request body (JSON).' }
  } catch {
    return { type: 'string', description: 'The request body.' }
  }
}

/** Marks a string that stood for a Postman variable (a NUL no JSON text of a request holds). */
const VARIABLE_MARK = '\u0000postman-variable:'

/**
 * `raw` with each `{{name}}` outside a JSON string replaced by the JSON string of VARIABLE_MARK
 * and its name (`{"id": {{customerId}}}` parses); one inside a string stays as it is.
 */
function withVariablesAsStrings(raw: string): string {
  let out = ''
  let inString = false
  let at = 0
  while (at < raw.length) {
    const char = raw[at]
    if (inString) {
      if (char === '\\') {
        out += raw.slice(at, at + 2)
        at += 2
        continue
      }
      if (char === '"') inString = false
    } else if (char === '"') inString = true
    else if (char === '{' && raw[at + 1] === '{') {
      const end = raw.indexOf('}}', at + 2)
      if (end !== -1) {
        out += JSON.stringify(`${VARIABLE_MARK}${raw.slice(at + 2, end).trim()}`)
        at = end + 2
        continue
      }
    }
    out += char
    at += 1
  }
  return out
}

/** The variable a value of the example stands for: `{{name}}`, or one outside a string. */
function variableOf(value: string): { name: string; inString: boolean } | undefined {
  if (value.startsWith(VARIABLE_MARK))
    return { name: value.slice(VARIABLE_MARK.length), inString: false }
  const name = /^\{\{\s*([^{}]+?)\s*\}\}$/.exec(value)?.[1]
  return name === undefined ? undefined : { name, inString: true }
}

/**
 * A body variable's schema: a string named after it, or, when the collection gives it a value,
 * that value's type with the value as `default` (outside a string, `{{qty}}` of "3" is the
 * number 3, as the JSON Postman sends has it).
 */
function variableSchema(
  variable: { name: string; inString: boolean },
  values: Values,
  depth: number,
): JsonSchema {
  const description = `Postman variable {{${variable.name}}}.`
  const value = values.get(variable.name)
  if (value === undefined) return { type: 'string', description }
  if (variable.inString || typeof value !== 'string')
    return { ...exampleSchema(value, depth, values), description, default: value }
  let parsed: unknown = value
  try {
    parsed = JSON.parse(value)
  } catch {
    // Not JSON: Postman would send a body that is not JSON either; read it as the string.
  }
  const schema = exampleSchema(parsed, depth, values)
  return parsed !== null && typeof parsed === 'object'
    ? { ...schema, description }
    : { ...schema, description, default: parsed as string | number | boolean }
}

function exampleSchema(value: unknown, depth: number, values: Values): JsonSchema {
  if (value === null) return {}
  if (typeof value === 'string') {
    const variable = variableOf(value)
    return variable === undefined ? { type: 'string' } : variableSchema(variable, values, depth)
  }
  if (Array.isArray(value)) {
    return depth >= 16 || value.length === 0
      ? { type: 'array' }
      : { type: 'array', items: exampleSchema(value[0], depth + 1, values) }
  }
  if (typeof value === 'object') {
    if (depth >= 16) return { type: 'object' }
    const properties: Record<string, JsonSchema> = {}
    for (const [key, inner] of Object.entries(value))
      properties[key] = exampleSchema(inner, depth + 1, values)
    return { type: 'object', properties }
  }
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number' }
  return { type: typeof value }
}

function text(description: z.infer<typeof DESCRIPTION> | null | undefined): string {
  const value = typeof description === 'string' ? description : description?.content
  return value?.trim() ?? ''
}

/** `List Orders (v2)` → `list_orders_v2`; letters of any script are kept. */
function snakeCase(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
}
