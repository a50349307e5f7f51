/**
 * What an import may expand to: an OpenAPI spec's `$ref`s resolved (the parser's walk, our
 * inlining of the parameters), and one tool's parameters in any format. Before round 21 a spec of
 * 16 levels of schemas that each use the next twice took 0.7 s, 18 levels 1.9 s and 30 never
 * ended; now each limit answers IMPORT_FAILED saying what was too large.
 */
import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it, vi } from 'vitest'
import { importTools } from '../../../src/library/importers/index.ts'
import {
  MAX_DEREFERENCE_VISITS,
  MAX_SPEC_PARAMETER_VALUES,
} from '../../../src/library/importers/openapi-importer.ts'
import { MAX_PARAMETER_KEYS, MAX_PARAMETER_VALUES } from '../../../src/library/tool.ts'
import { expandsOnImport, IN_PROCESS_MAX_OBJECTS } from '../../../src/store/library-lifecycle.ts'
import {
  groupedTool,
  postSpec,
  refFanOut as fanOutSpec,
  sharedSchemaSpec,
  wideTool,
} from '../../helpers/oversized-tools.ts'
import { expectToolselErrorAsync } from './expect-toolsel-error.ts'

type Json = Record<string, unknown>

const refFanOut = (levels: number) => JSON.stringify(fanOutSpec(levels))

/**
 * These imports are CPU work only, up to ~10 s of CPU each (the largest: parsing 20 MB of JSON
 * and the parser's walk of 1.5 M values); on 2 cores at load 20-25 a test gets a tenth of a core
 * or less: the last one took 98 s so, run as a script of its own (round 43; it failed at its
 * 60 s in round 42's mid run). The bound is for a walk that never ends (30 levels never did
 * before round 21), not for speed.
 */
const CPU_BOUND_MS = 300_000

