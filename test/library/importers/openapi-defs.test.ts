/**
 * An OpenAPI spec's shared schemas kept in each tool's `$defs` (the form an import falls back to
 * when copying the `$ref`s inline passes the limits: DocuSign, Microsoft Graph), on a spec with a
 * recursive schema and a shared one (test/fixtures/formats/folders-openapi.json): what the
 * tools hold, that ajv checks the definitions, and that BM25 indexes the same text as for the
 * inline form the spec imports in.
 */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { importTools } from '../../../src/library/importers/index.ts'
import { createImportContext } from '../../../src/library/importers/import-context.ts'
import { normalizeSchemas } from '../../../src/library/importers/import-tools.ts'
import { importOpenapi } from '../../../src/library/importers/openapi-importer.ts'
import { SharedSchemas, type DefsPlan } from '../../../src/library/importers/openapi-defs.ts'
import { schemaErrors } from '../../../src/library/schema/validate-schema.ts'
import type { Tool } from '../../../src/library/tool.ts'
import { toolToBm25Document, enumValueText } from '../../../src/retrieve/bm25/bm25-document.ts'
import { busyMs, busyMsSync } from '../../helpers/busy-time.ts'
import { oneOperationSpec } from './openapi-spec-builders.ts'

const FIXTURE = new URL('../../fixtures/formats/folders-openapi.json', import.meta.url)

/** The fixture's tools in `$defs` form, normalised as an import does. */
async function defsTools(): Promise<{ tools: Tool[]; warnings: string[] }> {
  const context = createImportContext({ fileName: 'folders-openapi.json' })
  const parsed: unknown = JSON.parse(await readFile(FIXTURE, 'utf8'))
  const tools = await importOpenapi(parsed, context, { form: 'defs' })
  normalizeSchemas(tools, context)
  return { tools, warnings: context.warnings }
}

describe('OpenAPI shared schemas in $defs', () => {
  it('imports a spec that fits the limits inline, as before', async () => {
    const { tools } = await importTools(await readFile(FIXTURE, 'utf8'), {
      fileName: 'folders-openapi.json',
    })
    expect(tools.map((tool) => tool.id)).toEqual(['createFolder', 'shareFolder', 'getPerson'])
    expect(tools.every((tool) => tool.parameters.$defs === undefined)).toBe(true)
    expect(JSON.stringify(tools[0].parameters)).not.toContain('$ref')
  })

  it('keeps each schema a tool reaches once, the recursive one as a $ref into $defs', async () => {
    const { tools, warnings } = await defsTools()
    const [createFolder, shareFolder, getPerson] = tools
    expect(warnings.filter((warning) => !warning.includes('rewritten into JSON Schema'))).toEqual(
      [],
    )
    expect(createFolder.parameters.properties).toEqual({ body: { $ref: '#/$defs/Folder' } })
    expect(createFolder.parameters.required).toEqual(['body'])
    const defs = createFolder.parameters.$defs as Record<string, Record<string, unknown>>
    expect(Object.keys(defs)).toEqual(['Folder', 'Person'])
    expect(defs.Folder.properties).toMatchObject({
      owner: { $ref: '#/$defs/Person' },
      children: { type: 'array', items: { $ref: '#/$defs/Folder' } },
    })
    // Normalised inside $defs too: OpenAPI's nullable.
    expect(defs.Person.properties).toMatchObject({ displayName: { type: ['string', 'null'] } })
    // The shared schema in the other operation's tool, the recursive one not (it is not reached).
    expect(Object.keys(shareFolder.parameters.$defs as object)).toEqual(['Person'])
    expect(shareFolder.parameters.properties).toMatchObject({
      folderId: { type: 'string', description: 'The folder to share' },
      body: { properties: { with: { $ref: '#/$defs/Person' } } },
    })
    expect(getPerson.parameters.$defs).toBeUndefined()
  })

  it('is valid JSON Schema to ajv, which checks the definitions (draft-07 reads $defs as definitions)', async () => {
    const { tools } = await defsTools()
    for (const tool of tools) expect(schemaErrors(tool.parameters)).toEqual([])
    const broken = structuredClone(tools[0].parameters)
    ;(broken.$defs as Record<string, Record<string, unknown>>).Person.type = 'objekt'
    expect(schemaErrors(broken)[0]).toBe(
      '/$defs/Person/type must be equal to one of the allowed values',
    )
  })

  it('gives BM25 the documents of the inline form (references followed four levels deep)', async () => {
    const inline = (
      await importTools(await readFile(FIXTURE, 'utf8'), { fileName: 'folders-openapi.json' })
    ).tools
    const { tools } = await defsTools()
    expect(tools.map(toolToBm25Document)).toEqual(inline.map(toolToBm25Document))
    expect(tools.map((tool) => enumValueText(tool.parameters))).toEqual(
      inline.map((tool) => enumValueText(tool.parameters)),
    )
    // Nested names and enum values are in it: the walk went into $defs.
    expect(toolToBm25Document(tools[0]).parameters).toContain('Sign-in address')
    expect(enumValueText(tools[0].parameters)).toBe('red green blue red green blue')
  })
})

