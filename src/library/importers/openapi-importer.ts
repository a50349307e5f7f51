/**
 * OpenAPI 3.x and Swagger 2.0 specs: each operation becomes a tool. `$ref`s inside the document
 * are resolved with `@apidevtools/swagger-parser`; references to other files or URLs are never
 * fetched (an import must not reach the network or read files the user did not name), and
 * circular references stay unresolved. Either kind is replaced by an unconstrained schema and
 * reported as a schema change.
 *
 * A tool per operation:
 * - name: `operationId` (characters other than `A-Za-z0-9_-` become `_`), else `method_path`
 *   (`GET /pets/{petId}` → `get_pets_petId`); id = name, or `namespace.name`;
 * - description: `summary`, then `description` when it adds something;
 * - parameters: one JSON-Schema object with a property per path, query, header and cookie
 *   parameter (path-level ones included; `Accept`, `Content-Type` and `Authorization` headers
 *   are left out, as OpenAPI says) and a `body` property for the request body
 *   (`application/json` first, else the first media type; Swagger 2 `in: body`), `required`
 *   as declared. Swagger 2 `formData` parameters are properties like query ones; a `{name}` of
 *   the path no parameter declares is added as a required string (with a warning);
 * - tags: the operation's tags; source: method, path, operationId, deprecated.
 * @module
 */
import SwaggerParser from '@apidevtools/swagger-parser'
import {
  MAX_PARAMETER_DEPTH,
  MAX_PARAMETER_VALUES,
  tooManyParameterValues,
  type JsonSchema,
  type Tool,
} from '../tool.ts'
import { addWarning, importFailed, sourceOf, type ImportContext } from './import-context.ts'

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
/** Header parameters OpenAPI says to ignore: the client or the transport sets them. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization'])
/** Swagger 2 parameter fields that are JSON Schema keywords. */
const SWAGGER2_SCHEMA_KEYS = [
  'type',
  'format',
  'items',
  'enum',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'multipleOf',
]

type Json = Record<string, unknown>

/**
 * The most values `dereference` may visit while it resolves the spec's `$ref`s. Its walk
 * (json-schema-ref-parser 14, `circular: 'ignore'`) goes through every object it has already
 * resolved again wherever the object is used, so schemas that each use the next one twice take
 * 2^levels steps (16 levels: 1 M visits, 18: 4.2 M; 30 never end). Real specs take a few visits
 * per value of the document: GitHub's (13 MB) 1.3 M, Microsoft Graph's (20 MB) 4.1 M. The
 * library calls `excludedPathMatcher` on every visit, which counts them; its own `timeoutMs` would
 * stop by wall-clock time, so the same spec would pass or fail with the machine's load.
 */
export const MAX_DEREFERENCE_VISITS = 10_000_000
/**
 * The most values the parameters of all of a spec's tools may hold together once `$ref`s are
 * inlined (each tool's own limit is MAX_PARAMETER_VALUES): a schema of 100,000 values used by
 * thousands of operations would otherwise be copied into each. Most real specs stay far under it
 * (Kubernetes 234,028, EC2 152,261, GitHub 34,218; bench/README round 21); Xero accounting holds
 * 1.19 M (23 MB of tools, the largest 1.8 MB), refused at round 21's 1,000,000. Since round 23 an
 * import runs in a worker that hands back the tools' hashes, a tool is at most 8 MiB and an answer
 * of tools by id too, so serving such a library costs the event loop what serving a direct upload
 * of that size does (the body limit takes 32 MiB): Xero's upload held the loop 49 ms of CPU, its
 * first select-tools 208 ms, Google Chat's (admitted before) 358 ms (bench/README round 23). The
 * limit keeps the worker's expansion near that size: ~29 MB of tools, 2-3 s, within its heap.
 */
export const MAX_SPEC_PARAMETER_VALUES = 1_500_000

/** Thrown from inside `dereference` (by its path matcher) when MAX_DEREFERENCE_VISITS is reached. */
class DereferenceBudgetSpent extends Error {}

