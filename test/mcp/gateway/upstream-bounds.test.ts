/**
 * What one upstream may send: a message over gateway.maxMessageBytes (stdio line, HTTP JSON body
 * or SSE event) fails its call with an error naming the setting, and the upstream recovers (a
 * stdio process is restarted, an HTTP session stays); stderr lines are cut, rate-limited and
 * redacted before they reach our log. Real processes and real HTTP servers.
 */
import { fileURLToPath } from 'node:url'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { parseConfig } from '../../../src/config/load-config.ts'
import type { GatewayConfig, UpstreamConfig } from '../../../src/config/schema.ts'
import { MAX_STDERR_LINE_CHARS } from '../../../src/mcp/gateway/create-upstream-transport.ts'
import { UpstreamConnection } from '../../../src/mcp/gateway/upstream-connection.ts'
import { MAX_STDERR_LINES_PER_SECOND } from '../../../src/mcp/gateway/upstream-stderr.ts'
import { createMemoryLogger } from '../../../src/log.ts'
import { listenApp } from '../../helpers/listen-app.ts'

const NOTES_FIXTURE = fileURLToPath(new URL('../fixtures/notes-upstream.ts', import.meta.url))
const LIMIT = 64 * 1024
const TOKEN = 'sk-upstream-secret-0123456789'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

function connection(upstream: Record<string, unknown>, gateway: Partial<GatewayConfig> = {}) {
  const config = parseConfig({
    gateway: { servers: { bounded: upstream }, maxMessageBytes: LIMIT, ...gateway },
  })
  const logger = createMemoryLogger()
  const made = new UpstreamConnection('bounded', config.gateway.servers.bounded as UpstreamConfig, {
    settings: config.gateway,
    logger,
    onTools: () => undefined,
  })
  open.push(made)
  return { upstream: made, logger }
}

function notes(gateway: Partial<GatewayConfig> = {}) {
  return connection(
    {
      command: process.execPath,
      args: ['--import', 'tsx', NOTES_FIXTURE],
      env: { NOTES_TOKEN: TOKEN },
    },
    { spawnTimeoutMs: 120_000, reconnectInitialMs: 50, ...gateway },
  )
}

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not seen in ${timeoutMs} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A stateless Streamable HTTP server of the tools `register` adds; JSON answers or SSE streams. */
async function httpUpstream(json: boolean, register: (server: McpServer) => void) {
  const served = await listenApp(async (request) => {
    const server = new McpServer({ name: 'bounds', version: '1.0.0' })
    register(server)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: json,
    })
    await server.connect(transport)
    return transport.handleRequest(request)
  })
  open.push(served)
  return served
}

/** `big` ({bytes}): an answer of that many characters. */
const bigHttpUpstream = (json: boolean) =>
  httpUpstream(json, (server) =>
    server.registerTool('big', { inputSchema: { bytes: z.number() } }, ({ bytes }) => ({
      content: [{ type: 'text', text: 'x'.repeat(bytes) }],
    })),
  )

describe('an upstream answer over gateway.maxMessageBytes', () => {
  it('fails the stdio call naming the setting, restarts the process, and serves the next call', async () => {
    const { upstream } = notes()
    await upstream.connect()
    expect(upstream.state().status).toBe('connected')
    const failed = await upstream.callTool('big_answer', { bytes: 4 * LIMIT }).catch((e) => e)
    expect(failed).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: expect.stringContaining('bytes (gateway.maxMessageBytes)'),
    })
    await until(() => upstream.state().status === 'connected', 'reconnected')
    const small = await upstream.callTool('big_answer', { bytes: 10 })
    expect(small.content).toEqual([{ type: 'text', text: 'x'.repeat(10) }])
  }, 150_000)

  for (const json of [true, false]) {
    it(`fails the HTTP call (${json ? 'JSON' : 'SSE'} answer) naming the setting; the next call works`, async () => {
      const served = await bigHttpUpstream(json)
      const { upstream } = connection({ url: `${served.url}/mcp` })
      await upstream.connect()
      expect(upstream.state().status).toBe('connected')
      const failed = await upstream.callTool('big', { bytes: 4 * LIMIT }).catch((e) => e)
      expect(failed).toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        message: `Upstream "bounded" answered the call to "big" with an upstream message was over 65,536 bytes (gateway.maxMessageBytes); the answer was dropped.`,
      })
      const small = await upstream.callTool('big', { bytes: 10 })
      expect(small.content).toEqual([{ type: 'text', text: 'x'.repeat(10) }])
    }, 60_000)
  }
})

describe('a tools/list page over gateway.maxMessageBytes', () => {
  for (const json of [true, false]) {
    it(`marks an HTTP server down naming the setting (${json ? 'JSON' : 'SSE'} answer)`, async () => {
      const served = await httpUpstream(json, (server) => {
        for (let i = 0; i < 1000; i++) {
          server.registerTool(`tool_${i}`, { description: 'd'.repeat(200) }, () => ({
            content: [],
          }))
        }
      })
      const { upstream } = connection({ url: `${served.url}/mcp` }, { connectTimeoutMs: 60_000 })
      const started = Date.now()
      await upstream.connect()
      expect(upstream.state()).toMatchObject({
        status: 'down',
        toolCount: 0,
        lastError: 'an upstream message was over 65,536 bytes (gateway.maxMessageBytes)',
      })
      // Failed at the limit, not after the page's time limit.
      expect(Date.now() - started).toBeLessThan(30_000)
    }, 90_000)
  }
})

describe("an upstream process's stderr", () => {
  it('is logged cut, at most so many lines a second, and without its credentials', async () => {
    const { upstream, logger } = notes()
    await upstream.connect()
    await upstream.callTool('stderr_lines', { count: 200, chars: 5 * MAX_STDERR_LINE_CHARS })
    await new Promise((resolve) => setTimeout(resolve, 1100))
    await upstream.callTool('stderr_lines', { count: 1, chars: 10 })
    await until(() => logger.lines.some((line) => line.includes('dropped')), 'the dropped count')
    const logged = logger.lines.filter(
      (line) => line.includes('[bounded]') && line.includes('token'),
    )
    // The flood's window may also hold the fixture's start-up line ("notes fixture ready").
    const flood = logged.slice(0, -1)
    expect(flood.length).toBeGreaterThan(MAX_STDERR_LINES_PER_SECOND / 2)
    expect(flood.length).toBeLessThanOrEqual(MAX_STDERR_LINES_PER_SECOND)
    for (const line of logged) {
      expect(line).not.toContain(TOKEN)
      expect(line.length).toBeLessThan(MAX_STDERR_LINE_CHARS + 200)
    }
    expect(flood[0]).toContain(`… (line cut at ${MAX_STDERR_LINE_CHARS} characters)`)
    expect(logged.at(-1)).toContain(
      `(${200 - flood.length} earlier stderr line(s) dropped: over ${MAX_STDERR_LINES_PER_SECOND} a second)`,
    )
  }, 150_000)
})
