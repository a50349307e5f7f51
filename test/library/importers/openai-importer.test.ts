import { describe, expect, it } from 'vitest'
import { importToolsFromText } from '../../../src/library/importers/index.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: true,
  },
}

describe('importOpenai', () => {
  it('imports Chat Completions tools with id = name', () => {
    const { tools, format } = importToolsFromText(JSON.stringify([WEATHER]), {
      fileName: 'tools.json',
    })
    expect(format).toBe('openai')
    expect(tools).toEqual([
      {
        id: 'get_weather',
        name: 'get_weather',
        description: 'Get the weather for a city.',
        parameters: WEATHER.function.parameters,
        source: { format: 'openai', file: 'tools.json', record: 0, strict: true },
      },
    ])
  })

  it('prefixes ids with a namespace, reads {tools} and the flat Responses shape', () => {
    const flat = { type: 'function', name: 'send', description: 'Send it.' }
    const { tools } = importToolsFromText(JSON.stringify({ tools: [WEATHER, flat] }), {
      namespace: 'acme',
    })
    expect(tools.map((tool) => [tool.id, tool.namespace])).toEqual([
      ['acme.get_weather', 'acme'],
      ['acme.send', 'acme'],
    ])
    expect(tools[1].parameters).toEqual({ type: 'object', properties: {} })
  })

  it('skips built-in tools with a warning', () => {
    const { tools, warnings } = importToolsFromText(
      JSON.stringify([WEATHER, { type: 'web_search' }]),
      {
        fileName: 't.json',
      },
    )
    expect(tools).toHaveLength(1)
    expect(warnings).toEqual([
      't.json: record 1: skipped a built-in "web_search" tool (only functions are imported)',
    ])
  })

  it('names the record and field of bad definitions', () => {
    const noParameters = { type: 'function', function: { name: 'x', parameters: 'none' } }
    expectToolselError(
      () => importToolsFromText(JSON.stringify([WEATHER, noParameters]), { fileName: 't.json' }),
      'IMPORT_FAILED',
      't.json: record 1: field "function.parameters": expected an object, got "none"',
    )
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify([WEATHER, { type: 7 }]), {
          format: 'openai',
          fileName: 't.json',
        }),
      'IMPORT_FAILED',
      't.json: record 1: field "type": expected a string such as "function", got 7',
    )
  })

  it('rejects a function defined twice', () => {
    expectToolselError(
      () => importToolsFromText(JSON.stringify([WEATHER, WEATHER]), { fileName: 't.json' }),
      'DUPLICATE_TOOL_ID',
      't.json: tool id "get_weather" appears twice (record 0 and record 1)',
    )
  })
})