/** True when a parsed document is an OpenAPI 3 or Swagger 2 spec. */
export function isOpenApiDocument(value: unknown): boolean {
  if (!isObject(value)) return false
  return typeof value.openapi === 'string' || value.swagger === '2.0' || value.swagger === 2
}

/** Imports an OpenAPI 3.x / Swagger 2.0 document (already parsed from JSON or YAML). */
export async function importOpenapi(parsed: unknown, context: ImportContext): Promise<Tool[]> {
  if (!isOpenApiDocument(parsed)) {
    throw importFailed(context, {
      message:
        'expected an OpenAPI 3.x document (an "openapi": "3.x.y" field) or a Swagger 2.0 document ("swagger": "2.0")',
    })
  }
  // Checked before the parser, whose message for a spec without paths is "[object Object] is
  // not a valid Openapi API definition".
  const given = (parsed as Json).paths
  if (!isObject(given) || Object.keys(given).length === 0) {
    throw importFailed(context, {
      field: 'paths',
      message: 'the spec has no paths, so no operations to import',
    })
  }
  let document: Json
  let visits = 0
  try {
    document = (await SwaggerParser.dereference(structuredClone(parsed) as never, {
      resolve: { external: false },
      dereference: {
        circular: 'ignore',
        excludedPathMatcher: () => {
          visits += 1
          if (visits > MAX_DEREFERENCE_VISITS) throw new DereferenceBudgetSpent()
          return false
        },
      },
    })) as unknown as Json
  } catch (error) {
    throw importFailed(context, {
      message:
        error instanceof DereferenceBudgetSpent
          ? `its $refs expand too much: resolving them visited more than ${MAX_DEREFERENCE_VISITS.toLocaleString('en-US')} values (schemas that use others several times over grow with every level); nothing was imported`
          : `not a usable OpenAPI document: ${(error as Error).message}`,
      cause: error,
    })
  }
  const isSwagger2 = document.swagger !== undefined
  const tools: Tool[] = []
  const follow = (value: unknown) => followRef(value, document)
  const budget: InlineBudget = { spec: MAX_SPEC_PARAMETER_VALUES }
  // Dereferenced: an object, as the spec's paths were.
  const paths = document.paths as Json
  for (const [path, rawPathItem] of Object.entries(paths)) {
    const pathItem = follow(rawPathItem)
    if (!isObject(pathItem)) continue
    for (const method of METHODS) {
      const operation = follow(pathItem[method])
      if (!isObject(operation)) continue
      const record = tools.length
      const pathParameters = followEach(pathItem.parameters, follow)
      const operationParameters = followEach(operation.parameters, follow)
      const requestBody = follow(operation.requestBody)
      const parameters = mergeParameters(pathParameters, operationParameters)
      const operationId =
        typeof operation.operationId === 'string' ? operation.operationId : undefined
      const name = toolName(operationId, method, path)
      const namespace = context.namespace
      const id = namespace === undefined ? name : `${namespace}.${name}`
      const { schema, cutAtLevel } = inlineRecursiveRefs(
        isSwagger2 ? swagger2Schema(parameters) : openapi3Schema(parameters, requestBody, follow),
        document,
        budget,
        () =>
          tooManyParameterValues(
            id,
            MAX_PARAMETER_VALUES,
            ` once its $refs are resolved (${method.toUpperCase()} ${path})`,
          ),
        () =>
          importFailed(context, {
            message: `the parameters of its operations hold more than ${MAX_SPEC_PARAMETER_VALUES.toLocaleString('en-US')} JSON values together once $refs are resolved (reached at ${method.toUpperCase()} ${path}); import fewer operations at once; nothing was imported`,
          }),
      )
      if (cutAtLevel !== undefined) {
        addWarning(
          context,
          record,
          `${method.toUpperCase()} ${path}: its parameters hold more than ${MAX_PARAMETER_VALUES.toLocaleString('en-US')} JSON values or nest more than ${MAX_PARAMETER_DEPTH} levels once its $refs are resolved, so objects nested more than ${cutAtLevel} levels deep keep only their type and description`,
        )
      }
      const unresolved = [pathParameters, operationParameters, [requestBody]]
        .flatMap((list) => (Array.isArray(list) ? list : []))
        .filter((value) => isObject(value) && typeof value.$ref === 'string')
        .map((value) => `"${(value as Json).$ref as string}"`)
      if (unresolved.length > 0) {
        addWarning(
          context,
          record,
          `${method.toUpperCase()} ${path}: ${unresolved.join(', ')} not resolved (references to other files or URLs are never fetched); that parameter or body is left out`,
        )
      }
      const undeclared = addUndeclaredPathParameters(schema, path, parameters)
      if ((schema.required as string[]).length === 0) delete schema.required
      const source = sourceOf(context, 'openapi', record)
      source.method = method.toUpperCase()
      source.path = path
      if (operationId !== undefined) source.operationId = operationId
      if (operation.deprecated === true) source.deprecated = true
      const tool: Tool = {
        id,
        name,
        description: describe(operation),
        parameters: schema,
        source,
      }
      if (namespace !== undefined) tool.namespace = namespace
      const tags = Array.isArray(operation.tags)
        ? operation.tags.filter((tag): tag is string => typeof tag === 'string')
        : []
      if (tags.length > 0) tool.tags = tags
      if (undeclared.length > 0) {
        addWarning(
          context,
          record,
          `${method.toUpperCase()} ${path}: path parameter(s) ${undeclared.map((name) => `"${name}"`).join(', ')} not declared in "parameters"; added as required strings`,
        )
      }
      if (operationId !== undefined && name !== operationId) {
        addWarning(context, record, `operationId "${operationId}" is used as the name "${name}"`)
      }
      tools.push(tool)
    }
  }
  return tools
}

