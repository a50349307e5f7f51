/**
 * `leastDereferenceVisits` is a lower bound of the visits swagger-parser's `$ref` walk makes (the
 * importer skips the walk when it passes the walk's budget, so it must never count more than the
 * walk would), close enough to it that schemas using each other twice are caught.
 */
import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it } from 'vitest'
import { leastDereferenceVisits } from '../../../src/library/importers/dereference-visits.ts'
import { oneOperationSpec as spec, schemasUsingNextTwice } from './openapi-spec-builders.ts'

type Json = Record<string, unknown>

/** The visits the parser's walk of `document` makes, counted by its path matcher. */
async function parserVisits(document: Json): Promise<number> {
  let visits = 0
  await SwaggerParser.dereference(structuredClone(document) as never, {
    resolve: { external: false },
    dereference: {
      circular: 'ignore',
      excludedPathMatcher: () => {
        visits += 1
        return false
      },
    },
  })
  return visits
}

describe('leastDereferenceVisits', () => {
  it('counts schemas used twice at each level within a factor 3 of the walk, never over it', async () => {
    for (const members of [() => ({}), () => ({ description: 'x' })]) {
      for (const used of [{ $ref: '#/components/schemas/D0' }, { type: 'string' }]) {
        const document = spec(used, schemasUsingNextTwice(12, members))
        const least = leastDereferenceVisits(document)
        const visits = await parserVisits(document)
        expect(least).toBeLessThanOrEqual(visits)
        expect(least * 3).toBeGreaterThanOrEqual(visits)
        expect(least).toBeGreaterThan(2 ** 12)
      }
    }
  })

  it('counts nothing it is not sure of: recursive schemas, a pointer through a $ref', async () => {
    const recursive = spec(
      { $ref: '#/components/schemas/Node' },
      {
        Node: {
          type: 'object',
          properties: {
            left: { $ref: '#/components/schemas/Node' },
            right: { $ref: '#/components/schemas/Node', description: 'r' },
            via: { $ref: '#/components/schemas/Alias/properties' },
          },
        },
        Alias: { $ref: '#/components/schemas/Node' },
      },
    )
    const least = leastDereferenceVisits(recursive)
    expect(least).toBeLessThanOrEqual(await parserVisits(recursive))
    expect(least).toBeGreaterThan(0)
  })

  it('stays under the walk for shared, merged and primitive targets', async () => {
    const schemas: Json = {
      S: { type: 'object', properties: { x: { $ref: '#/components/schemas/T' } } },
      T: { type: 'string', enum: ['a', 'b', 'c'] },
      U: {
        allOf: [
          { $ref: '#/components/schemas/S', description: 'merged', properties: { y: {} } },
          { $ref: '#/components/schemas/S' },
          { $ref: '#/info/title' },
        ],
      },
    }
    for (const used of ['S', 'T', 'U']) {
      const document = spec({ $ref: `#/components/schemas/${used}` }, schemas)
      expect(leastDereferenceVisits(document)).toBeLessThanOrEqual(await parserVisits(document))
    }
  })
})
