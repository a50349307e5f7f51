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
import {
  MAX_PARAMETER_DEPTH,
  MAX_PARAMETER_VALUES,
  tooManyParameterValues,
  type JsonSchema,
  type Tool,
} from '../tool.ts'
import { addWarning, importFailed, sourceOf, type ImportContext } from './import-context.ts'
import { localTarget } from '../schema/local-ref.ts'
import { chooseLevels, pointer, SharedSchemas, type DefsPlan } from './openapi-defs.ts'
import { shownName } from '../name-characters.ts'
import { MAX_TOOL_ID_CHARS, toolIdTooLong } from '../tool-id-limit.ts'
import { leastDereferenceVisits } from './dereference-visits.ts'

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
 * stop by wall-clock time, so the same spec would pass or fail with the machine's load. Past it
 * the spec takes the `$defs` form, which needs no such walk.
 */
export const MAX_DEREFERENCE_VISITS = 10_000_000
/**
 * The most values the parameters of all of a spec's tools may hold together, inlined or in the
 * `$defs` form (each tool's own limit is MAX_PARAMETER_VALUES): a schema of 100,000 values used by
 * thousands of operations would otherwise be copied into each. Most real specs stay far under it
 * (Kubernetes 234,028, EC2 152,261, GitHub 34,218; bench/README round 21); Xero accounting holds
 * 1.19 M (23 MB of tools, the largest 1.8 MB), refused at round 21's 1,000,000. Since round 23 an
 * import runs in a worker that hands back the tools' hashes, a tool is at most 8 MiB and an answer
 * of tools by id too, so serving such a library costs the event loop what serving a direct upload
 * of that size does (the body limit takes 32 MiB): Xero's upload held the loop 49 ms of CPU, its
 * first select-tools 208 ms, Google Chat's (admitted before) 358 ms (bench/README round 23). The
 * limit keeps the worker's expansion near that size: ~29 MB of tools, 2-3 s, within its heap.
 * (Counted in values, not bytes: Microsoft Graph's 11,422 tools in `$defs` form hold 1.5 M values
 * in 106 MB, its schemas' descriptions being long; bench/README round 27.)
 */
export const MAX_SPEC_PARAMETER_VALUES = 1_500_000

/** Thrown from inside `dereference` (by its path matcher) when MAX_DEREFERENCE_VISITS is reached. */
class DereferenceBudgetSpent extends Error {}

/** True when a parsed document is an OpenAPI 3 or Swagger 2 spec. */
export function isOpenApiDocument(value: unknown): boolean {
  if (!isObject(value)) return false
  return typeof value.openapi === 'string' || value.swagger === '2.0' || value.swagger === 2
}

/** How `importOpenapi` writes the spec's `$ref`s into the tools' parameters. */
export interface OpenapiImportOptions {
  /**
   * `auto` (default): copied inline when every tool and the spec fit the limits that way, else
   * kept in `$defs` (openapi-defs.ts); `defs`: kept in `$defs` whatever the size (tests, bench).
   */
  form?: 'auto' | 'defs'
}

/** One operation of the spec, before its parameters' `$ref`s are written out. */
interface Operation {
  method: string
  path: string
  operation: Json
  parameters: Json[]
  /** The parameters' schema, its `$ref`s as the document (dereferenced or not) holds them. */
  schema: JsonSchema
  /** Parameters and request bodies left as `$ref`s (other files or URLs), quoted. */
  unresolved: string[]
  id: string
  name: string
  operationId: string | undefined
}

/**
 * Imports an OpenAPI 3.x / Swagger 2.0 document (already parsed from JSON or YAML). Its
 * `$ref`s are copied inline, the form function-calling APIs take best (OpenAI's strict mode,
 * Gemini), unless a tool would then pass MAX_PARAMETER_VALUES, the spec
 * MAX_SPEC_PARAMETER_VALUES or the parser MAX_DEREFERENCE_VISITS: then every tool of the spec
 * keeps the schemas it reaches in `$defs` instead (openapi-defs.ts), cut by reference level where
 * that is still too large. Of the 1,075 specs over 50 KB of APIs.guru's directory, the ones that
 * imported before import as before; DocuSign and Microsoft Graph import in the `$defs` form.
 */
