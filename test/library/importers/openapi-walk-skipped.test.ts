/**
 * An OpenAPI import skips swagger-parser's `$ref` walk when it knows before it that the inline
 * form cannot fit (an operation past MAX_PARAMETER_VALUES) or that the walk would pass
 * MAX_DEREFERENCE_VISITS (a YAML alias in many places), and refuses a tool id past
 * MAX_TOOL_ID_CHARS before any walk. Before round 45 each went through the walk first: ~10 s of
 * CPU for a 1.5 MB file of aliases, for the same tools in the `$defs` form.
 */
import SwaggerParser from '@apidevtools/swagger-parser'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createImportContext } from '../../../src/library/importers/import-context.ts'
import { importOpenapi } from '../../../src/library/importers/openapi-importer.ts'
import { MAX_PARAMETER_VALUES } from '../../../src/library/tool.ts'
import { MAX_TOOL_ID_CHARS } from '../../../src/library/tool-id-limit.ts'
import { expectToolselErrorAsync } from './expect-toolsel-error.ts'
import { busyMs } from '../../helpers/busy-time.ts'
import { oneOperationSpec as spec, schemasUsingNextTwice } from './openapi-spec-builders.ts'

const context = () => createImportContext({ fileName: 'spec.yaml' })

afterEach(() => {
  vi.restoreAllMocks()
})

describe("OpenAPI import: the parser's walk only where it can help", () => {
  it('walks a spec that fits inline, and imports it inline', async () => {
    const dereference = vi.spyOn(SwaggerParser, 'dereference')
    const tools = await importOpenapi(
      spec({ $ref: '#/components/schemas/B' }, { B: { type: 'string', enum: ['x', 'y'] } }),
      context(),
    )
    expect(dereference).toHaveBeenCalledTimes(1)
    expect(tools[0].parameters.properties).toEqual({ q: { type: 'string', enum: ['x', 'y'] } })
  })

  it('skips the walk for an operation past MAX_PARAMETER_VALUES inline: the $defs form, as after it', async () => {
    const big = {
      type: 'integer',
      enum: Array.from({ length: MAX_PARAMETER_VALUES }, (_, at) => at),
    }
    const parsed = spec({ $ref: '#/components/schemas/B' }, { B: big })
    const dereference = vi.spyOn(SwaggerParser, 'dereference')
    const tools = await importOpenapi(parsed, context())
    expect(dereference).not.toHaveBeenCalled()
    expect(tools).toEqual(await importOpenapi(parsed, context(), { form: 'defs' }))
    expect(tools[0].parameters.properties).toEqual({ q: { type: 'integer' } })
  })

  it('refuses a local $ref to nothing as the walk would, where it skips the walk', async () => {
    const big = {
      type: 'integer',
      enum: Array.from({ length: MAX_PARAMETER_VALUES }, (_, at) => at),
    }
    const parsed = spec({ $ref: '#/components/schemas/B' }, { B: big })
    Object.assign(parsed.paths, {
      '/b': { get: { parameters: [{ name: 'q', in: 'query', schema: { $ref: '#/nothing' } }] } },
    })
    const dereference = vi.spyOn(SwaggerParser, 'dereference')
    await expectToolselErrorAsync(
      () => importOpenapi(parsed, context()),
      'IMPORT_FAILED',
      'spec.yaml: not a usable OpenAPI document: Missing $ref pointer "#/nothing"',
    )
    expect(dereference).not.toHaveBeenCalled()
    // Walked, the parser says so itself.
    parsed.components.schemas.B = { type: 'string' } as never
    await expectToolselErrorAsync(
      () => importOpenapi(parsed, context()),
      'IMPORT_FAILED',
      'spec.yaml: not a usable OpenAPI document: Missing $ref pointer "#/nothing". Token "nothing" does not exist.',
    )
    expect(dereference).toHaveBeenCalledTimes(1)
  })

  it('skips the walk for a YAML alias behind a $ref (one array in 900 places)', async () => {
    // As yaml's toJS shares an anchor's value among its aliases.
    const shared = Array.from({ length: 200_000 }, (_, at) => at)
    const parsed = spec(
      { $ref: '#/components/schemas/B' },
      { B: { type: 'integer', enum: Array.from({ length: 900 }, () => shared) } },
    )
    const dereference = vi.spyOn(SwaggerParser, 'dereference')
    const tools = await importOpenapi(parsed, context())
    expect(dereference).not.toHaveBeenCalled()
    expect(tools[0].parameters.properties).toEqual({ q: { type: 'integer' } })
  }, 60_000)

  it('skips the walk of a document it would go through past MAX_DEREFERENCE_VISITS, outside any operation', async () => {
    // 600 places of 20,000 values: 12 M values written out, where the walk's budget is 10 M.
    const shared = Array.from({ length: 20_000 }, (_, at) => at)
    const parsed = spec(
      { $ref: '#/components/schemas/B' },
      { B: { type: 'string' } },
      { 'x-aliases': Array.from({ length: 600 }, () => shared) },
    )
    const dereference = vi.spyOn(SwaggerParser, 'dereference')
    const tools = await importOpenapi(parsed, context())
    expect(dereference).not.toHaveBeenCalled()
    expect(tools).toEqual(await importOpenapi(parsed, context(), { form: 'defs' }))
  }, 60_000)

  it('skips the walk of schemas that each use the next one twice (2^30 visits from 4 KB)', async () => {
    // Before round 46 the parser went through it to MAX_DEREFERENCE_VISITS: 2-3 s of CPU.
    for (const extended of [false, true]) {
      const schemas = schemasUsingNextTwice(30, (name) => (extended ? { description: name } : {}))
      const parsed = spec({ $ref: '#/components/schemas/D0' }, schemas)
      const dereference = vi.spyOn(SwaggerParser, 'dereference')
      let tools: Awaited<ReturnType<typeof importOpenapi>> = []
      const busy = await busyMs(async () => {
        tools = await importOpenapi(parsed, context())
      })
      expect(dereference).not.toHaveBeenCalled()
      expect(busy).toBeLessThan(500)
      expect(tools).toEqual(await importOpenapi(parsed, context(), { form: 'defs' }))
      expect(Object.keys(tools[0].parameters.$defs as object)).toHaveLength(30)
      vi.restoreAllMocks()
    }
  })

  it('refuses an operationId that makes a tool id past MAX_TOOL_ID_CHARS before the walk', async () => {
    const parsed = spec({ type: 'string' }, {})
    const long = 'x'.repeat(1_000_000)
    parsed.paths['/a'].get.operationId = long
    const dereference = vi.spyOn(SwaggerParser, 'dereference')
    const error = await expectToolselErrorAsync(
      () => importOpenapi(parsed, context()),
      'IMPORT_FAILED',
      'spec.yaml: record 0: tool id "xxx',
      `is 1000000 characters long; a tool id has at most ${MAX_TOOL_ID_CHARS} (GET "/a"): shorten the operationId`,
    )
    expect(error.details).toMatchObject({ record: 0, maxToolIdChars: MAX_TOOL_ID_CHARS })
    expect(error.message.length).toBeLessThan(1000)
    expect(dereference).not.toHaveBeenCalled()
  })
})
