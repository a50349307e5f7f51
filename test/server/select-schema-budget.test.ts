import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SelectToolsResult } from '../../src/pipeline.ts'
import { TOOL_FORMATS } from '../../src/library/provider-tools.ts'
import type { Tool } from '../../src/library/tool.ts'
import {
  MAX_ANSWER_TOOL_BYTES,
  schemasPastBudget,
  ToolLibrary,
} from '../../src/library/tool-library.ts'
import { selectResponseJson, selectResponseObject } from '../../src/server/select-response.ts'
import { describedTool } from '../helpers/oversized-tools.ts'
import { call, dataOf, startToolsel } from '../mcp/fixtures/toolsel-harness.ts'

/** A tool of about 4.3 MB as JSON: two of them are past MAX_ANSWER_TOOL_BYTES together. */
const big = (id: string, description: string) => ({
  ...describedTool(id, 300, 14_500),
  description,
})

/** A library of lines (as a saved index serves it): `big` a and b, small c. */
function linesLibrary(): ToolLibrary {
  const tools = [
    big('a', 'Send an email message to a recipient.'),
    big('b', 'Book a flight ticket to a city.'),
    { id: 'c', name: 'c', description: 'Send an SMS.', parameters: { type: 'object' } },
  ]
  const lines = tools.map((tool) => `${JSON.stringify(tool)}\n`).join('')
  return ToolLibrary.fromJsonLines('big', Buffer.from(lines))
}

function answerOf(tools: Tool[]): SelectToolsResult {
  return {
    tools,
    steps: tools.map((tool) => ({
      text: tool.description,
      candidates: [{ id: tool.id, name: tool.name, score: 1 }],
      selected: tool.id,
    })),
    timings: { planMs: 0, retrieveMs: 0, rerankMs: 0, selectMs: 0, totalMs: 0 },
    components: {
      library: 'big',
      planner: 'rule',
      retriever: 'bm25',
      reranker: 'identity',
      selector: 'top1',
      fallbacks: [],
    },
    usage: { inputTokens: 0, outputTokens: 0 },
  }
}

interface Answer {
  tools: Array<{ id?: string; name?: string; parameters?: unknown }>
  toolIds?: Record<string, string>
  warnings?: string[]
}

describe('schemas a selection answers: at most MAX_ANSWER_TOOL_BYTES', () => {
  it('keeps the first tool whole, leaves out the next past the budget, keeps a small one after it', () => {
    const library = linesLibrary()
    const [a, b, c] = ['a', 'b', 'c'].map((id) => library.require(id))
    expect(library.jsonBytes(0) + library.jsonBytes(1)).toBeGreaterThan(MAX_ANSWER_TOOL_BYTES)
    expect(schemasPastBudget([a, b, c])).toEqual([b])
    expect(schemasPastBudget([b, a])).toEqual([a])
    expect(schemasPastBudget([a, c])).toEqual([])
    expect(schemasPastBudget([a])).toEqual([])

    const result = answerOf([a, b, c])
    const text = selectResponseJson(result, true)
    expect(text).toBe(JSON.stringify(selectResponseObject(result, true)))
    const answer = JSON.parse(text) as Answer
    expect(answer.tools.map((tool) => [tool.id, 'parameters' in tool])).toEqual([
      ['a', true],
      ['b', false],
      ['c', true],
    ])
    expect(answer.warnings).toEqual([
      expect.stringMatching(
        /^Schemas left out for 1 tool: "b" \(4,\d{3},\d{3} bytes\)\. An answer holds at most 8,388,608 bytes .* GET \/v1\/libraries\/big\/tools\/<id>/,
      ),
    ])
    expect(text.length).toBeLessThan(MAX_ANSWER_TOOL_BYTES + 10_000)
    // Without schemas nothing is left out and nothing is said.
    const bare = selectResponseJson(result, false)
    expect(bare).toBe(JSON.stringify(selectResponseObject(result, false)))
    expect(JSON.parse(bare)).not.toHaveProperty('warnings')

    // A provider's shape needs the schema: the tool is not in tools nor toolIds.
    for (const format of TOOL_FORMATS.slice(1)) {
      const provider = selectResponseJson(result, true, format)
      expect(provider).toBe(JSON.stringify(selectResponseObject(result, true, format)))
      const parsed = JSON.parse(provider) as Answer
      expect(parsed.tools).toHaveLength(2)
      expect(Object.values(parsed.toolIds!)).toEqual(['a', 'c'])
      expect(parsed.warnings).toHaveLength(1)
    }
  })

  it('keeps the cached JSON of each tool right whichever place it answers in', () => {
    const library = linesLibrary()
    const [a, b, c] = ['a', 'b', 'c'].map((id) => library.require(id))
    const withSchema = (result: SelectToolsResult) =>
      (JSON.parse(selectResponseJson(result, true)) as Answer).tools.map(
        (tool) => `${tool.id}${'parameters' in tool ? '+' : '-'}`,
      )
    // Each answer twice: the second one writes from the per-tool cache.
    for (let pass = 0; pass < 2; pass += 1) {
      expect(withSchema(answerOf([a, b, c]))).toEqual(['a+', 'b-', 'c+'])
      expect(withSchema(answerOf([b]))).toEqual(['b+'])
      expect(withSchema(answerOf([b, a, c]))).toEqual(['b+', 'a-', 'c+'])
      expect(withSchema(answerOf([c, b]))).toEqual(['c+', 'b+'])
    }
  })

  it('POST /v1/select-tools and MCP select_tools answer two large tools as one with a warning', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-schema-budget-'))
    const harness = await startToolsel({ log: { level: 'silent' }, library: { indexDir } })
    try {
      const put = await fetch(`${harness.baseUrl}/v1/libraries/big`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([
          big('send_email', 'Send an email message to a recipient.'),
          big('book_flight', 'Book a flight ticket to a city.'),
        ]),
      })
      expect(put.status).toBe(201)
      const instruction = 'Send an email to Ann and book a flight to Rome'
      const http = (await (
        await fetch(`${harness.baseUrl}/v1/select-tools`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ instruction, library: 'big', tau: 0 }),
        })
      ).json()) as Answer & { steps: Array<{ selected: string | null }> }
      expect(http.tools).toHaveLength(2)
      expect(http.tools.filter((tool) => 'parameters' in tool)).toHaveLength(1)
      expect(http.warnings).toHaveLength(1)
      const [whole, left] = http.tools.map((tool) => tool.id!)
      expect(http.warnings![0]).toContain(`"${left}"`)

      const client = await harness.connect()
      const mcp = dataOf<Answer & { tools: Array<{ id: string }> }>(
        await call(client, 'select_tools', { instruction, library: 'big', tau: 0 }),
      )
      expect(mcp.tools.map((tool) => tool.id)).toEqual([whole])
      expect(mcp.warnings).toEqual([expect.stringContaining(`"${left}"`)])
      expect(mcp.warnings![0]).toContain('get_tool_schemas')
    } finally {
      await harness.close()
      await rm(indexDir, { recursive: true, force: true })
    }
  }, 60_000)
})