export async function importOpenapi(
  parsed: unknown,
  context: ImportContext,
  options: OpenapiImportOptions = {},
): Promise<Tool[]> {
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
  // The operations as the document writes them, no `$ref` expanded: what the `$defs` form
  // builds on, and a bound of both forms' size counted before the parser's walk (before round
  // 44 a 20 MB spec of such operations cost 6-9 s of CPU in all, walked and then refused anyway;
  // now 1.5-1.8 s, most of it the parse).
  const document = parsed as Json
  const operations = operationsOf(document, context, true)
  if (leastSpecValues(operations) > MAX_SPEC_PARAMETER_VALUES) {
    throw importFailed(context, {
      message: `the parameters of its operations hold more than ${MAX_SPEC_PARAMETER_VALUES.toLocaleString('en-US')} JSON values together before any "$ref" in them is expanded (in either form, inline or in "$defs", they only grow); import fewer operations at once; nothing was imported`,
    })
  }
  // Ids too long for any request, refused before any walk of the spec (before round 45, after
  // the parser's: a spec of one 1 MB operationId and a large schema walked it first).
  assertOperationIdLengths(operations, context)
  const shared = new SharedSchemas(document)
  const plans = operations.map((operation) => shared.plan(operation.schema))
  // The parser's walk only when the inline form may fit and the walk its budget (round 45): a
  // spec whose operation holds more than MAX_PARAMETER_VALUES inline, or a document the walk
  // would go through past MAX_DEREFERENCE_VISITS (a YAML alias in many places), went through
  // it all the same, ~10 s of CPU for a 1.5 MB file, and then took the `$defs` form.
  const walk = options.form === 'defs' ? 'over' : walkOf(document)
  if (walk !== 'over' && mayInline(plans) && walkFits(walk, document)) {
    const dereferenced = await dereferenceWithin(parsed, context)
    if (dereferenced !== undefined) {
      const inlineOperations = operationsOf(dereferenced, context)
      const inlined = inlineAll(inlineOperations, dereferenced)
      if (inlined !== undefined) return toolsOf(inlineOperations, inlined, [], context)
    }
  } else if (typeof walk === 'object') {
    // The parser refuses a local `$ref` to nothing wherever it is; so does a walk skipped.
    throw importFailed(context, {
      message: `not a usable OpenAPI document: Missing $ref pointer ${JSON.stringify(walk.missing.slice(0, 200))}: nothing in the document is there`,
    })
  }
  const chosen = chooseLevels(plans, MAX_SPEC_PARAMETER_VALUES)
  if (chosen === 'spec') {
    throw importFailed(context, {
      message: `the parameters of its operations hold more than ${MAX_SPEC_PARAMETER_VALUES.toLocaleString('en-US')} JSON values together, even with the schemas they share kept once per tool in "$defs" and cut to their type; import fewer operations at once; nothing was imported`,
    })
  }
  if ('tool' in chosen) {
    const { id, method, path } = operations[chosen.tool]
    throw tooManyParameterValues(
      id,
      MAX_PARAMETER_VALUES,
      ` (or nest more than ${MAX_PARAMETER_DEPTH} levels) even with the schemas it references cut to their type (${method.toUpperCase()} ${path})`,
    )
  }
  const schemas = plans.map((plan, at) => shared.build(plan, chosen.levels[at]))
  const cuts = plans.map((plan, at) => {
    const level = chosen.levels[at]
    if (level === plan.sizes.length - 1) return undefined
    const { method, path } = operations[at]
    const limit =
      chosen.cap === MAX_PARAMETER_VALUES
        ? `more than ${MAX_PARAMETER_VALUES.toLocaleString('en-US')} JSON values or nest more than ${MAX_PARAMETER_DEPTH} levels`
        : `more than ${chosen.cap.toLocaleString('en-US')} JSON values (what each tool may hold for the spec's ${MAX_SPEC_PARAMETER_VALUES.toLocaleString('en-US')} together)`
    return `${method.toUpperCase()} ${path}: with the schemas it references in "$defs" its parameters hold ${limit}, so schemas more than ${level} references deep keep only their type and description`
  })
  return toolsOf(operations, schemas, cuts, context)
}

/**
 * A lower bound of the JSON values the parameters of all the tools of `operations` (their `$ref`s
 * as the document writes them) hold together in either form, counted only up to one past
 * MAX_SPEC_PARAMETER_VALUES: each value as written, an object with a `$ref` as one value and
 * nothing inside it (inline it becomes a copy of its target, in the `$defs` form a reference or
 * its target's type: an object either way). A walk of what the operations write themselves,
 * not of what they reference, so small for a spec of shared schemas.
 */