/** How many times one recursive schema is inlined into itself before the recursion is cut. */
const RECURSION_DEPTH = 2

/** What inlineRecursiveRefs may still write for the whole spec. */
interface InlineBudget {
  spec: number
}

/**
 * Circular `$ref`s are left in place by the parser; each is replaced by a copy of its target, up
 * to RECURSION_DEPTH levels of the same reference (a tree of categories keeps two levels of
 * children). A reference still left after that is removed by schema normalisation and reported.
 * The copy is a tree: an object the parser shared between several places (a schema used twice)
 * is copied for each, so it is counted as it is written.
 *
 * A tool whose copy would hold more than MAX_PARAMETER_VALUES values or nest more than
 * MAX_PARAMETER_DEPTH levels is not refused: real specs have such tools (Azure's network specs,
 * AWS QuickSight, InfluxData, Sinao: a resource that embeds its sub-resources, each embedding
 * more), so its schema is cut at the deepest nesting level that fits (each object below it
 * becomes `{type, description}` only, which accepts any members) and `cutAtLevel` says where.
 * Past the spec's remaining `budget` (whole, or even at the shallowest cut), `specTooLarge` is thrown.
 */
function inlineRecursiveRefs(
  schema: JsonSchema,
  document: Json,
  budget: InlineBudget,
  tooLarge: () => Error,
  specTooLarge: () => Error,
): { schema: JsonSchema; cutAtLevel?: number } {
  const attempt = (level: number) => inlineWithin(schema, document, budget.spec, level)
  const kept = (inlined: Inlined) => {
    budget.spec -= inlined.values
    return inlined.schema
  }
  const whole = attempt(Number.POSITIVE_INFINITY)
  if (whole === 'spec') throw specTooLarge()
  if (whole !== 'tool') return { schema: kept(whole) }
  // The values kept grow with the level, so the deepest level that fits is found by halving.
  let best = attempt(MIN_CUT_LEVEL)
  if (best === 'spec') throw specTooLarge()
  if (best === 'tool') throw tooLarge()
  let [low, high] = [MIN_CUT_LEVEL, MAX_CUT_LEVEL]
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    const cut = attempt(middle)
    if (typeof cut === 'object') [best, low] = [cut, middle]
    else high = middle - 1
  }
  return { schema: kept(best), cutAtLevel: low }
}

/** The deepest and shallowest JSON nesting levels inlineRecursiveRefs cuts a too-large tool at. */
const MAX_CUT_LEVEL = 24
const MIN_CUT_LEVEL = 4

