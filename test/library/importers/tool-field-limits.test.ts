/**
 * Imports refuse a tool of more than MAX_TOOL_TAGS (256) tags or a description longer than
 * MAX_TOOL_DESCRIPTION_CHARS (100,000), naming the record, the tool, the field, its size and the
 * limit. Before round 47 both were bounded only by the 8 MiB of an uploaded tool's line, and not
 * at all in a file given to `toolsel index`: 100,000 tags or a 1 MB description were imported
 * and served. The gateway, which imports an upstream's tools one by one, skips such a tool.
 */
import { describe, expect, it } from 'vitest'
import { importToolsFromText } from '../../../src/library/importers/index.ts'
import {
  MAX_TOOL_DESCRIPTION_CHARS,
  MAX_TOOL_SOURCE_CHARS,
  MAX_TOOL_TAGS,
} from '../../../src/library/tool-id-limit.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const canonical = (tool: object) =>
  JSON.stringify({
    tools: [
      { id: 'ok', name: 'ok', description: 'Fine.', parameters: {} },
      { id: 'big', name: 'big', description: 'Big.', parameters: {}, ...tool },
    ],
  })
const tags = (count: number) => Array.from({ length: count }, (_, at) => `tag${at}`)

describe('tags and descriptions past their limits', () => {
  it('are refused with IMPORT_FAILED naming the record, the tool, the field, its size and the limit', () => {
    const cases: Array<[object, string, string, number, number]> = [
      [
        { tags: tags(100_000) },
        'tags',
        'it has 100,000 tags; a tool has at most 256',
        100_000,
        256,
      ],
      [
        { description: 'd'.repeat(1_000_000) },
        'description',
        "its description is 1,000,000 characters long; a tool's description has at most 100,000",
        1_000_000,
        100_000,
      ],
    ]
    for (const [fields, field, said, size, limit] of cases) {
      const error = expectToolselError(
        () => importToolsFromText(canonical(fields), { fileName: 'tools.json' }),
        'IMPORT_FAILED',
        `tools.json: record 1: tool "big": ${said}: shorten it at the source`,
      )
      expect(error.details).toMatchObject({ record: 1, id: 'big', field, size, limit })
    }
  })

  it('refuse source metadata past MAX_TOOL_SOURCE_CHARS of JSON, as a canonical or Anthropic tool carries it', () => {
    // 300,000 characters of a canonical tool's own source (imported whole before round 48).
    const source = { format: 'canonical', note: 'n'.repeat(300_000) }
    const size = JSON.stringify(source).length
    const error = expectToolselError(
      () => importToolsFromText(canonical({ source }), { fileName: 'tools.json' }),
      'IMPORT_FAILED',
      `tools.json: record 1: tool "big": its source metadata is ${size.toLocaleString('en-US')} characters of JSON; a tool's source has at most 262,144: shorten it at the source`,
    )
    expect(error.details).toMatchObject({ record: 1, id: 'big', field: 'source', size })
    // Anthropic input_examples are kept in source.inputExamples.
    const anthropic = JSON.stringify([
      {
        name: 'ok',
        description: 'Fine.',
        input_schema: { type: 'object' },
        input_examples: Array.from({ length: 20_000 }, (_, at) => ({ query: `example ${at}` })),
      },
    ])
    expectToolselError(
      () => importToolsFromText(anthropic, { fileName: 'tools.json', format: 'anthropic' }),
      'IMPORT_FAILED',
      "a tool's source has at most 262,144",
    )
  })

  it('refuses source metadata nested past what JSON.stringify can write', () => {
    const depth = 20_000
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`
    const text = `{"tools":[{"id":"deep","name":"deep","description":"D.","parameters":{},"source":{"format":"canonical","nested":${deep}}}]}`
    expectToolselError(
      () => importToolsFromText(text, { fileName: 'tools.json' }),
      'IMPORT_FAILED',
      `tools.json: record 0: tool "deep": its source metadata nests too deeply to be written as JSON; a tool's source has at most 262,144: shorten it at the source`,
    )
  })

  it('takes exactly the limits', () => {
    const result = importToolsFromText(
      canonical({
        tags: tags(MAX_TOOL_TAGS),
        description: 'd'.repeat(MAX_TOOL_DESCRIPTION_CHARS),
      }),
      { fileName: 'tools.json' },
    )
    expect(result.tools[1].tags).toHaveLength(MAX_TOOL_TAGS)
    expect(result.tools[1].description).toHaveLength(MAX_TOOL_DESCRIPTION_CHARS)
    const source = { format: 'canonical', note: '' }
    source.note = 'n'.repeat(MAX_TOOL_SOURCE_CHARS - JSON.stringify(source).length)
    const atLimit = importToolsFromText(canonical({ source }), { fileName: 'tools.json' })
    expect(JSON.stringify(atLimit.tools[1].source)).toHaveLength(MAX_TOOL_SOURCE_CHARS)
  })

  it('refuses a ToolBench API repeated in records of ever new categories at the 257th', () => {
    const api = (category: number) => ({
      category_name: `Category ${category}`,
      tool_name: 'Weather',
      api_name: 'forecast',
      api_description: 'Forecast.',
      required_parameters: [],
      optional_parameters: [],
    })
    const records = Array.from({ length: 1_000 }, (_, at) => ({
      query: `query ${at}`,
      query_id: at,
      api_list: [api(at)],
      relevant_APIs: [['Weather', 'forecast']],
    }))
    const error = expectToolselError(
      () =>
        importToolsFromText(JSON.stringify(records), {
          fileName: 'G1.json',
          format: 'toolbench',
        }),
      'IMPORT_FAILED',
      'G1.json: record 256: tool "Weather::forecast" repeated with another category: it has 257 tags; a tool has at most 256',
    )
    expect(error.details).toMatchObject({ record: 256, field: 'tags', size: 257, limit: 256 })
  })

  it('refuses a COLT corpus document repeated with ever new categories at the 257th', () => {
    const lines = Array.from({ length: 1_000 }, (_, at) =>
      JSON.stringify({
        _id: `${at}`,
        title: '',
        text: `category_name:C${at}, tool_name:Weather, api_name:forecast, api_description:Forecast., required_params: [], optional_params: [], return_schema: {}`,
        metadata: {},
      }),
    )
    expectToolselError(
      () =>
        importToolsFromText(lines.join('\n'), {
          fileName: 'corpus.jsonl',
          format: 'beir-corpus',
        }),
      'IMPORT_FAILED',
      'repeated with another category: it has 257 tags; a tool has at most 256',
    )
  })
})
