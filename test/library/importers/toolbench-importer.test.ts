import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { importToolsFromFile, importToolsFromText } from '../../../src/library/importers/index.ts'
import { toolbenchParameters } from '../../../src/library/importers/toolbench-parameters.ts'
import { dataPath, hasData } from '../../helpers/data-dir.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const STABLE = 'toolbench/StableToolBench/solvable_queries/test_instruction'
const api = (overrides: Record<string, unknown> = {}) => ({
  category_name: 'Data',
  tool_name: 'Weather',
  api_name: 'Forecast',
  api_description: 'Daily forecast.',
  required_parameters: [{ name: 'city', type: 'STRING', description: 'City name', default: '' }],
  optional_parameters: [{ name: 'days', type: 'NUMBER', description: '', default: '3' }],
  method: 'GET',
  ...overrides,
})
const record = (apis: unknown[]) => ({
  query_id: 1,
  query: 'q',
  api_list: apis,
  'relevant APIs': [],
})

describe('importToolbench', () => {
  it('turns each API into a tool with id tool_name::api_name and a JSON Schema', () => {
    const { tools, format } = importToolsFromText(JSON.stringify([record([api()])]), {
      fileName: 'g1.json',
    })
    expect(format).toBe('toolbench')
    expect(tools).toEqual([
      {
        id: 'Weather::Forecast',
        name: 'Forecast',
        description: 'Daily forecast.',
        parameters: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'City name' },
            days: { type: 'number', default: '3' },
          },
          required: ['city'],
        },
        namespace: 'Weather',
        tags: ['Data'],
        source: {
          format: 'toolbench',
          file: 'g1.json',
          record: 0,
          category: 'Data',
          method: 'GET',
        },
      },
    ])
  })

  it('merges an API listed in several records, collecting categories and warning on conflicts', () => {
    const text = JSON.stringify([
      record([api()]),
      record([api({ category_name: 'Weather' })]),
      record([api({ category_name: 'Data', api_description: 'Changed.' })]),
    ])
    const { tools, warnings } = importToolsFromText(text, { fileName: 'g1.json' })
    expect(tools).toHaveLength(1)
    expect(tools[0].description).toBe('Daily forecast.')
    expect(tools[0].tags).toEqual(['Data', 'Weather'])
    expect(warnings).toEqual([
      'g1.json: record 2: "Weather::Forecast" differs from its first definition (record 0) in description; kept the first',
    ])
  })

  it('reads JSON Lines and reports bad fields by line and path', () => {
    const lines = [
      JSON.stringify(record([api()])),
      JSON.stringify(record([api({ api_name: undefined })])),
    ]
    expectToolselError(
      () => importToolsFromText(lines.join('\n'), { fileName: 'q.jsonl' }),
      'IMPORT_FAILED',
      'q.jsonl: line 2: field "api_list[0].api_name": expected a non-empty string, got nothing (the field is missing)',
    )
  })

  it('rejects a record without api_list and a parameter with a bad name', () => {
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify([record([api()]), { query: 'q' }]), {
          format: 'toolbench',
        }),
      'IMPORT_FAILED',
      '<input>: record 1: field "api_list": expected an array, got nothing',
    )
    const badParameter = api({ required_parameters: [{ name: 7, type: 'STRING' }] })
    expectToolselError(
      () => importToolsFromText(JSON.stringify([record([badParameter])])),
      'IMPORT_FAILED',
      'record 0: field "api_list[0].required_parameters[0].name": expected a non-empty string, got 7',
    )
  })
})