/** A schema with its references copied in, and how many values it holds. */
interface Inlined {
  schema: JsonSchema
  values: number
}

/**
 * `schema` with its references copied in, objects nested deeper than `maxLevel` reduced to their
 * `type` and `description`; or what it passed: `tool` (MAX_PARAMETER_VALUES or
 * MAX_PARAMETER_DEPTH) or `spec` (the `specLeft` values the spec may still hold).
 */
function inlineWithin(
  schema: JsonSchema,
  document: Json,
  specLeft: number,
  maxLevel: number,
): Inlined | 'tool' | 'spec' {
  let values = 0
  const visit = (value: unknown, active: ReadonlyMap<string, number>, level: number): unknown => {
    values += 1
    if (values > MAX_PARAMETER_VALUES) throw TOOL_TOO_LARGE
    if (values > specLeft) throw SPEC_TOO_LARGE
    if (typeof value !== 'object' || value === null) return value
    // Deeper than a tool may nest (assertParameterShape): cut like a tool with too many values.
    if (level >= MAX_PARAMETER_DEPTH - 1) throw TOOL_TOO_LARGE
    if (Array.isArray(value)) return value.map((item) => visit(item, active, level + 1))
    if (!isObject(value)) return value
    const ref = value.$ref
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      const depth = active.get(ref) ?? 0
      const target = depth < RECURSION_DEPTH ? pointer(document, ref) : undefined
      if (isObject(target)) {
        const { $ref: _ref, ...rest } = value
        const next = new Map(active).set(ref, depth + 1)
        // The reference is replaced, not kept: its own count goes back.
        values -= 1
        return visit({ ...target, ...rest }, next, level)
      }
    }
    if (level > maxLevel) return stub(value)
    const copy: Json = {}
    for (const [key, child] of Object.entries(value)) copy[key] = visit(child, active, level + 1)
    return copy
  }
  try {
    return { schema: visit(schema, new Map(), 0) as JsonSchema, values }
  } catch (error) {
    if (error === TOOL_TOO_LARGE) return 'tool'
    if (error === SPEC_TOO_LARGE) return 'spec'
    throw error
  }
}

/** Thrown inside inlineWithin past a tool's or the spec's limit (caught there). */
const TOOL_TOO_LARGE = new Error('tool too large')
const SPEC_TOO_LARGE = new Error('spec too large')

/** What is kept of an object below the cut: its `type` and `description` when they are strings. */
function stub(value: Json): Json {
  const kept: Json = {}
  if (typeof value.type === 'string') kept.type = value.type
  if (typeof value.description === 'string') kept.description = value.description
  return kept
}

/** How many `$ref` hops followRef takes before it gives up (a chain of references to references). */
const MAX_REF_HOPS = 8

/**
 * A path item, operation, parameter, request body or media type the parser left as a local
 * `$ref` (it does so for a whole referenced object when a schema somewhere inside it is
 * recursive) replaced by its target, so the object's fields are read rather than skipped.
 */
function followRef(value: unknown, document: Json): unknown {
  let current = value
  for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
    if (!isObject(current) || typeof current.$ref !== 'string' || !current.$ref.startsWith('#/')) {
      return current
    }
    const { $ref: ref, ...rest } = current
    const target = pointer(document, ref as string)
    if (!isObject(target)) return current
    current = { ...target, ...rest }
  }
  return current
}

function followEach(list: unknown, follow: (value: unknown) => unknown): unknown {
  return Array.isArray(list) ? list.map(follow) : list
}

