/**
 * Imports refuse a tool whose name, namespace, a tag or MCP title is longer than
 * MAX_TOOL_NAME_CHARS (500): each is repeated in every answer, listing and log line naming the
 * tool. Before round 46 only ids were bounded: a canonical tool of a short id and a 1 MB name, an
 * MCP tool's 1 MB title or a 1 MB tag were imported and served as they were. Every import (files,
 * uploads, the gateway's upstream tools/list) goes through the same check; the gateway, which
 * imports an upstream's tools one by one, skips such a tool with a warning.
 */
import { describe, expect, it } from 'vitest'
import { importToolsFromText } from '../../../src/library/importers/index.ts'
import { upstreamTools } from '../../../src/mcp/gateway/upstream-tools.ts'
import { MAX_TOOL_NAME_CHARS } from '../../../src/library/tool-id-limit.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const canonical = (tool: object) =>
  JSON.stringify({
    tools: [
      { id: 'ok', name: 'ok', description: 'Fine.', parameters: {} },
      { id: 'long', name: 'long', description: 'Long.', parameters: {}, ...tool },
    ],
  })
const limit = `characters long; a tool's name, namespace, tags and title have at most ${MAX_TOOL_NAME_CHARS} characters each: shorten it at the source`

describe('tool names, namespaces, tags and titles longer than 500 characters', () => {
  it('are refused with IMPORT_FAILED naming the record, the tool, the field and the limit', () => {
    const cases: Array<[object, string, number]> = [
      [{ name: 'n'.repeat(1_000_000) }, 'name', 1_000_000],
      [{ namespace: 's'.repeat(MAX_TOOL_NAME_CHARS + 1) }, 'namespace', MAX_TOOL_NAME_CHARS + 1],
      [{ tags: ['a', 't'.repeat(MAX_TOOL_NAME_CHARS + 1)] }, 'tags[1]', MAX_TOOL_NAME_CHARS + 1],
    ]
    for (const [fields, field, length] of cases) {
      const error = expectToolselError(
        () => importToolsFromText(canonical(fields), { fileName: 'tools.json' }),
        'IMPORT_FAILED',
        `tools.json: record 1: tool "long": its ${field} is ${length} ${limit}`,
      )
      expect(error.details).toMatchObject({
        record: 1,
        id: 'long',
        field,
        length,
        maxToolNameChars: MAX_TOOL_NAME_CHARS,
      })
      expect(error.message.length).toBeLessThan(400)
    }
  })

  it("refuses an MCP tool's title past the limit, as the gateway's upstream tools/list is imported", () => {
    const text = JSON.stringify({
      tools: [{ name: 'search', title: 'T'.repeat(100_000), inputSchema: { type: 'object' } }],
    })
    expectToolselError(
      () => importToolsFromText(text, { fileName: 'github.json', format: 'mcp' }),
      'IMPORT_FAILED',
      `github.json: record 0: tool "github.search": its source.title is 100000 ${limit}`,
    )
  })

  it("skips a gateway upstream's tool of a title past the limit, with a warning; serves the others", () => {
    const listed = [
      { name: 'search', title: 'T'.repeat(100_000), inputSchema: { type: 'object' as const } },
      { name: 'get', title: 'Get', inputSchema: { type: 'object' as const } },
    ]
    const { tools, warnings } = upstreamTools('github', listed, [])
    expect(tools.map((tool) => tool.id)).toEqual(['github.get'])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('Upstream "github": skipped tool #0 ("search"):')
    expect(warnings[0]).toContain(`its source.title is 100000 ${limit}`)
    expect(warnings[0].length).toBeLessThan(400)
  })

  it('takes exactly 500, and the longest real ToolBench name (205 characters with its tool)', () => {
    const edge = 'e'.repeat(MAX_TOOL_NAME_CHARS)
    const result = importToolsFromText(
      canonical({
        name: edge,
        namespace: edge,
        tags: [edge],
        source: { format: 'x', title: edge },
      }),
      { fileName: 'tools.json' },
    )
    expect(result.tools[1]).toMatchObject({ name: edge, namespace: edge, tags: [edge] })
    // ToolGen's virtual_tokens.txt: the longest of its 46,984 `tool&&api` names.
    const real =
      'High Mobility&&Honkthehornand/orflashtheblinkerlights.Thiscanbedonesimultaneouslyorjustoneactionatthetime.Itisalsopossibletopassinhowmanytimesthelightsshouldbeflashedandhowmanysecondsthehornshouldbehonked.'
    expect(real).toHaveLength(205)
    const tools = importToolsFromText(canonical({ name: real }), { fileName: 'tools.json' }).tools
    expect(tools[1].name).toBe(real)
  })
})
