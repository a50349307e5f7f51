import { describe, expect, it } from 'vitest'
import { upstreamTarget } from '../../../src/mcp/gateway/create-upstream-transport.ts'
import type { UpstreamConfig } from '../../../src/config/schema.ts'

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
})
