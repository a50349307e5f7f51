/** MCP over HTTP with API keys: a key limited to libraries can't reach others through `library`. */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startToolsel, type Harness } from './fixtures/toolsel-harness.ts'
import { callMcpTool } from '../helpers/mcp-fetch.ts'

const ADMIN = 'admin-key-0123456789abcdef'
const DEMO_ONLY = 'demo-only-0123456789abcdef'
const SECRET_FIRST = 'secret-first-0123456789abcdef'
const SECRET_AND_DEMO = 'secret-demo-0123456789abcdef'

describe('MCP with API keys', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startToolsel({
      log: { level: 'silent' },
      library: {
        default: 'demo',
        loadAll: false,
        indexDir: await mkdtemp(join(tmpdir(), 'toolsel-mcp-auth-')),
      },
      auth: {
        adminKey: ADMIN,
        readKeys: [
          { key: DEMO_ONLY, name: 'demo', libraries: ['demo'] },
          { key: SECRET_FIRST, name: 'secret-reader', libraries: ['secret', 'elsewhere'] },
          { key: SECRET_AND_DEMO, name: 'both-reader', libraries: ['secret', 'demo'] },
        ],
      },
    })
    await harness.service.putLibrary(
      'secret',
      JSON.stringify([{ id: 's.one', name: 'one', description: 'Send a secret thing.' }]),
    )
  })
  afterAll(() => harness.close())

  async function callTool(key: string | undefined, args: Record<string, unknown>, query = '') {
    const response = await callMcpTool(
      `${harness.baseUrl}/mcp${query}`,
      'search_tools',
      args,
      key ? { authorization: `Bearer ${key}` } : {},
    )
    return { status: response.status, body: (await response.json()) as any }
  }

  /** `key` naming `library`, as an argument or in the URL, answers FORBIDDEN. */
  async function expectForbidden(key: string, library: string) {
    for (const [args, query] of [
      [{ query: 'send', library }, ''],
      [{ query: 'send' }, `?library=${library}`],
    ] as const) {
      const other = await callTool(key, args, query)
      expect(other.body.result.isError).toBe(true)
      expect(other.body.result.content[0].text).toContain('FORBIDDEN')
    }
  }

  it('needs a key', async () => {
    const { status, body } = await callTool(undefined, { query: 'send' })
    expect(status).toBe(401)
    expect(body.error.code).toBe('UNAUTHORIZED')
  })

  // The 401 stays the service's {error:{code,message}} (docs/mcp.md, Streamable HTTP): MCP's
  // authorization speaks through the status and WWW-Authenticate, and the SDK's client reads
  // no JSON-RPC body from a 401; it shows the status and the body's text.
  it('answers an MCP client without a key 401 with WWW-Authenticate; the SDK client shows why', async () => {
    const response = await callMcpTool(`${harness.baseUrl}/mcp`, 'search_tools', { query: 'x' })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="toolsel"')
    const client = new Client({ name: 'no-key', version: '1' })
    const transport = new StreamableHTTPClientTransport(new URL(`${harness.baseUrl}/mcp`))
    const error = (await client.connect(transport).catch((caught: unknown) => caught)) as Error
    expect(error).toBeInstanceOf(StreamableHTTPError)
    expect((error as StreamableHTTPError).code).toBe(401)
    expect(error.message).toContain('"code":"UNAUTHORIZED"')
    expect(error.message).toContain('needs an API key')
  })

  it('a key limited to libraries cannot name another one, as an argument or in the URL', async () => {
    const own = await callTool(DEMO_ONLY, { query: 'send an email' })
    expect(own.status).toBe(200)
    expect(own.body.result.isError).toBeFalsy()
    await expectForbidden(DEMO_ONLY, 'secret')
    const admin = await callTool(ADMIN, { query: 'send', library: 'secret' })
    expect(admin.body.result.isError).toBeFalsy()
  })

  it("a call naming no library uses the server's default when the key may, else the key's first library", async () => {
    const libraryOf = (body: any) => JSON.parse(body.result.content[0].text).library
    // The server's default is "demo": outside SECRET_FIRST's libraries, so "secret" (its first).
    const first = await callTool(SECRET_FIRST, { query: 'send a secret thing' })
    expect(first.status).toBe(200)
    expect(first.body.result.isError).toBeFalsy()
    expect(libraryOf(first.body)).toBe('secret')
    // Naming a library outside the key stays forbidden, as an argument or in the URL.
    await expectForbidden(SECRET_FIRST, 'demo')
    // A key that may use the server's default gets it, whatever its order; so do keys limited to
    // no library.
    for (const key of [SECRET_AND_DEMO, ADMIN]) {
      const own = await callTool(key, { query: 'send an email' })
      expect(own.body.result.isError).toBeFalsy()
      expect(libraryOf(own.body)).toBe('demo')
    }
  })
})