describe('OpenAPI $defs form: one object in many places (a YAML alias)', () => {
  // Round 44 (hard41): YAML aliases make one object of many places (toJS shares it); a schema
  // behind a $ref with 900 aliases of a 200,000-value array was scanned in every place (180 M
  // values: 14-70 s of CPU from a 1.5 MB file), though past 2 x MAX_PARAMETER_VALUES no tool may
  // keep it. Now the scan stops there and the reference is cut to its type.
  it('stops scanning a schema once no tool may hold it, and cuts it to its type', async () => {
    const big = Array.from({ length: 200_000 }, (_, at) => at)
    const parsed = oneOperationSpec(
      { $ref: '#/components/schemas/B' },
      { B: { type: 'integer', enum: Array.from({ length: 900 }, () => big) } },
    )
    const context = createImportContext({ fileName: 'aliases.yaml' })
    let tools: Tool[] = []
    // Busy time, not wall time: a loaded machine's waits are not the work (helpers/busy-time.ts).
    const busy = await busyMs(async () => {
      tools = await importOpenapi(parsed, context, { form: 'defs' })
    })
    expect(busy).toBeLessThan(5000)
    expect(tools).toHaveLength(1)
    expect(tools[0].parameters.properties).toEqual({ q: { type: 'integer' } })
  }, 60_000)

  // Round 46 (hard46): many names aliasing one schema (`S0: &a {…}`, `S1: *a`, …), each
  // referenced once, were scanned once per name: 999 names of a 199,990-value enum, 200 M values
  // from a 1.3 MB file. Now one scan per object.
  it('scans an object that many names alias once, for the same tools', async () => {
    const schema = { type: 'integer', enum: Array.from({ length: 150_000 }, (_, at) => at) }
    const names = Array.from({ length: 600 }, (_, at) => `S${at}`)
    const parsed = {
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: {
        '/a': {
          post: {
            operationId: 'a',
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: Object.fromEntries(
                      names.map((name) => [name, { $ref: `#/components/schemas/${name}` }]),
                    ),
                  },
                },
              },
            },
            responses: { '200': { description: 'ok' } },
          },
        },
      },
      components: { schemas: Object.fromEntries(names.map((name) => [name, schema])) },
    }
    const shared = new SharedSchemas(parsed)
    let plan: DefsPlan | undefined
    // 90 M values scanned before (about 4 s of CPU); 150,000 now.
    const busy = busyMsSync(() => {
      plan = shared.plan(parsed.paths['/a'].post.requestBody.content['application/json'].schema)
    })
    expect(busy).toBeLessThan(1000)
    expect(plan!.reached[0]).toHaveLength(600)
    // Each name its own definition, of the schema's size: 600 x 150,003 and the root's.
    expect(plan!.sizes.at(-1)).toBeGreaterThan(600 * 150_000)
    const tools = await importOpenapi(parsed, createImportContext({ fileName: 'aliases.yaml' }))
    expect(tools[0].parameters.properties).toMatchObject({
      body: { type: 'object', properties: { S0: { type: 'integer' } } },
    })
  }, 60_000)
})
