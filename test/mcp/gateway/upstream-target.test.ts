import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  redactUpstream,
  upstreamTarget,
} from '../../../src/mcp/gateway/create-upstream-transport.ts'
import type { UpstreamConfig } from '../../../src/config/schema.ts'
import { useUpstreamConnections } from '../../helpers/upstream-connections.ts'
import { call, dataOf, errorOf, startToolsel } from '../fixtures/toolsel-harness.ts'

const stdio = (command: string, ...args: string[]) =>
  ({ command, args, env: {}, tags: [], enabled: true }) as unknown as UpstreamConfig
const http = (url: string) =>
  ({ url, headers: {}, tags: [], enabled: true }) as unknown as UpstreamConfig

// list_servers and the keyless /readyz show it: a credential in a URL or an argument must not.
describe('upstreamTarget', () => {
  it('shows a URL without user info, query or fragment', () => {
    expect(upstreamTarget(http('https://mcp.example.com/mcp'))).toBe('https://mcp.example.com/mcp')
    expect(upstreamTarget(http('https://ann:pw@mcp.example.com/mcp?api_key=sk-1#x'))).toBe(
      'https://mcp.example.com/mcp?***',
    )
  })

  it('hides the values of credential flags and bearer arguments in a command line', () => {
    expect(upstreamTarget(stdio('npx', '-y', '@modelcontextprotocol/server-github'))).toBe(
      'npx -y @modelcontextprotocol/server-github',
    )
    expect(
      upstreamTarget(
        stdio(
          'npx',
          'mcp-remote',
          'https://x.example/mcp',
          '--header',
          'Authorization: Bearer abc',
          '--api-key=sk-123',
          '--token',
          'ghp_1',
          '--port',
          '3000',
          'Bearer xyz',
        ),
      ),
    ).toBe(
      'npx mcp-remote https://x.example/mcp --header *** --api-key=*** --token *** --port 3000 ***',
    )
  })

  it('shows a URL in a command line as it shows the URL of an HTTP upstream', () => {
    // Round 27 (sec13): `mcp-remote https://host/mcp?key=…` showed whole.
    const command = stdio(
      'npx',
      'mcp-remote',
      'https://ann:pw@x.example/mcp?api_key=sk-SECRET1',
      '--url=https://x.example/sse#SECRET2',
      '--token',
      'https://x.example/?t=SECRET3',
    )
    expect(upstreamTarget(command)).toBe(
      'npx mcp-remote https://x.example/mcp?*** --url=https://x.example/sse?*** --token ***',
    )
    expect(
      redactUpstream(
        'connect https://ann:pw@x.example/mcp?api_key=sk-SECRET1 (key sk-SECRET1), https://x.example/sse#SECRET2, https://x.example/?t=SECRET3',
        command,
      ),
    ).toBe('connect https://x.example/mcp?*** (key ***), https://x.example/sse?***, ***')
  })
})