function leastSpecValues(operations: readonly Operation[]): number {
  let values = 0
  const stack: unknown[] = operations.map((operation) => operation.schema)
  while (stack.length > 0) {
    const value = stack.pop()
    values += 1
    if (values > MAX_SPEC_PARAMETER_VALUES) break
    if (typeof value !== 'object' || value === null) continue
    if (!Array.isArray(value) && typeof (value as Json).$ref === 'string') continue
    for (const child of Object.values(value)) stack.push(child)
  }
  return values
}

/**
 * False when the inline form cannot fit whatever the parser's walk gives: a tool's least inline
 * values (`DefsPlan.leastInline`) past MAX_PARAMETER_VALUES, or all of them together past
 * MAX_SPEC_PARAMETER_VALUES (each tool holds its own copies).
 */
function mayInline(plans: readonly DefsPlan[]): boolean {
  let total = 0
  for (const { leastInline } of plans) {
    if (leastInline > MAX_PARAMETER_VALUES) return false
    total += leastInline
  }
  return total <= MAX_SPEC_PARAMETER_VALUES
}

/**
 * `over` when the parser's walk of `document` would pass MAX_DEREFERENCE_VISITS: it calls the
 * path matcher for every object it goes through and for each of its members, wherever an object
 * is used (a YAML alias or a shared schema in each of its places), except inside a `$ref` object,
 * which it replaces. So it makes at least one visit per value of the document written out as a
 * tree, not counting inside `$ref` objects: counted here, a plain walk (~100 times cheaper a
 * value than the parser's, whose visits build two JSON pointers each), up to one past the
 * budget. Within it, the first local `$ref` to nothing (`missing`), which the parser refuses, or
 * `within`.
 */
function walkOf(document: Json): 'over' | 'within' | { missing: string } {
  let values = 0
  let missing: string | undefined
  const stack: unknown[] = [document]
  while (stack.length > 0) {
    const value = stack.pop()
    values += 1
    if (values > MAX_DEREFERENCE_VISITS) return 'over'
    if (typeof value !== 'object' || value === null) continue
    const ref = Array.isArray(value) ? undefined : (value as Json).$ref
    if (typeof ref === 'string') {
      if (missing === undefined && ref.startsWith('#/') && localTarget(document, ref) === undefined)
        missing = ref
      continue
    }
    for (const child of Object.values(value)) stack.push(child)
  }
  return missing === undefined ? 'within' : { missing }
}

/**
 * False when the parser's walk of `document`, written out by `walkOf` within its budget, is sure
 * to pass MAX_DEREFERENCE_VISITS all the same: schemas that each use the next one twice are
 * gone through again wherever they are used (2^levels visits from a few KB; before round 46 a
 * 4 KB spec of 30 such levels cost 2-3 s of CPU, walked to the budget, then took the `$defs`
 * form). Counted with each schema's size worked out once (dereference-visits.ts). A document
 * with a `$ref` to nothing is left to the parser, which says so.
 */
function walkFits(walk: 'within' | { missing: string }, document: Json): boolean {
  return typeof walk === 'object' || leastDereferenceVisits(document) <= MAX_DEREFERENCE_VISITS
}

/**
 * Throws IMPORT_FAILED for the first operation whose tool id would be longer than
 * MAX_TOOL_ID_CHARS (tool-id-limit.ts), as the import's own check would once every tool is
 * built (import-tools.ts), but before the parser's walk and the schemas' copies.
 */
function assertOperationIdLengths(operations: readonly Operation[], context: ImportContext): void {
  const record = operations.findIndex((operation) => operation.id.length > MAX_TOOL_ID_CHARS)
  if (record < 0) return
  const { id, method, path } = operations[record]
  const error = importFailed(context, {
    record,
    message: `${toolIdTooLong(id)} (${method.toUpperCase()} ${shownName(path.slice(0, 200))}): shorten the operationId or path it is made from`,
  })
  error.details.maxToolIdChars = MAX_TOOL_ID_CHARS
  throw error
}

