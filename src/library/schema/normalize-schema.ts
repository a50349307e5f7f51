/**
 * Rewrites the common non-JSON-Schema spellings found in published tool definitions into JSON
 * Schema, so every `parameters` an agent gets is accepted by function-calling APIs (OpenAI
 * rejects `"type": "dict"`). Each rewrite is reported as one line. Valid schemas come back
 * unchanged (the same object), so their content hash does not move.
 *
 * Rewrites, at any depth (properties, items, anyOf/oneOf/allOf, $defs, …):
 * - type names: Python (`dict`, `float`, `tuple`, `list`, `str`, `int`, `bool`, `any`…), Java and
 *   JavaScript (`String`, `Integer`, `Long`, `Double`, `HashMap`, `ArrayList<String>`…), Gemini's
 *   upper case (`STRING`, `OBJECT`); `any` and unknown names drop the type (any value);
 * - Swagger 2 `type: "file"` → `{type: "string", format: "binary"}`;
 * - OpenAPI 3.0 `nullable: true` → `"null"` added to the type;
 * - `required: true|false` on a property (an older draft's spelling) → the parent's `required` list;
 * - a `$ref` that does not resolve inside the schema (circular or remote in the source
 *   document) → removed, the property accepts any value;
 * - the root: a missing `type` becomes `"object"`.
 * @module
 */
import type { JsonSchema } from '../tool.ts'
import { localTarget } from './local-ref.ts'

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'])

/** Lower-cased type names (generic arguments stripped) → JSON Schema type; null = any value. */
const TYPE_ALIASES: Readonly<Record<string, string | null>> = {
  dict: 'object',
  dictionary: 'object',
  map: 'object',
  hashmap: 'object',
  mapping: 'object',
  record: 'object',
  struct: 'object',
  float: 'number',
  double: 'number',
  decimal: 'number',
  bigdecimal: 'number',
  int: 'integer',
  long: 'integer',
  short: 'integer',
  byte: 'integer',
  bigint: 'integer',
  biginteger: 'integer',
  str: 'string',
  char: 'string',
  character: 'string',
  text: 'string',
  bool: 'boolean',
  list: 'array',
  arraylist: 'array',
  tuple: 'array',
  set: 'array',
  hashset: 'array',
  sequence: 'array',
  none: 'null',
  nonetype: 'null',
  any: null,
  mixed: null,
}

/** Keywords whose value is a schema. */
const SCHEMA_KEYWORDS = ['additionalProperties', 'items', 'not', 'if', 'then', 'else', 'contains']
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]

const MAX_DEPTH = 64

export interface NormalizedSchema {
  /** The schema, rewritten; the input object itself when nothing changed. */
  schema: JsonSchema
  /** One line per rewrite, e.g. `properties.limit.type: "int" → "integer"`. */
  changes: string[]
}

export function normalizeToolSchema(parameters: JsonSchema): NormalizedSchema {
  const changes: string[] = []
  const copy = structuredClone(parameters)
  const root = copy
  normalizeNode(copy, '', changes, root, 0)
  if (root.type === undefined && changes.every((change) => !change.startsWith('type:'))) {
    root.type = 'object'
    changes.push('type: missing → "object" (function parameters are an object)')
  }
  return changes.length === 0 ? { schema: parameters, changes } : { schema: copy, changes }
}

function normalizeNode(
  node: JsonSchema,
  path: string,
  changes: string[],
  root: JsonSchema,
  depth: number,
): void {
  if (depth > MAX_DEPTH) return
  const at = (key: string) => (path === '' ? key : `${path}.${key}`)
  if (typeof node.$ref === 'string' && localTarget(root, node.$ref) === undefined) {
    changes.push(
      `${at('$ref')}: "${node.$ref}" does not resolve inside the schema → removed (any value)`,
    )
    delete node.$ref
  }
  if (node.type !== undefined) normalizeType(node, at('type'), changes)
  if (node.nullable === true || node.nullable === false) {
    if (node.nullable === true && node.type !== undefined) {
      const types = Array.isArray(node.type) ? node.type : [node.type]
      if (!types.includes('null')) node.type = [...types, 'null']
    }
    changes.push(
      `${at('nullable')}: ${String(node.nullable)} → ${node.nullable ? '"null" in type' : 'removed'}`,
    )
    delete node.nullable
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    const map = node[keyword]
    if (!isObject(map)) continue
    for (const [name, child] of Object.entries(map)) {
      if (!isObject(child)) continue
      if (keyword === 'properties' && typeof child.required === 'boolean') {
        moveRequiredFlag(node, name, child, `${at(keyword)}.${name}`, changes)
      }
      normalizeNode(child, `${at(keyword)}.${name}`, changes, root, depth + 1)
    }
  }
  for (const keyword of SCHEMA_KEYWORDS) {
    const child = node[keyword]
    if (isObject(child)) normalizeNode(child, at(keyword), changes, root, depth + 1)
  }
  for (const keyword of SCHEMA_LIST_KEYWORDS) {
    const list = node[keyword]
    if (!Array.isArray(list)) continue
    list.forEach((child, index) => {
      if (isObject(child))
        normalizeNode(child, `${at(keyword)}[${index}]`, changes, root, depth + 1)
    })
  }
}

function normalizeType(node: JsonSchema, path: string, changes: string[]): void {
  const original = node.type
  const names = Array.isArray(original) ? original : [original]
  const mapped: string[] = []
  let anyValue = false
  let file = false
  for (const name of names) {
    if (typeof name !== 'string') {
      anyValue = true
      continue
    }
    if (JSON_TYPES.has(name)) {
      mapped.push(name)
      continue
    }
    const key = name
      .trim()
      .toLowerCase()
      .replace(/<.*>$|\[\]$/, '')
    if (key === 'file') {
      file = true
      mapped.push('string')
    } else if (JSON_TYPES.has(key)) {
      mapped.push(key)
    } else if (TYPE_ALIASES[key] === undefined || TYPE_ALIASES[key] === null) {
      anyValue = true
    } else {
      mapped.push(TYPE_ALIASES[key])
    }
    if (/\[\]$/.test(name.trim())) mapped[mapped.length - 1] = 'array'
  }
  const unique = [...new Set(mapped)]
  const next =
    anyValue || unique.length === 0 ? undefined : unique.length === 1 ? unique[0] : unique
  if (JSON.stringify(next) === JSON.stringify(original)) return
  if (next === undefined) delete node.type
  else node.type = next
  if (file && node.format === undefined) node.format = 'binary'
  const shown = next === undefined ? 'removed (any value)' : JSON.stringify(next)
  changes.push(`${path}: ${JSON.stringify(original)} → ${shown}`)
}

function moveRequiredFlag(
  parent: JsonSchema,
  name: string,
  child: JsonSchema,
  path: string,
  changes: string[],
): void {
  const flag = child.required as boolean
  delete child.required
  if (flag) {
    const list = Array.isArray(parent.required) ? (parent.required as unknown[]) : []
    if (!list.includes(name)) list.push(name)
    parent.required = list
  }
  changes.push(`${path}.required: ${String(flag)} → ${flag ? `"${name}" in required` : 'removed'}`)
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
