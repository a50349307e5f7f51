import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, dataOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'

/** Tools in two namespaces, so that a client scoped to one gets a view of part of the library. */
function toolsBody(edition: string): string {
  const tools = ['crm', 'billing'].flatMap((namespace) =>
    ['find', 'create', 'delete'].map((verb) => ({
      id: `${namespace}.${verb}_record`,
      name: `${verb}_record`,
      namespace,
      description: `${verb} a ${namespace} record (${edition} edition).`,
    })),
  )
  return JSON.stringify(tools)
}

describe('scoped MCP views of a library replaced or deleted through the HTTP API', () => {
  let harness: Harness

  beforeAll(async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-views-'))
    harness = await startToolsel({
      log: { level: 'silent' },
      library: { default: 'demo', loadAll: false, indexDir },
    })
  })
  afterAll(() => harness?.close())

  const upload = (edition: string) =>
    fetch(`${harness.baseUrl}/v1/libraries/records`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: toolsBody(edition),
    })

  /** Searches `records` as a client scoped to one server; returns the ids found. */
  const scopedSearch = async (server: string) => {
    const client = await harness.connect(`/mcp?servers=${server}&library=records`)
    const found = dataOf<{ tools: Array<{ id: string }> }>(
      await call(client, 'search_tools', { query: 'find a record', k: 5 }),
    )
    return found.tools.map((tool) => tool.id)
  }

  it('drops the views at the swap and at the delete, not when the cache pushes them out', async () => {
    expect((await upload('v1')).status).toBe(201)
    expect(await scopedSearch('crm')).toContain('crm.find_record')
    expect(await scopedSearch('billing')).toContain('billing.find_record')
    expect(harness.mcp.views.viewsOf('records')).toBe(2)

    // Replaced: the old version's views go with the swap, before anyone asks for a new view.
    expect((await upload('v2')).status).toBe(200)
    expect(harness.mcp.views.viewsOf('records')).toBe(0)
    expect(await scopedSearch('crm')).toContain('crm.find_record')
    expect(harness.mcp.views.viewsOf('records')).toBe(1)

    // Deleted: its views go with it.
    const deleted = await fetch(`${harness.baseUrl}/v1/libraries/records`, { method: 'DELETE' })
    expect(deleted.status).toBe(204)
    expect(harness.mcp.views.viewsOf('records')).toBe(0)
    const client = await harness.connect('/mcp?servers=crm&library=records')
    const missing = await call(client, 'search_tools', { query: 'find a record' })
    expect(missing.isError).toBe(true)
    expect(harness.mcp.views.viewsOf('records')).toBe(0)
  })
})