// Round 27 (sec13): the target hid them, but the upstream's last error quoted the URL whole
// (fetch refuses a URL with user info and says which), and every read key saw it in
// list_servers, call_tool's error and /readyz.
describe('an upstream error as clients see it', () => {
  it('names the upstream without the credentials of its URL, headers, env or arguments', () => {
    const url = 'http://ann:pw-SECRET1@127.0.0.1:1/mcp?token=SECRET2'
    const withHeaders = {
      ...http(url),
      headers: { authorization: 'Bearer SECRET3' },
    } as unknown as UpstreamConfig
    expect(
      redactUpstream(
        `Request cannot be constructed from a URL that includes credentials: ${url} (sent Bearer SECRET3, SECRET3)`,
        withHeaders,
      ),
    ).toBe(
      'Request cannot be constructed from a URL that includes credentials: http://127.0.0.1:1/mcp?*** (sent ***, ***)',
    )
    expect(redactUpstream('GET http://127.0.0.1:1/mcp?token=SECRET2 failed', http(url))).toBe(
      'GET http://127.0.0.1:1/mcp?*** failed',
    )
    const command = {
      ...stdio('server', '--token', 'SECRET4', '--port', '3000'),
      env: { API_KEY: 'SECRET5', DEBUG: '1' },
    } as unknown as UpstreamConfig
    expect(redactUpstream('exit 1: bad token SECRET4, key SECRET5 on port 3000', command)).toBe(
      'exit 1: bad token ***, key *** on port 3000',
    )
  })

  it('over MCP and /readyz: a read key sees the upstream down, not its credentials', async () => {
    const read = 'read-key-0123456789abcdef'
    const harness = await startToolsel({
      log: { level: 'silent' },
      auth: { adminKey: 'admin-key-0123456789abcdef', readKeys: [read] },
      gateway: {
        servers: {
          web: {
            url: 'http://ann:pw-SECRET1@127.0.0.1:1/mcp?token=SECRET2',
            headers: { authorization: 'Bearer SECRET3' },
          },
        },
        reconnectInitialMs: 60_000,
      },
    })
    try {
      const client = await harness.connect('/mcp', { authorization: `Bearer ${read}` })
      let servers: Array<{ status: string; lastError: string | null }> = []
      for (let tries = 0; tries < 100 && servers[0]?.lastError == null; tries += 1) {
        servers = dataOf<{ servers: typeof servers }>(await call(client, 'list_servers')).servers
        if (servers[0]?.lastError == null) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(servers[0].status).toBe('down')
      expect(servers[0].lastError).toContain('http://127.0.0.1:1/mcp?***')
      const failed = errorOf(await call(client, 'call_tool', { id: 'web.x', arguments: {} }))
      const ready = await fetch(`${harness.baseUrl}/readyz`, {
        headers: { authorization: `Bearer ${read}` },
      })
      const seen = JSON.stringify([servers, failed, await ready.text()])
      expect(seen).toContain('down')
      expect(seen).not.toMatch(/SECRET|pw-|ann:/)
    } finally {
      await harness.close()
    }
  }, 30_000)
})

describe('redactUpstream: env values that are no secret', () => {
  const upstreamConnection = useUpstreamConnections()
  const env = (values: Record<string, string>) =>
    ({ ...stdio('server'), env: values }) as unknown as UpstreamConfig

  it('masks a number or a plain word only where it stands whole, anything else anywhere', () => {
    const config = env({
      LIMIT_MS: '1000',
      DEBUG: 'true',
      PIN: '4242',
      API_KEY: 'sk-live-4242abcd',
      PASSWORD: 'hunter',
    })
    // Until round 43: "within ***0 ms", "un***", "con***d"…
    expect(redactUpstream('no answer within 10000 ms (1000.5 s), untrue, construed', config)).toBe(
      'no answer within 10000 ms (1000.5 s), untrue, construed',
    )
    expect(
      redactUpstream(
        'port 1000; debug=true; pin4242, 4242. key sk-live-4242abcd and xsk-live-4242abcdx; user hunter, hunters, ahunter',
        config,
      ),
    ).toBe('port ***; debug=***; pin***, ***. key *** and x***x; user ***, ***s, a***')
  })

  it('keeps "within 10000 ms" of a real server\'s error, its key still masked', async () => {
    // A stdio server (test/mcp/fixtures/node-upstream.mjs) answering initialize with an error
    // quoting a number, a word and a key from its env.
    const upstream = upstreamConnection('echo', {
      servers: {
        echo: {
          command: process.execPath,
          args: [fileURLToPath(new URL('../fixtures/node-upstream.mjs', import.meta.url))],
          env: {
            UPSTREAM_INIT_ERROR: JSON.stringify(
              'no answer within 10000 ms on port 1000 (debug true): key sk-live-4242abcd refused',
            ),
            UPSTREAM_TOOLS: '1000',
            DEBUG: 'true',
            API_KEY: 'sk-live-4242abcd',
          },
        },
      },
      reconnectInitialMs: 60_000,
    })
    await upstream.connect()
    expect(upstream.state().lastError).toContain(
      'no answer within 10000 ms on port *** (debug ***): key *** refused',
    )
  }, 60_000)
})
