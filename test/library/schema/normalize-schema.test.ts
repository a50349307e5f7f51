import { readdir } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { importToolsFromPath } from '../../../src/library/importers/index.ts'
import { normalizeToolSchema } from '../../../src/library/schema/normalize-schema.ts'
import { schemaErrors } from '../../../src/library/schema/validate-schema.ts'

describe('normalizeToolSchema', () => {
  it('returns a valid schema unchanged (the same object)', () => {
    const schema = { type: 'object', properties: { a: { type: ['string', 'null'] } } }
    const result = normalizeToolSchema(schema)
    expect(result.schema).toBe(schema)
    expect(result.changes).toEqual([])
  })

  it('maps Python, Java and Gemini type names at any depth and reports each change', () => {
    const schema = {
      type: 'dict',
      properties: {
        a: { type: 'float' },
        b: { type: 'tuple', items: [{ type: 'str' }, { type: 'Integer' }] },
        c: { type: 'any', description: 'anything' },
        d: { anyOf: [{ type: 'HashMap' }, { type: 'NONE' }] },
        e: { type: 'ArrayList<String>' },
        f: { type: 'String[]' },
        g: { type: ['int', 'null'] },
        h: { type: 'Widget' },
      },
    }
    const { schema: normalized, changes } = normalizeToolSchema(schema)
    expect(normalized).toEqual({
      type: 'object',
      properties: {
        a: { type: 'number' },
        b: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
        c: { description: 'anything' },
        d: { anyOf: [{ type: 'object' }, { type: 'null' }] },
        e: { type: 'array' },
        f: { type: 'array' },
        g: { type: ['integer', 'null'] },
        h: {},
      },
    })
    expect(changes).toEqual([
      'type: "dict" → "object"',
      'properties.a.type: "float" → "number"',
      'properties.b.type: "tuple" → "array"',
      'properties.b.items[0].type: "str" → "string"',
      'properties.b.items[1].type: "Integer" → "integer"',
      'properties.c.type: "any" → removed (any value)',
      'properties.d.anyOf[0].type: "HashMap" → "object"',
      'properties.d.anyOf[1].type: "NONE" → "null"',
      'properties.e.type: "ArrayList<String>" → "array"',
      'properties.f.type: "String[]" → "array"',
      'properties.g.type: ["int","null"] → ["integer","null"]',
      'properties.h.type: "Widget" → removed (any value)',
    ])
    expect(schema.type).toBe('dict') // the input is not modified
    expect(schemaErrors(normalized)).toEqual([])
  })

  it('moves required: true into the parent list, rewrites nullable and file, adds the root type', () => {
    const { schema, changes } = normalizeToolSchema({
      properties: {
        a: { type: 'string', required: true },
        b: { type: 'string', required: false, nullable: true },
        c: { type: 'file' },
      },
    })
    expect(schema).toEqual({
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: ['string', 'null'] },
        c: { type: 'string', format: 'binary' },
      },
      required: ['a'],
    })
    expect(changes).toEqual([
      'properties.a.required: true → "a" in required',
      'properties.b.required: false → removed',
      'properties.b.nullable: true → "null" in type',
      'properties.c.type: "file" → "string"',
      'type: missing → "object" (function parameters are an object)',
    ])
  })

  it('keeps $refs that resolve inside the schema', () => {
    const schema = {
      type: 'object',
      properties: { node: { $ref: '#/$defs/node' } },
      $defs: { node: { type: 'object' } },
    }
    expect(normalizeToolSchema(schema).changes).toEqual([])
  })

  it("rewrites $refs to an inherited member or with a lone '%' as not resolving (they threw or resolved before)", () => {
    const schema = {
      type: 'object',
      properties: {
        inherited: { $ref: '#/constructor' },
        percent: { $ref: '#/$defs/100%' },
      },
      $defs: { node: { type: 'object' } },
    }
    const { changes } = normalizeToolSchema(schema)
    expect(changes).toHaveLength(2)
    expect(changes.join('\n')).toMatch(/properties\.inherited[\s\S]*properties\.percent/)
  })
})

describe('schemaErrors (ajv)', () => {
  it('names what is invalid', () => {
    expect(schemaErrors({ type: 'object', properties: { a: { type: 'string' } } })).toEqual([])
    expect(schemaErrors({ type: 'object', required: 'a' })).toEqual(['/required must be array'])
    expect(schemaErrors({ type: 'object', properties: { a: { enum: 3 } } })).toEqual([
      '/properties/a/enum must be array',
    ])
  })

  it('checks 2020-12 schemas against their own meta-schema', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { point: { type: 'array', prefixItems: [{ type: 'number' }] } },
    }
    expect(schemaErrors(schema)).toEqual([])
  })

  it('every tool of every format fixture has a valid schema after import', async () => {
    const dir = new URL('../../fixtures/formats/', import.meta.url).pathname
    const files = (await readdir(dir)).filter((name) => !name.endsWith('.md'))
    expect(files.length).toBeGreaterThanOrEqual(8)
    const result = await importToolsFromPath(dir, { onDuplicate: 'rename' })
    expect(result.tools.length).toBeGreaterThan(30)
    expect(result.invalidSchemas).toEqual([])
    for (const tool of result.tools) expect(schemaErrors(tool.parameters), tool.id).toEqual([])
  })
})
