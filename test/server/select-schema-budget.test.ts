import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { describedTool } from '../helpers/oversized-tools.ts'
import { call, dataOf, startToolsel } from '../mcp/fixtures/toolsel-harness.ts'

/** A tool of about 4.3 MB as JSON: two of them are past MAX_ANSWER_TOOL_BYTES (8 MiB) together. */
const big = (id: string, description: string) => describedTool(id, 300, 14_500, description)

/** What the test reads of an answer (HTTP or MCP). */
interface Answer {
  tools: Array<{ id?: string; parameters?: unknown }>
  warnings?: string[]
}

describe('schemas a selection answers: at most MAX_ANSWER_TOOL_BYTES', () => {
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