describe('toolbenchParameters', () => {
  it('maps ToolBench types case-insensitively, keeping hints, descriptions and defaults', () => {
    const parameters = [
      { name: 'a', type: 'string' },
      { name: 'b', type: 'NUMBER', default: 5 },
      { name: 'c', type: 'BOOLEAN', default: false },
      { name: 'd', type: 'ENUM', description: 'One of x, y' },
      { name: 'e', type: 'ARRAY' },
      { name: 'f', type: 'OBJECT' },
      { name: 'g', type: 'DATE (YYYY-MM-DD)' },
      { name: 'h', type: 'TIME (24-hour HH:MM)', description: 'Start' },
      { name: 'i', type: 'BINARY' },
      { name: 'j', type: 'GEOPOINT (latitude, longitude)' },
    ]
    const { schema, unknownTypes } = toolbenchParameters(parameters, [])
    expect(schema.properties).toEqual({
      a: { type: 'string' },
      b: { type: 'number', default: 5 },
      c: { type: 'boolean', default: false },
      d: { type: 'string', description: 'One of x, y' },
      e: { type: 'array' },
      f: { type: 'object' },
      g: { type: 'string', format: 'date' },
      h: { type: 'string', description: 'Start (24-hour HH:MM)' },
      i: { type: 'string', format: 'binary' },
      j: {},
    })
    expect(unknownTypes).toEqual(['GEOPOINT (latitude, longitude)'])
  })

  it('keeps the first of two parameters with one name, even odd names', () => {
    const { schema, duplicateNames } = toolbenchParameters(
      [
        { name: 'id', type: 'STRING', description: 'first' },
        { name: '__proto__', type: 'STRING' },
      ],
      [{ name: 'id', type: 'NUMBER', description: 'second' }],
    )
    expect(Object.keys(schema.properties as object)).toEqual(['id', '__proto__'])
    expect((schema.properties as Record<string, unknown>).id).toEqual({
      type: 'string',
      description: 'first',
    })
    expect(schema.required).toEqual(['id', '__proto__'])
    expect(duplicateNames).toEqual(['id'])
  })
})

/** Measured counts; the StableToolBench ones are the README's "distinct APIs in all api_lists". */
const COUNTS: Array<[string, number]> = [
  [`${STABLE}/G1_instruction.json`, 810],
  [`${STABLE}/G1_category.json`, 364],
  [`${STABLE}/G1_tool.json`, 499],
  [`${STABLE}/G3_instruction.json`, 44],
  ['toolbench/toolplanner/data/retrieval/G3_clear/test.json', 589],
  ['toolbench/ToolBench/data_example/instruction/G1_query.json', 12],
  ['toolbench/ToolBench/data_example/instruction/G3_query.json', 11],
]

describe.skipIf(!hasData('toolbench'))(
  'importToolbench on the ToolBench files (skipped: no shared/data/toolbench)',
  () => {
    it.each(COUNTS)('imports %s as the union of its api_lists (%i APIs)', async (file, count) => {
      const { tools } = await importToolsFromFile(dataPath(file))
      expect(tools).toHaveLength(count)
    })

    it('covers every gold pair of every record, by exact tool and API name', async () => {
      for (const [file] of COUNTS) {
        const { tools } = await importToolsFromFile(dataPath(file))
        const ids = new Set(tools.map((tool) => tool.id))
        const records = JSON.parse(readFileSync(dataPath(file), 'utf8')) as Array<{
          'relevant APIs': string[][]
        }>
        for (const gold of records.flatMap((entry) => entry['relevant APIs'])) {
          expect(ids.has(`${gold[0]}::${gold[1]}`), `${file}: ${gold.join('::')}`).toBe(true)
        }
      }
    })

    it('keeps G1_instruction spot values, merged categories and verbatim names', async () => {
      const { tools, warnings } = await importToolsFromFile(dataPath(STABLE, 'G1_instruction.json'))
      const byId = new Map(tools.map((tool) => [tool.id, tool]))
      const concert = byId.get('TheClique::Songkick concert')
      expect(concert).toMatchObject({
        name: 'Songkick concert',
        description: 'Concert info',
        namespace: 'TheClique',
        tags: ['Data'],
        parameters: { required: ['id_conc'], properties: { id_conc: { type: 'string' } } },
      })
      expect(concert?.source).toMatchObject({
        format: 'toolbench',
        record: 0,
        category: 'Data',
        method: 'GET',
      })
      // The README's example of one API under several categories: 810 APIs, 820 (category, tool, api).
      expect(byId.get('👋 Demo Project::Get Product')?.tags?.sort()).toEqual([
        'Events',
        'Media',
        'Sports',
      ])
      expect(tools.reduce((sum, tool) => sum + (tool.tags?.length ?? 0), 0)).toBe(820)
      expect(byId.has('Riddlie ::Riddle by ID')).toBe(true)
      expect(warnings).toHaveLength(4)
      expect(warnings[0]).toContain(
        '"Reqres - dont change!::User by id" lists parameter "array[]" twice',
      )
    })
  },
)
