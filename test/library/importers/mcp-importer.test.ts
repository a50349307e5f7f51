import { describe, expect, it } from 'vitest'
import { importToolsFromText } from '../../../src/library/importers/index.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

/** A tools/list result as the MCP specification (2025-06-18) shows it, trimmed. */
const LIST_RESULT = {
  tools: [
    {
      name: 'get_weather',
      title: 'Weather Information Provider',
      description: 'Get current weather information for a location',
      inputSchema: {
        type: 'object',
        properties: { location: { type: 'string', description: 'City name or zip code' } },
        required: ['location'],
      },
      annotations: { readOnlyHint: true },
    },
    { name: 'ping', inputSchema: { type: 'object' } },
  ],
  nextCursor: 'next-page-cursor',
}

describe('importMcp', () => {
  it('namespaces tools by the file name and keeps title and annotations in source', () => {
    const { tools, warnings, format } = importToolsFromText(JSON.stringify(LIST_RESULT), {
      fileName: 'servers/weather.json',
    })
    expect(format).toBe('mcp')
    expect(tools[0]).toEqual({
      id: 'weather.get_weather',
      name: 'get_weather',
      description: 'Get current weather information for a location',
      parameters: LIST_RESULT.tools[0].inputSchema,
      namespace: 'weather',
      source: {
        format: 'mcp',
        file: 'weather.json', // the base name; messages keep the path as given
        record: 0,
        title: 'Weather Information Provider',
        annotations: { readOnlyHint: true },
      },
    })
    expect(tools[1]).toMatchObject({ id: 'weather.ping', description: '' })
    expect(warnings).toEqual([
      'servers/weather.json: the tool list is paginated (nextCursor); only this page was imported',
    ])
  })

  it('reads a whole JSON-RPC response and prefers the namespace option', () => {
    const response = { jsonrpc: '2.0', id: 1, result: { tools: LIST_RESULT.tools } }
    const { tools } = importToolsFromText(JSON.stringify(response), {
      fileName: 'x.json',
      namespace: 'wx',
    })
    expect(tools.map((tool) => tool.id)).toEqual(['wx.get_weather', 'wx.ping'])
  })

  it('uses bare names, with a warning, when nothing names the server', () => {
    const { tools, warnings } = importToolsFromText(
      JSON.stringify({ tools: [LIST_RESULT.tools[1]] }),
    )
    expect(tools[0].id).toBe('ping')
    expect(tools[0].namespace).toBeUndefined()
    expect(warnings[0]).toContain('<input>: no namespace')
  })

  it('fails on a JSON-RPC error response, quoting the error', () => {
    const response = { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }
    expectToolselError(
      () => importToolsFromText(JSON.stringify(response), { fileName: 'x.json' }),
      'IMPORT_FAILED',
      'x.json: field "error": the file is a JSON-RPC error response, not a tool list: Method not found',
    )
  })

  it('requires an object inputSchema and a name', () => {
    const tools = [
      { name: 'a', inputSchema: { type: 'object' } },
      { name: 'b', inputSchema: { type: 'array' } },
    ]
    expectToolselError(
      () => importToolsFromText(JSON.stringify({ tools }), { fileName: 's.json' }),
      'IMPORT_FAILED',
      's.json: record 1: field "inputSchema.type": expected one of "object", got "array"',
    )
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify({ tools: [{ inputSchema: { type: 'object' } }] }), {
          format: 'mcp',
        }),
      'IMPORT_FAILED',
      'record 0: field "name": expected a non-empty string',
    )
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }), {
          fileName: 's.json',
        }),
      'IMPORT_FAILED',
      's.json: field "result.tools": expected an array of MCP tools',
    )
  })

  it('rejects two tools with one name', () => {
    expectToolselError(
      () =>
        importToolsFromText(
          JSON.stringify({ tools: [LIST_RESULT.tools[1], LIST_RESULT.tools[1]] }),
          { fileName: 's.json' },
        ),
      'DUPLICATE_TOOL_ID',
      's.json: tool id "s.ping" appears twice (record 0 and record 1)',
    )
  })
})
