import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UpstreamState } from '../../src/mcp/gateway/upstream-state.ts'
import { RESPONSE_SCHEMAS } from '../../src/server/schemas.ts'
import { deadPort } from '../helpers/dead-port.ts'
import { call, dataOf, errorOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'
import { startWeatherUpstream, type WeatherUpstream } from './fixtures/weather-upstream.ts'

const NOTES_FIXTURE = fileURLToPath(new URL('./fixtures/notes-upstream.ts', import.meta.url))

/**
 * Polls `check` until it holds. `timeoutMs` is only a safety net for a hang: the tests wait for the
 * event, however long a loaded machine takes to get there. `describe` says what was seen instead.
 */
async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  describe: () => unknown = () => undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) {
      const seen = await describe()
      throw new Error(
        `condition not met in ${timeoutMs} ms${seen ? `: ${JSON.stringify(seen)}` : ''}`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

interface Readyz {
  status: string
  upstreams: UpstreamState[]
}

const ids = (tools: Array<{ id: string }>) => tools.map((tool) => tool.id).sort()

describe('gateway mode: two real upstream MCP servers (stdio + Streamable HTTP) and a dead one', () => {
  let weather: WeatherUpstream
  let harness: Harness
  let client: Client
  /** The notes server's state once it was seen down after `crash`. */
  let notesDown: UpstreamState | undefined

  const servers = async () =>
    dataOf<{ servers: UpstreamState[] }>(await call(client, 'list_servers')).servers
  const serverNamed = async (name: string) =>
    (await servers()).find((server) => server.name === name)!
  const libraryIds = () =>
    [...harness.service.libraries.require('gateway').library.tools.map((tool) => tool.id)].sort()

  beforeAll(async () => {
    weather = await startWeatherUpstream()
    harness = await startToolsel({
      log: { level: 'silent' },
      gateway: {
        servers: {
          notes: {
            command: process.execPath,
            args: ['--import', 'tsx', NOTES_FIXTURE],
            tags: ['personal'],
          },
          weather: { url: weather.url, headers: { 'x-api-key': 'k1' }, tags: ['public'] },
          ghost: { url: `http://127.0.0.1:${await deadPort()}/mcp`, tags: ['public'] },
        },
        // Starting the stdio fixture (node + tsx) took over 5 s under load: it gets the default
        // spawnTimeoutMs (30 s), a safety limit here (test/mcp/gateway/upstream-connection.test.ts
        // tests the bound itself).
        callTimeoutMs: 2000,
        reconnectInitialMs: 1500,
        reconnectMaxMs: 3000,
      },
    })
    client = await harness.connect()
  }, 60_000)
  afterAll(async () => {
    await harness?.close()
    await weather?.close()
  })

  it('builds one namespaced library from every tools/list page of each server', () => {
    expect(libraryIds()).toEqual([
      'notes.crash',
      'notes.create_note',
      'notes.delete_note',
      'notes.replace_delete_with_archive',
      'notes.search_notes',
      'weather.get_forecast',
      'weather.sleep',
    ])
    const tool = harness.service.libraries.require('gateway').library.require('notes.create_note')
    expect(tool).toMatchObject({ name: 'create_note', namespace: 'notes', tags: ['personal'] })
    expect(weather.lastHeaders()?.get('x-api-key')).toBe('k1')
  })

  it('adds call_tool and list_servers, and makes the gateway library the default', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toContain('call_tool')
    const hits = dataOf<{ library: string; tools: Array<{ id: string }> }>(
      await call(client, 'search_tools', { query: 'weather forecast for a city', k: 2 }),
    )
    expect(hits.library).toBe('gateway')
    expect(hits.tools[0].id).toBe('weather.get_forecast')
  })

  it("docs/mcp.md's Tools table names each tool's arguments as tools/list gives them", async () => {
    const docs = await readFile(new URL('../../docs/mcp.md', import.meta.url), 'utf8')
    const table = docs.slice(docs.indexOf('\n## Tools\n')).split('\n\n')[1].split('\n').slice(2)
    const documented = Object.fromEntries(
      table.map((row) => {
        const [tool, input] = row.split('|').slice(1, 3)
        // `k?` optional, `ids` (1-20) required; "the options of POST /v1/select-tools" is prose.
        const names = [...input.matchAll(/`(\w+)(\??)`/g)].map(
          ([, name, optional]) => `${name}${optional}`,
        )
        return [tool.match(/`(\w+)`/)?.[1], names.sort()]
      }),
    )
    const { tools } = await client.listTools()
    const real = Object.fromEntries(
      tools.map((tool) => {
        const required = new Set(tool.inputSchema.required ?? [])
        const names = Object.keys(tool.inputSchema.properties ?? {}).map((name) =>
          required.has(name) ? name : `${name}?`,
        )
        return [tool.name, names.sort()]
      }),
    )
    expect(documented).toEqual(real)
  })

  it("passes on an upstream tool's boolean hints, never its title or other keys; HTTP and MCP alike", async () => {
    type Answered = { id: string; annotations?: Record<string, unknown> }
    const hintsOf = (tools: Answered[]) =>
      Object.fromEntries(tools.map((tool) => [tool.id, tool.annotations]))
    const expected = {
      // stdio upstream: its title (text posing as a verdict) and its own key are left out.
      'notes.delete_note': { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      // Streamable HTTP upstream (the SDK's McpServer): title left out.
      'weather.get_forecast': { readOnlyHint: true, openWorldHint: true },
      // No annotations listed: no key.
      'notes.create_note': undefined,
    }
    const schemas = dataOf<{ tools: Answered[] }>(
      await call(client, 'get_tool_schemas', { ids: Object.keys(expected) }),
    )
    expect(hintsOf(schemas.tools)).toEqual(expected)
    expect(schemas.tools.find((tool) => tool.id === 'notes.create_note')).not.toHaveProperty(
      'annotations',
    )
    expect(JSON.stringify(schemas)).not.toMatch(/SYSTEM|x-vendor|Forecast/)
    // The tool's source keeps what was listed, whole (GET /v1/libraries/gateway/tools/<id>).
    const kept = harness.service.libraries.require('gateway').library.require('notes.delete_note')
    expect(kept.source?.annotations).toMatchObject({ 'x-vendor-note': expect.any(String) })

    // select_tools over MCP and POST /v1/select-tools with schemas answer the same hints.
    const instruction = 'delete a note from the notebook permanently'
    const mcp = dataOf<{ tools: Answered[] }>(await call(client, 'select_tools', { instruction }))
    const response = await fetch(new URL('/v1/select-tools', harness.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instruction, library: 'gateway', includeSchemas: true }),
    })
    expect(response.status).toBe(200)
    const http = RESPONSE_SCHEMAS.selectTools.parse(await response.json()) as { tools: Answered[] }
    expect(hintsOf(http.tools)).toEqual(hintsOf(mcp.tools))
    expect(hintsOf(http.tools)['notes.delete_note']).toEqual(expected['notes.delete_note'])
    // Without the schemas, no hints either (as search_tools).
    const bare = await fetch(new URL('/v1/select-tools', harness.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instruction, library: 'gateway', includeSchemas: false }),
    })
    expect(JSON.stringify(await bare.json())).not.toContain('destructiveHint')
  })

  it('forwards call_tool to the owning server and returns its result unchanged', async () => {
    const weatherResult = await call(client, 'call_tool', {
      id: 'weather.get_forecast',
      arguments: { city: 'Lisbon' },
    })
    expect(weatherResult.structuredContent).toEqual({ city: 'Lisbon', high: 21 })
    const notesResult = await call(client, 'call_tool', {
      id: 'notes.create_note',
      arguments: { title: 'groceries' },
    })
    expect(notesResult.content).toEqual([{ type: 'text', text: 'created n1: groceries' }])
  })

  it('reports each server: connected ones with tool counts, the unreachable one down', async () => {
    // The ghost is retried all along; while an attempt runs, no next retry is planned yet. Take a
    // snapshot between attempts (under load an attempt on the dead port can take a while).
    let states: UpstreamState[] = []
    await until(
      async () => (states = await servers())[2]?.nextRetryAt != null,
      20_000,
      () => states,
    )
    expect(states.map((server) => [server.name, server.status, server.toolCount])).toEqual([
      ['notes', 'connected', 5],
      ['weather', 'connected', 2],
      ['ghost', 'down', 0],
    ])
    const ghost = states[2]
    expect(ghost.lastError).toMatch(/fetch failed|ECONNREFUSED/)
    expect(ghost.downForMs).toBeGreaterThanOrEqual(0)
    expect(ghost.nextRetryAt).not.toBeNull()
    expect(states[0].lastSyncAt).not.toBeNull()

    const readyz = (await (await fetch(`${harness.baseUrl}/readyz`)).json()) as Readyz
    expect(readyz.status).toBe('ready')
    expect(RESPONSE_SCHEMAS.readyz.parse(readyz).upstreams).toEqual(readyz.upstreams)
    expect(readyz.upstreams.map((server) => server.status)).toEqual([
      'connected',
      'connected',
      'down',
    ])
  })

  it('re-syncs after list_changed from the stdio server (one tool removed, one added)', async () => {
    await call(client, 'call_tool', { id: 'notes.replace_delete_with_archive' })
    await until(() => libraryIds().includes('notes.archive_note'))
    expect(libraryIds()).not.toContain('notes.delete_note')
    expect(harness.gateway!.lastDiff).toMatchObject({
      added: ['notes.archive_note'],
      removed: ['notes.delete_note'],
      changed: [],
    })
    const hits = dataOf<{ tools: Array<{ id: string }> }>(
      await call(client, 'search_tools', { query: 'archive a note', k: 1 }),
    )
    expect(hits.tools[0].id).toBe('notes.archive_note')
  })

  it('re-syncs after list_changed over the HTTP session stream', async () => {
    weather.addAlerts()
    await until(() => libraryIds().includes('weather.get_alerts'))
    expect(harness.gateway!.lastDiff?.added).toEqual(['weather.get_alerts'])
  })

  it('fails calls to a killed server with UPSTREAM_UNAVAILABLE; its tools stay searchable', async () => {
    await call(client, 'call_tool', { id: 'notes.crash' }).catch(() => undefined)
    await until(async () => (notesDown = await serverNamed('notes')).status === 'down')
    const down = errorOf(
      await call(client, 'call_tool', { id: 'notes.create_note', arguments: { title: 'y' } }),
    )
    expect(down.code).toBe('UPSTREAM_UNAVAILABLE')
    expect(down.message).toMatch(/Upstream server "notes" is down \(for \d+ s; last error: /)
    expect(down.message).toContain('list_servers')
    const hits = dataOf<{ tools: Array<{ id: string }> }>(
      await call(client, 'search_tools', { query: 'create a new note', k: 1 }),
    )
    expect(hits.tools[0].id).toBe('notes.create_note')
    // The other servers are unaffected.
    const forecast = await call(client, 'call_tool', {
      id: 'weather.get_forecast',
      arguments: { city: 'Oslo' },
    })
    expect(forecast.isError).toBeFalsy()
  })

  it('reconnects a server that came back, with backoff', { timeout: 90_000 }, async () => {
    await until(
      async () => (await serverNamed('notes')).status === 'connected',
      60_000,
      () => serverNamed('notes'),
    )
    // Not before the first backoff delay (reconnectInitialMs 1,500 with jitter: at least 1,200).
    const back = await serverNamed('notes')
    expect(Date.parse(back.lastSyncAt!) - Date.parse(notesDown!.downSince!)).toBeGreaterThanOrEqual(
      1200,
    )
    // The respawned process starts with its original tool list; the library follows it.
    await until(() => libraryIds().includes('notes.delete_note'))
    expect(libraryIds()).not.toContain('notes.archive_note')
    const result = await call(client, 'call_tool', {
      id: 'notes.create_note',
      arguments: { title: 'z' },
    })
    expect(result.isError).toBeFalsy()
  })

  it('refuses a call_tool id longer than any gateway id (64 + 1 + 128 characters)', async () => {
    const error = errorOf(await call(client, 'call_tool', { id: `weather.${'a'.repeat(100_000)}` }))
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain('193')
    expect(error.message.length).toBeLessThan(1000)
  })

  it('marks a server slow when a call times out, without marking it down', async () => {
    const error = errorOf(
      await call(client, 'call_tool', { id: 'weather.sleep', arguments: { ms: 5000 } }),
    )
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE')
    expect(error.message).toContain('"weather" did not answer in time')
    expect((await serverNamed('weather')).status).toBe('slow')
    await call(client, 'call_tool', { id: 'weather.get_forecast', arguments: { city: 'Rome' } })
    expect((await serverNamed('weather')).status).toBe('connected')
  })

  it('detects a killed HTTP server on the next call and keeps its tools searchable', async () => {
    await weather.close()
    const error = errorOf(
      await call(client, 'call_tool', { id: 'weather.get_forecast', arguments: { city: 'Paris' } }),
    )
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE')
    expect(error.message).toContain('"weather" is down')
    const readyz = (await (await fetch(`${harness.baseUrl}/readyz`)).json()) as Readyz
    expect(readyz.upstreams.find((server) => server.name === 'weather')?.status).toBe('down')
    expect(libraryIds()).toContain('weather.get_forecast')
  })

  it('scopes a client to some servers: it can neither see nor call the others', async () => {
    const scoped = await harness.connect('/mcp?servers=notes')
    const hits = dataOf<{ tools: Array<{ id: string }> }>(
      await call(scoped, 'search_tools', { query: 'weather forecast', k: 10 }),
    )
    expect(hits.tools.every((tool) => tool.id.startsWith('notes.'))).toBe(true)
    const blocked = errorOf(
      await call(scoped, 'call_tool', { id: 'weather.get_forecast', arguments: { city: 'x' } }),
    )
    expect(blocked.code).toBe('UNKNOWN_TOOL')
    expect(blocked.message).toContain('scope (servers notes)')
    // The hint for a tool name names no tool of another server.
    const named = errorOf(await call(scoped, 'call_tool', { id: 'get_forecast', arguments: {} }))
    expect(named.code).toBe('UNKNOWN_TOOL')
    expect(named.message).not.toContain('weather.get_forecast')
    const schemas = errorOf(
      await call(scoped, 'get_tool_schemas', { ids: ['weather.get_forecast'] }),
    )
    expect(schemas.code).toBe('UNKNOWN_TOOL')
    const listed = dataOf<{ servers: UpstreamState[] }>(await call(scoped, 'list_servers'))
    expect(listed.servers.map((server) => server.name)).toEqual(['notes'])
  })

  it('scopes by tag through a header', async () => {
    const scoped = await harness.connect('/mcp', { 'x-toolsel-tags': 'public' })
    const hits = dataOf<{ tools: Array<{ id: string }> }>(
      await call(scoped, 'search_tools', { query: 'note', k: 20 }),
    )
    expect(ids(hits.tools).every((id) => id.startsWith('weather.'))).toBe(true)
    const listed = dataOf<{ servers: UpstreamState[] }>(await call(scoped, 'list_servers'))
    expect(listed.servers.map((server) => server.name)).toEqual(['weather', 'ghost'])
  })
})