describe('the size an OpenAPI import expands to', { timeout: CPU_BOUND_MS }, () => {
  it('still imports a fan-out that stays under the limits, as a tree', async () => {
    const result = await importTools(refFanOut(10))
    const leaves = JSON.stringify(result.tools[0].parameters).match(/"type":"string"/g)
    expect(leaves).toHaveLength(2 ** 10)
  })

  it('keeps the schemas of a fan-out past MAX_PARAMETER_VALUES in $defs, each once (cut in rounds 22-26)', async () => {
    // 2^16 leaves as a tree (Azure's network specs, QuickSight, InfluxData and Sinao have real
    // tools like it): 17 schemas in $defs, no cut.
    const result = await importTools(refFanOut(16), { fileName: 'fan.json' })
    expect(result.tools.map((tool) => tool.id)).toEqual(['x'])
    expect(result.warnings.filter((warning) => warning.includes('keep only'))).toEqual([])
    const parameters = result.tools[0].parameters
    expect(Object.keys(parameters.$defs as object)).toHaveLength(17)
    expect(parameters.properties).toEqual({ body: { $ref: '#/$defs/L16' } })
    expect((parameters.$defs as Record<string, unknown>).L3).toEqual({
      type: 'object',
      properties: { a: { $ref: '#/$defs/L2' }, b: { $ref: '#/$defs/L2' } },
    })
    expect(result.invalidSchemas).toEqual([])
  })

  it('cuts a tool past MAX_PARAMETER_VALUES even in $defs form at the deepest reference level that fits', async () => {
    // A chain of 10 schemas of 15,003 values each: 150,000 in $defs; 6 fit.
    const schemas: Record<string, unknown> = {}
    for (let link = 1; link <= 10; link += 1) {
      schemas[`S${link}`] = {
        type: 'object',
        description: `link ${link}`,
        properties: {
          code: { type: 'string', enum: Array.from({ length: 15_000 }, String) },
          ...(link < 10 && { next: { $ref: `#/components/schemas/S${link + 1}` } }),
        },
      }
    }
    const result = await importTools(
      JSON.stringify(postSpec({ $ref: '#/components/schemas/S1' }, schemas)),
      { fileName: 'chain.json' },
    )
    const cut = result.warnings.filter((warning) => warning.includes('keep only'))
    expect(cut).toEqual([
      'chain.json: record 0: POST /x: with the schemas it references in "$defs" its parameters hold more than 100,000 JSON values or nest more than 64 levels, so schemas more than 6 references deep keep only their type and description',
    ])
    const defs = result.tools[0].parameters.$defs as Record<string, Record<string, Json>>
    expect(Object.keys(defs)).toEqual(['S1', 'S2', 'S3', 'S4', 'S5', 'S6'])
    expect(defs.S6.properties.next).toEqual({ type: 'object', description: 'link 7' })
  })

  it('cuts a tool whose $defs would hold more than MAX_PARAMETER_KEYS schemas', async () => {
    // A chain of 2,100 schemas, each referencing the next: small, but more definitions than one
    // object may have members (and 2,100 levels deep inlined).
    const links = MAX_PARAMETER_KEYS + 52
    const schemas: Record<string, unknown> = {}
    for (let link = 1; link <= links; link += 1) {
      schemas[`S${link}`] = {
        type: 'object',
        properties: link < links ? { next: { $ref: `#/components/schemas/S${link + 1}` } } : {},
      }
    }
    const result = await importTools(
      JSON.stringify(postSpec({ $ref: '#/components/schemas/S1' }, schemas)),
      { fileName: 'chain.json' },
    )
    expect(Object.keys(result.tools[0].parameters.$defs as object)).toHaveLength(MAX_PARAMETER_KEYS)
    expect(result.warnings.filter((warning) => warning.includes('keep only'))).toHaveLength(1)
  })

  it('refuses a tool that holds more than MAX_PARAMETER_VALUES values even cut, naming it', async () => {
    const spec = postSpec(
      {
        type: 'object',
        properties: {
          v: { type: 'string', enum: Array.from({ length: MAX_PARAMETER_VALUES }, String) },
        },
      },
      {},
    )
    const error = await expectToolselErrorAsync(
      () => importTools(JSON.stringify(spec), { fileName: 'enum.json' }),
      'IMPORT_FAILED',
      'Tool "x": its parameters hold more than 100,000 JSON values',
      'even with the schemas it references cut to their type (POST /x)',
    )
    expect(error.details).toMatchObject({ id: 'x', maxValues: MAX_PARAMETER_VALUES })
  })

  it("imports an exponential spec in $defs form once the parser's walk passes MAX_DEREFERENCE_VISITS (30 levels never ended)", async () => {
    const result = await importTools(refFanOut(30), { fileName: 'fan.json' })
    expect(Object.keys(result.tools[0].parameters.$defs as object)).toHaveLength(31)
    expect(MAX_DEREFERENCE_VISITS).toBeLessThan(2 ** 30)
  })

  it('imports a spec of 1.2 M values together (Xero accounting: 1.19 M, refused before round 23)', async () => {
    // One schema of about 40,000 values in objects of 1,000 members, used by 30 operations.
    const spec = sharedSchemaSpec(
      30,
      groupedTool(20, 1000)[0].parameters as Record<string, unknown>,
    )
    const imported = await importTools(JSON.stringify(spec), { fileName: 'xero-sized.json' })
    expect(imported.tools).toHaveLength(30)
    // Inline, as before: the form function-calling APIs take best.
    expect(imported.tools.every((tool) => tool.parameters.$defs === undefined)).toBe(true)
  })

  it('keeps the shared schema in $defs and cuts the last tools when the operations together pass MAX_SPEC_PARAMETER_VALUES', async () => {
    // One schema of 40,063 values, under the tool limit, used by enough operations to pass the
    // spec's limit together (1,500,000: 38 operations, 1.52 M; refused in rounds 21-26).
    const operations = Math.ceil(MAX_SPEC_PARAMETER_VALUES / 40_063)
    const spec = sharedSchemaSpec(
      operations,
      groupedTool(20, 1000)[0].parameters as Record<string, unknown>,
    )
    const result = await importTools(JSON.stringify(spec), { fileName: 'wide.json' })
    expect(result.tools).toHaveLength(operations)
    const kept = result.tools.filter((tool) => tool.parameters.$defs !== undefined)
    expect(kept).toHaveLength(operations - 1)
    const cut = result.warnings.filter((warning) => warning.includes('keep only'))
    expect(cut).toHaveLength(1)
    expect(cut[0]).toContain(`record ${operations - 1}: POST /op${operations - 1}: `)
    expect(cut[0]).toContain(
      "for the spec's 1,500,000 together), so schemas more than 0 references",
    )
    expect(result.tools.at(-1)!.parameters.properties).toEqual({ body: { type: 'object' } })
  })

  it('refuses a spec whose operations pass MAX_SPEC_PARAMETER_VALUES together without their shared schemas, before the parser walks it', async () => {
    // The same 38 operations, each with the 40,003 values in its own body: nothing to cut, and
    // clear before any `$ref` is expanded. Before round 44 swagger-parser's dereference walked
    // all 1.5 M values first (the import cost 6-9 s of CPU at 20 MB; 1.5-1.8 s now) and the
    // refusal came after it.
    const dereference = vi.spyOn(SwaggerParser, 'dereference')
    const spec = sharedSchemaSpec(1, {})
    const big = wideTool(20_000)[0].parameters as Record<string, unknown>
    const operations = Math.ceil(MAX_SPEC_PARAMETER_VALUES / 40_003)
    spec.paths = Object.fromEntries(
      Array.from({ length: operations }, (_, index) => [
        `/op${index}`,
        { post: { requestBody: { content: { 'application/json': { schema: big } } } } },
      ]),
    )
    await expectToolselErrorAsync(
      () => importTools(JSON.stringify(spec), { fileName: 'wide.json' }),
      'IMPORT_FAILED',
      `wide.json: the parameters of its operations hold more than ${MAX_SPEC_PARAMETER_VALUES.toLocaleString('en-US')} JSON values together before any "$ref" in them is expanded`,
    )
    expect(dereference).not.toHaveBeenCalled()
    dereference.mockRestore()
  })
})