/**
 * `parsed` with its local `$ref`s resolved by the parser (circular ones left), or undefined when
 * that walk passes MAX_DEREFERENCE_VISITS or overflows the stack (the `$defs` form needs no such
 * walk).
 */
async function dereferenceWithin(
  parsed: unknown,
  context: ImportContext,
): Promise<Json | undefined> {
  // Imported here, not at the top: a start that imports no OpenAPI spec (the demo, a saved index)
  // does not load the parser and its dependencies (about 0.1 s).
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser')
  let visits = 0
  try {
    return (await SwaggerParser.dereference(structuredClone(parsed) as never, {
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
    // A chain of references thousands deep overflows the parser's recursion: no walk either.
    if (error instanceof DereferenceBudgetSpent || error instanceof RangeError) return undefined
    throw importFailed(context, {
      message: `not a usable OpenAPI document: ${(error as Error).message}`,
      cause: error,
    })
  }
}

/**
 * The spec's operations in document order, each with its parameters' schema. `references`: the
 * document's `$ref`s are still there (the `$defs` form), so a parameter's or body's own
 * description is added only when the schema it references has none, as in the inline form.
 */
function operationsOf(document: Json, context: ImportContext, references = false): Operation[] {
  const isSwagger2 = document.swagger !== undefined
  const operations: Operation[] = []
  // The parser resolved pointers into arrays too (`…/allOf/0/…`); without it, so does this.
  const follow = (value: unknown) => followRef(value, document, references ? localTarget : pointer)
  const described = (property: Json) => (references ? (follow(property) as Json) : property)
  // An object, as the spec's paths were checked to be.
  const paths = document.paths as Json
  for (const [path, rawPathItem] of Object.entries(paths)) {
    const pathItem = follow(rawPathItem)
    if (!isObject(pathItem)) continue
    for (const method of METHODS) {
      const operation = follow(pathItem[method])
      if (!isObject(operation)) continue
      const pathParameters = followEach(pathItem.parameters, follow)
      const operationParameters = followEach(operation.parameters, follow)
      const requestBody = follow(operation.requestBody)
      const parameters = mergeParameters(pathParameters, operationParameters)
      const operationId =
        typeof operation.operationId === 'string' ? operation.operationId : undefined
      const name = toolName(operationId, method, path)
      const namespace = context.namespace
      const unresolved = [pathParameters, operationParameters, [requestBody]]
        .flatMap((list) => (Array.isArray(list) ? list : []))
        .filter((value) => isObject(value) && typeof value.$ref === 'string')
        .map((value) => `"${(value as Json).$ref as string}"`)
      operations.push({
        method,
        path,
        operation,
        parameters,
        schema: isSwagger2
          ? swagger2Schema(parameters, described)
          : openapi3Schema(parameters, requestBody, follow, described),
        unresolved,
        id: namespace === undefined ? name : `${namespace}.${name}`,
        name,
        operationId,
      })
    }
  }
  return operations
}

/**
 * Every operation's schema with the `$ref`s of the dereferenced `document` copied inline, or
 * undefined when a tool would pass MAX_PARAMETER_VALUES or MAX_PARAMETER_DEPTH or all of them
 * MAX_SPEC_PARAMETER_VALUES.
 */
function inlineAll(operations: readonly Operation[], document: Json): JsonSchema[] | undefined {
  let specLeft = MAX_SPEC_PARAMETER_VALUES
  const schemas: JsonSchema[] = []
  for (const { schema } of operations) {
    const inlined = inlineWithin(schema, document, specLeft)
    if (typeof inlined !== 'object') return undefined
    specLeft -= inlined.values
    schemas.push(inlined.schema)
  }
  return schemas
}

/** The tools of `operations` with their parameters `schemas`; `cuts[at]`: the cut's warning. */
function toolsOf(
  operations: readonly Operation[],
  schemas: readonly JsonSchema[],
  cuts: ReadonlyArray<string | undefined>,
  context: ImportContext,
): Tool[] {
  return operations.map((entry, record) => {
    const { method, path, operation, parameters, unresolved, id, name, operationId } = entry
    const schema = schemas[record]
    const cut = cuts[record]
    if (cut !== undefined) addWarning(context, record, cut)
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
    if (context.namespace !== undefined) tool.namespace = context.namespace
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
      addWarning(
        context,
        record,
        `operationId ${shownName(operationId)} is used as the name ${shownName(name)}`,
      )
    }
    return tool
  })
}

/** How many times one recursive schema is inlined into itself before the recursion is cut. */
const RECURSION_DEPTH = 2

/** A schema with its references copied in, and how many values it holds. */
interface Inlined {
  schema: JsonSchema
  values: number
}

/**
 * `schema` with its references copied in, or what it passed: `tool` (MAX_PARAMETER_VALUES or
 * MAX_PARAMETER_DEPTH) or `spec` (the `specLeft` values the spec may still hold).
 *
 * Circular `$ref`s are left in place by the parser; each is replaced by a copy of its target, up
 * to RECURSION_DEPTH levels of the same reference (a tree of categories keeps two levels of
 * children). A reference still left after that is removed by schema normalisation and reported.
 * The copy is a tree: an object the parser shared between several places (a schema used twice)
 * is copied for each, so it is counted as it is written.
 */
function inlineWithin(
  schema: JsonSchema,
  document: Json,
  specLeft: number,
): Inlined | 'tool' | 'spec' {
  let values = 0
  const visit = (value: unknown, active: ReadonlyMap<string, number>, level: number): unknown => {
    values += 1
    if (values > MAX_PARAMETER_VALUES) throw TOOL_TOO_LARGE
    if (values > specLeft) throw SPEC_TOO_LARGE
    if (typeof value !== 'object' || value === null) return value
    // Deeper than a tool may nest (assertParameterShape).
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

/** How many `$ref` hops followRef takes before it gives up (a chain of references to references). */
const MAX_REF_HOPS = 8

/**
 * A path item, operation, parameter, request body or media type the parser left as a local
 * `$ref` (it does so for a whole referenced object when a schema somewhere inside it is
 * recursive) replaced by its target, so the object's fields are read rather than skipped.
 */
function followRef(
  value: unknown,
  document: Json,
  resolve: (document: Json, ref: string) => unknown = pointer,
): unknown {
  let current = value
  for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
    if (!isObject(current) || typeof current.$ref !== 'string' || !current.$ref.startsWith('#/')) {
      return current
    }
    const { $ref: ref, ...rest } = current
    const target = resolve(document, ref as string)
    if (!isObject(target)) return current
    current = { ...target, ...rest }
  }
  return current
}

function followEach(list: unknown, follow: (value: unknown) => unknown): unknown {
  return Array.isArray(list) ? list.map(follow) : list
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

/** What a property's schema says of itself (`described`: through its `$ref`). */
type Described = (property: Json) => Json

function openapi3Schema(
  parameters: Json[],
  requestBody: unknown,
  follow: (value: unknown) => unknown,
  described: Described,
): JsonSchema {
  const schema = emptyObjectSchema()
  for (const parameter of parameters) {
    let property: Json = isObject(parameter.schema) ? { ...parameter.schema } : {}
    if (!isObject(parameter.schema) && isObject(parameter.content)) {
      const media = Object.values(parameter.content).map(follow).find(isObject)
      if (media && isObject(media.schema)) property = { ...media.schema }
    }
    addProperty(schema, String(parameter.name), property, parameter, described)
  }
  if (isObject(requestBody) && isObject(requestBody.content)) {
    const content = requestBody.content
    const media = follow(content['application/json'] ?? Object.values(content)[0])
    if (isObject(media)) {
      const body: Json = isObject(media.schema) ? { ...media.schema } : {}
      addProperty(schema, 'body', body, requestBody, described)
    }
  }
  return schema
}

function swagger2Schema(parameters: Json[], described: Described): JsonSchema {
  const schema = emptyObjectSchema()
  for (const parameter of parameters) {
    if (parameter.in === 'body') {
      addProperty(
        schema,
        'body',
        isObject(parameter.schema) ? { ...parameter.schema } : {},
        parameter,
        described,
      )
      continue
    }
    const property: Json = {}
    for (const key of SWAGGER2_SCHEMA_KEYS) {
      if (parameter[key] !== undefined) property[key] = parameter[key]
    }
    addProperty(schema, String(parameter.name), property, parameter, described)
  }
  return schema
}

function addProperty(
  schema: JsonSchema,
  name: string,
  property: Json,
  declaration: Json,
  described: Described,
): void {
  const properties = schema.properties as Record<string, Json>
  if (
    typeof declaration.description === 'string' &&
    described(property).description === undefined
  ) {
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
