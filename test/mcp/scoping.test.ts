import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Tool } from '../../src/library/tool.ts'
import {
  describeScope,
  inScope,
  narrowScope,
  parseList,
  UNSCOPED,
} from '../../src/mcp/tool-scope.ts'
import { call, dataOf, errorOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'

const tool = (namespace: string, tags?: string[]): Tool => ({
  id: `${namespace}.t`,
  name: 't',
  description: '',
  parameters: { type: 'object', properties: {} },
  namespace,
  ...(tags ? { tags } : {}),
})

describe('tool scopes', () => {
  it('parses comma lists, ignoring blanks; absent stays absent', () => {
    expect(parseList(' github, slack,,')).toEqual(['github', 'slack'])
    expect(parseList(undefined)).toBeUndefined()
  })

  it('keeps a tool when its server and one of its tags are allowed', () => {
    const scope = { servers: ['github'], tags: ['dev', 'ops'] }
    expect(inScope(tool('github', ['ops']), scope)).toBe(true)
    expect(inScope(tool('github'), scope)).toBe(false)
    expect(inScope(tool('slack', ['dev']), scope)).toBe(false)
    expect(inScope(tool('slack'), UNSCOPED)).toBe(true)
  })

  it('lets a client narrow the configured scope but never widen it', () => {
    const base = { servers: ['github', 'slack'], tags: [] }
    expect(narrowScope(base, { servers: ['slack', 'mail'] }).servers).toEqual(['slack'])
    expect(narrowScope(base, {}).servers).toEqual(['github', 'slack'])
    const none = narrowScope(base, { servers: ['mail'] })
    expect(inScope(tool('mail'), none)).toBe(false)
    expect(describeScope(none)).toBe('servers (none)')
    expect(narrowScope(UNSCOPED, { tags: ['dev'] })).toEqual({ servers: [], tags: ['dev'] })
  })
})

describe('scoping on /mcp (query parameters, headers, config)', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startToolsel({
      log: { level: 'silent' },
      mcp: { servers: ['slack', 'mail', 'sms'] },
    })
  })
  afterAll(() => harness.close())

  const search = async (path: string, query: string, headers?: Record<string, string>) => {
    const client = await harness.connect(path, headers)
    const data = dataOf<{ tools: Array<{ id: string }> }>(
      await call(client, 'search_tools', { query, k: 20 }),
    )
    return data.tools.map((hit) => hit.id.split('.')[0])
  }

  it('applies the configured scope to every client', async () => {
    const servers = new Set(await search('/mcp', 'send a message'))
    expect([...servers].every((server) => ['slack', 'mail', 'sms'].includes(server))).toBe(true)
  })

  it('narrows by ?servers=', async () => {
    expect(new Set(await search('/mcp?servers=slack', 'send a message'))).toEqual(
      new Set(['slack']),
    )
  })

  it('narrows by the x-toolsel-servers header', async () => {
    const servers = await search('/mcp', 'send a message', { 'x-toolsel-servers': 'mail' })
    expect(new Set(servers)).toEqual(new Set(['mail']))
  })

  it('cannot widen: a server outside the configured scope stays invisible', async () => {
    expect(await search('/mcp?servers=weather', 'weather forecast')).toEqual([])
    const client = await harness.connect('/mcp?servers=weather')
    const error = errorOf(
      await call(client, 'get_tool_schemas', { ids: ['weather.get_weather_forecast'] }),
    )
    expect(error.code).toBe('UNKNOWN_TOOL')
  })

  it('scopes select_tools: it only picks tools in scope', async () => {
    const client = await harness.connect('/mcp?servers=slack')
    const data = dataOf<{ tools: Array<{ id: string }> }>(
      await call(client, 'select_tools', {
        instruction: 'Email the report to Ann and post it on Slack',
      }),
    )
    expect(data.tools.length).toBeGreaterThan(0)
    expect(data.tools.every((picked) => picked.id.startsWith('slack.'))).toBe(true)
  })
})