function pointer(document: Json, ref: string): unknown {
  let current: unknown = document
  for (const raw of ref.slice(2).split('/')) {
    if (!isObject(current)) return undefined
    current = current[decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  return current
}

/**
 * `operationId` made a valid function name, else `method_path`. Not cut to a model API's 64
 * characters: GitHub's spec has operationIds that share their first 64 (they collided as
 * DUPLICATE_TOOL_ID), and `toolFormat` names a tool for the model API from its id, shortened
 * with a hash when needed (provider-tools.ts).
 */
function toolName(operationId: string | undefined, method: string, path: string): string {
  const raw =
    operationId ??
    `${method}_${path
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => segment.replace(/^\{(.*)\}$/, '$1'))
      .join('_')}`
  const name = raw
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
  return name === '' ? method : name
}

function describe(operation: Json): string {
  const summary = typeof operation.summary === 'string' ? operation.summary.trim() : ''
  const description = typeof operation.description === 'string' ? operation.description.trim() : ''
  if (summary === '') return description
  if (description === '' || description.startsWith(summary)) return description || summary
  return `${/[.!?]$/.test(summary) ? summary : `${summary}.`} ${description}`
}

/**
 * A `{name}` of the path template that no `in: path` parameter declares (OpenAPI requires one;
 * hand-written specs often leave it out) becomes a required string property, so the tool still
 * says it needs it. Returns the names added.
 */
function addUndeclaredPathParameters(
  schema: JsonSchema,
  path: string,
  parameters: Json[],
): string[] {
  const declared = new Set(
    parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name),
  )
  const properties = schema.properties as Record<string, Json>
  const added: string[] = []
  for (const [, name] of path.matchAll(/\{([^{}]+)\}/g)) {
    if (declared.has(name) || Object.hasOwn(properties, name) || added.includes(name)) continue
    properties[name] = { type: 'string' }
    ;(schema.required as string[]).push(name)
    added.push(name)
  }
  return added
}

/** Path-level parameters overridden by operation-level ones with the same name and location. */
function mergeParameters(pathLevel: unknown, operationLevel: unknown): Json[] {
  const merged = new Map<string, Json>()
  for (const list of [pathLevel, operationLevel]) {
    if (!Array.isArray(list)) continue
    for (const parameter of list) {
      if (!isObject(parameter) || typeof parameter.name !== 'string') continue
      merged.set(`${String(parameter.in)}:${parameter.name}`, parameter)
    }
  }
  return [...merged.values()].filter(
    (parameter) =>
      !(parameter.in === 'header' && IGNORED_HEADERS.has(String(parameter.name).toLowerCase())),
  )
}

function openapi3Schema(
  parameters: Json[],
  requestBody: unknown,
  follow: (value: unknown) => unknown,
): JsonSchema {
  const schema = emptyObjectSchema()
  for (const parameter of parameters) {
    let property: Json = isObject(parameter.schema) ? { ...parameter.schema } : {}
    if (!isObject(parameter.schema) && isObject(parameter.content)) {
      const media = Object.values(parameter.content).map(follow).find(isObject)
      if (media && isObject(media.schema)) property = { ...media.schema }
    }
    addProperty(schema, String(parameter.name), property, parameter)
  }
  if (isObject(requestBody) && isObject(requestBody.content)) {
    const content = requestBody.content
    const media = follow(content['application/json'] ?? Object.values(content)[0])
    if (isObject(media)) {
      const body: Json = isObject(media.schema) ? { ...media.schema } : {}
      addProperty(schema, 'body', body, requestBody)
    }
  }
  return schema
}

function swagger2Schema(parameters: Json[]): JsonSchema {
  const schema = emptyObjectSchema()
  for (const parameter of parameters) {
    if (parameter.in === 'body') {
      addProperty(
        schema,
        'body',
        isObject(parameter.schema) ? { ...parameter.schema } : {},
        parameter,
      )
      continue
    }
    const property: Json = {}
    for (const key of SWAGGER2_SCHEMA_KEYS) {
      if (parameter[key] !== undefined) property[key] = parameter[key]
    }
    addProperty(schema, String(parameter.name), property, parameter)
  }
  return schema
}

function addProperty(schema: JsonSchema, name: string, property: Json, declaration: Json): void {
  const properties = schema.properties as Record<string, Json>
  if (typeof declaration.description === 'string' && property.description === undefined) {
    property.description = declaration.description
  }
  properties[name] = property
  if (declaration.required === true) (schema.required as string[]).push(name)
}

function emptyObjectSchema(): JsonSchema {
  return { type: 'object', properties: {}, required: [] }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