describe('the size of one tool, any format', () => {
  it('refuses a tool with more than MAX_PARAMETER_VALUES values in its parameters', async () => {
    // The root, its type, `properties`, `v`, its type and its enum: six values, then the items.
    const longEnum = (items: number) =>
      JSON.stringify([
        {
          id: 'w',
          name: 'w',
          description: 'long enum',
          parameters: {
            type: 'object',
            properties: { v: { type: 'string', enum: Array.from({ length: items }, String) } },
          },
        },
      ])
    const error = await expectToolselErrorAsync(
      () => importTools(longEnum(MAX_PARAMETER_VALUES - 5)),
      'IMPORT_FAILED',
      'Tool "w": its parameters hold more than 100,000 JSON values; split the tool or simplify its schema.',
    )
    expect(error.details).toMatchObject({ id: 'w', maxValues: MAX_PARAMETER_VALUES })
    const result = await importTools(longEnum(MAX_PARAMETER_VALUES - 6))
    expect(result.tools[0].parameters).toMatchObject({ properties: { v: { type: 'string' } } })
  })

  it('refuses a tool with an object of more than MAX_PARAMETER_KEYS members', async () => {
    // Each read of one tool of 20,000 parameters parsed its line for 40-60 ms (bench/README round 22).
    const error = await expectToolselErrorAsync(
      () => importTools(JSON.stringify(wideTool(MAX_PARAMETER_KEYS + 1))),
      'IMPORT_FAILED',
      'Tool "w": an object in its parameters has more than 2,048 members (2,049); split the tool or group its parameters.',
    )
    expect(error.details).toMatchObject({ id: 'w', maxKeys: MAX_PARAMETER_KEYS })
    const result = await importTools(JSON.stringify(wideTool(MAX_PARAMETER_KEYS)))
    expect(Object.keys(result.tools[0].parameters.properties as object)).toHaveLength(
      MAX_PARAMETER_KEYS,
    )
  })
})

describe('which small uploads are imported in a worker all the same', () => {
  it('sends a body with a $ref or more than IN_PROCESS_MAX_OBJECTS objects to the worker', () => {
    const objects = (count: number) => `[${'{},'.repeat(count - 1)}{}]`
    for (const text of [
      '{"openapi":"3.0.0","paths":{"/a":{"$ref":"#/x"}}}',
      'openapi: 3.0.0\npaths:\n  /a:\n    $ref: "#/x"\n',
      objects(IN_PROCESS_MAX_OBJECTS + 1),
    ]) {
      expect(expandsOnImport(text)).toBe(true)
      // The bytes of the body, also as a view inside a larger buffer.
      const bytes = Buffer.from(`xx${text}`)
      expect(
        expandsOnImport(new Uint8Array(bytes.buffer, bytes.byteOffset + 2, bytes.length - 2)),
      ).toBe(true)
    }
    for (const text of [objects(IN_PROCESS_MAX_OBJECTS), '[{"id":"ref","name":"$re f"}]']) {
      expect(expandsOnImport(text)).toBe(false)
      expect(expandsOnImport(Buffer.from(text))).toBe(false)
    }
    // A view must not see the bytes around it.
    const around = Buffer.from('$ref[{}]$ref')
    expect(expandsOnImport(new Uint8Array(around.buffer, around.byteOffset + 4, 4))).toBe(false)
  })
})
