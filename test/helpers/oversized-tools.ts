/**
 * Tool files at and past the import's size limits, for the import-bound tests and
 * bench/adversarial.ts.
 * @module
 */

/**
 * An OpenAPI document whose schemas each use the one below twice: one operation whose body
 * expands to 2^levels leaves once its `$ref`s are resolved. Before round 21 its import was
 * exponential (16 levels 0.7 s, 30 never ended).
 */
export function refFanOut(levels: number): Record<string, unknown> {
  const schemas: Record<string, unknown> = { L0: { type: 'string' } }
  for (let level = 1; level <= levels; level += 1) {
    const ref = { $ref: `#/components/schemas/L${level - 1}` }
    schemas[`L${level}`] = { type: 'object', properties: { a: ref, b: ref } }
  }
  return postSpec({ $ref: `#/components/schemas/L${levels}` }, schemas)
}

/** An OpenAPI document of one operation, `POST /x` (`x`), whose JSON body is `schema`. */
export function postSpec(
  schema: Record<string, unknown>,
  schemas: Record<string, unknown>,
): Record<string, unknown> {
  return {
    openapi: '3.0.0',
    info: { title: 'oversized', version: '1' },
    paths: {
      '/x': {
        post: {
          operationId: 'x',
          requestBody: { content: { 'application/json': { schema } } },
        },
      },
    },
    components: { schemas },
  }
}

/**
 * An OpenAPI document of `operations` operations, `POST /op<i>` (`op<i>`), whose JSON bodies are
 * all the one schema `Big` (`big`): the spec's values grow with the operations once its `$ref`s
 * are resolved, while each tool stays as large as `big`.
 */
export function sharedSchemaSpec(
  operations: number,
  big: Record<string, unknown>,
): Record<string, unknown> {
  const paths = Object.fromEntries(
    Array.from({ length: operations }, (_, index) => [
      `/op${index}`,
      {
        post: {
          operationId: `op${index}`,
          requestBody: {
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Big' } } },
          },
        },
      },
    ]),
  )
  return {
    openapi: '3.0.0',
    info: { title: 'oversized', version: '1' },
    paths,
    components: { schemas: { Big: big } },
  }
}

/** One canonical tool `w` with `count` string parameters: 2 x count + 3 JSON values. */
export function wideTool(count: number): Array<Record<string, unknown>> {
  return [
    {
      id: 'w',
      name: 'w',
      description: 'wide',
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: count }, (_, index) => [`p${index}`, { type: 'string' }]),
        ),
      },
    },
  ]
}

/**
 * One canonical tool `g` with `groups` object parameters of `perGroup` string parameters each:
 * as wide as MAX_PARAMETER_KEYS allows per object, as many values as MAX_PARAMETER_VALUES.
 */
export function groupedTool(groups: number, perGroup: number): Array<Record<string, unknown>> {
  const [wide] = wideTool(perGroup)
  const group = wide.parameters
  return [
    {
      id: 'g',
      name: 'g',
      description: 'grouped',
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: groups }, (_, index) => [`g${index}`, group]),
        ),
      },
    },
  ]
}

/**
 * One canonical tool `id` of `count` string parameters, each described by `chars` characters
 * ("word word …"): about count x chars bytes as JSON. `description` is the tool's own.
 */
export function describedTool(
  id: string,
  count: number,
  chars: number,
  description = 'described',
): Record<string, unknown> {
  return {
    id,
    name: id,
    description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: count }, (_, index) => [
          `p${index}`,
          { type: 'string', description: 'word '.repeat(Math.floor(chars / 5)) },
        ]),
      ),
    },
  }
}
