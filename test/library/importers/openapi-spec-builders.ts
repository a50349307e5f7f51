/**
 * OpenAPI documents that the importer tests (and bench/openapi-ref-chain.ts) build: a spec of
 * one operation whose query parameter is a given schema, and schemas that each use the next one
 * twice (2^levels values written out, from a few KB).
 * @module
 */

type Json = Record<string, unknown>

/**
 * A spec of one operation (`GET /a`, `a`) whose query parameter `q` is `schema`, with
 * `components.schemas` and `extra`'s top-level members.
 */
export function oneOperationSpec(schema: unknown, schemas: Json, extra: object = {}) {
  return {
    openapi: '3.0.0',
    info: { title: 't', version: '1' },
    paths: {
      '/a': {
        get: {
          operationId: 'a',
          parameters: [{ name: 'q', in: 'query', schema }],
          responses: { '200': { description: 'ok' } },
        },
      },
    },
    components: { schemas },
    ...extra,
  }
}

/**
 * `levels` schemas `D0`…, each an object whose members `a` and `b` reference the next one (the
 * last: a string); `members(name)`: the other members of the reference in member `name` (none:
 * plain references).
 */
export function schemasUsingNextTwice(
  levels: number,
  members: (name: 'a' | 'b') => Json = () => ({}),
): Json {
  const schemas: Json = {}
  for (let level = 0; level < levels; level += 1) {
    const next = (name: 'a' | 'b') =>
      level === levels - 1
        ? { type: 'string' }
        : { $ref: `#/components/schemas/D${level + 1}`, ...members(name) }
    schemas[`D${level}`] = { type: 'object', properties: { a: next('a'), b: next('b') } }
  }
  return schemas
}
