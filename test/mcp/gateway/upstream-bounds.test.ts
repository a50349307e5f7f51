/**
 * What one upstream may send: a message over gateway.maxMessageBytes (stdio line, HTTP JSON body
 * or SSE event) fails its own call with an error naming the setting, and only that call: the
 * others in flight get their answers and the connection stays (a stdio process is not
 * restarted); stderr lines are cut, rate-limited and
 * redacted before they reach our log. Real processes and real HTTP servers.
 */
import { fileURLToPath } from 'node:url'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { parseConfig } from '../../../src/config/load-config.ts'
import type { GatewayConfig } from '../../../src/config/schema.ts'
import { MAX_STDERR_LINE_CHARS } from '../../../src/mcp/gateway/create-upstream-transport.ts'
import type { UpstreamConnection } from '../../../src/mcp/gateway/upstream-connection.ts'
import { MAX_STDERR_LINES_PER_SECOND } from '../../../src/mcp/gateway/upstream-stderr.ts'
import { createMemoryLogger } from '../../../src/log.ts'
import { earlyTimers } from '../../helpers/early-timers.ts'
import { listenApp } from '../../helpers/listen-app.ts'
import { fitsStderrLimiter } from '../../helpers/stderr-limiter-trace.ts'
import { useUpstreamConnections } from '../../helpers/upstream-connections.ts'

const NOTES_FIXTURE = fileURLToPath(new URL('../fixtures/notes-upstream.ts', import.meta.url))
const NODE_UPSTREAM = fileURLToPath(new URL('../fixtures/node-upstream.mjs', import.meta.url))
const LIMIT = 64 * 1024
const TOKEN = 'sk-upstream-secret-0123456789'
/** Why an upstream over a cap of `cap` (as written) a second was closed. */
const floodAt = (cap: string) =>
  `the upstream sent messages of its own (notifications, requests, answers to requests never sent) faster than ${cap} a second until its reserve of ${cap} ran out (gateway.maxServerMessagesPerSecond): the connection is closed and made again`

/** The HTTP servers a test starts, closed after it (its connections by useUpstreamConnections). */
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const upstreamConnection = useUpstreamConnections()

/** Server `bounded` with maxMessageBytes LIMIT but what `gateway` says, and the log it writes. */
function connection(upstream: Record<string, unknown>, gateway: Partial<GatewayConfig> = {}) {
  const logger = createMemoryLogger()
  const made = upstreamConnection(
    'bounded',
    { servers: { bounded: upstream }, maxMessageBytes: LIMIT, ...gateway },
    { logger },
  )
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

/**
 * A stateless Streamable HTTP server of the tools `register` adds; JSON answers or SSE streams.
 * `answer` may answer a request itself (undefined: the server does).
 */
async function httpUpstream(
  json: boolean,
  register: (server: McpServer) => void,
  answer: (request: Request) => Promise<Response | undefined> = async () => undefined,
) {
  const served = await listenApp(async (request) => {
    const own = await answer(request)
    if (own) return own
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

/** `big` ({bytes, delayMs}): an answer of that many characters, after that many ms. */
const bigHttpUpstream = (json: boolean) =>
  httpUpstream(json, (server) =>
    server.registerTool(
      'big',
      { inputSchema: { bytes: z.number(), delayMs: z.number().optional() } },
      async ({ bytes, delayMs = 0 }) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs))
        return { content: [{ type: 'text', text: 'x'.repeat(bytes) }] }
      },
    ),
  )

const tooLarge = (tool: string) =>
  `Upstream "bounded" answered the call to "${tool}" with an upstream message was over 65,536 bytes (gateway.maxMessageBytes); the answer was dropped.`

/**
 * Four calls at once, the second answering over the limit while the others wait (theirs come
 * 300 ms later): only it fails, naming the setting; the others get their answers from the same
 * connection (never down, never restarted), and the next call works.
 */
async function oneLargeAmongMany(
  upstream: UpstreamConnection,
  tool: string,
  args: (bytes: number, delay: number) => Record<string, unknown>,
) {
  await upstream.connect()
  expect(upstream.state().status).toBe('connected')
  const sizes = [10, 4 * LIMIT, 20, 30]
  const settled = await Promise.allSettled(
    sizes.map((bytes) => upstream.callTool(tool, args(bytes, bytes > LIMIT ? 0 : 300))),
  )
  expect(settled[1]).toMatchObject({
    status: 'rejected',
    reason: { code: 'UPSTREAM_UNAVAILABLE', message: tooLarge(tool) },
  })
  for (const index of [0, 2, 3]) {
    expect(settled[index]).toMatchObject({
      status: 'fulfilled',
      value: { content: [{ type: 'text', text: 'x'.repeat(sizes[index]) }] },
    })
  }
  expect(upstream.state()).toMatchObject({ status: 'connected', downSince: null, attempt: 0 })
  const next = await upstream.callTool(tool, args(10, 0))
  expect(next.content).toEqual([{ type: 'text', text: 'x'.repeat(10) }])
}

describe('an upstream stdio line that never ends', () => {
  it('closes the connection past 16 x maxMessageBytes: the call fails at once, the server comes back', async () => {
    const { upstream, logger } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env: { UPSTREAM_ENDLESS: '1' } },
      { callTimeoutMs: 30_000, reconnectInitialMs: 50 },
    )
    await upstream.connect()
    expect(upstream.state().status).toBe('connected')
    const started = Date.now()
    await expect(upstream.callTool('endless', {})).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
    })
    // Before: it waited for callTimeoutMs (30 s), and so did every later call (all inside the line).
    expect(Date.now() - started).toBeLessThan(15_000)
    // Down for that reason (the reconnect comes 40 ms or more later), not the call's "Connection closed".
    expect(upstream.state()).toMatchObject({
      status: 'down',
      lastError: expect.stringContaining('an upstream line ran past 16 x gateway.maxMessageBytes'),
    })
    const logs = () => logger.lines.join('\n')
    expect(logs()).toContain(
      'Upstream "bounded" is down: an upstream line ran past 16 x gateway.maxMessageBytes (1,048,576 bytes) without its end',
    )
    await until(() => upstream.state().status === 'connected', 'reconnected')
    expect((await upstream.callTool('tool_0', {})).content).toEqual([{ type: 'text', text: 'ok' }])
  }, 120_000)
})

describe('an upstream flooding messages of its own', () => {
  /** The node fixture with `env`, connected, then closed for the flood over `cap` (said in the log). */
  async function closedForFlood(
    env: Record<string, string>,
    reconnectInitialMs: number,
    cap: number,
  ) {
    const { upstream, logger } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env },
      { reconnectInitialMs, maxServerMessagesPerSecond: cap },
    )
    const flood = floodAt(cap.toLocaleString('en-US'))
    await upstream.connect()
    await until(() => upstream.state().status === 'down', 'down', 20_000)
    expect(upstream.state().lastError, seen(upstream, logger)).toBe(flood)
    expect(logger.lines.join('\n')).toContain(`Upstream "bounded": ${flood}`)
    return { upstream, logger }
  }

  /** The state and the log, for an assertion that fails to say what happened (round 43). */
  const seen = (upstream: UpstreamConnection, logger: { lines: string[] }) =>
    `${JSON.stringify(upstream.state())}\n${logger.lines.join('\n')}`

  // The stdio floods run at a cap of 200, not the default 5,000: on a loaded 2-core machine
  // (load 13-20, two busy loops) they failed at 5,000 ('not seen in 20000 ms: down'), the stray
  // answers too with the fixture's timer catching up. The gateway reads them in the test's
  // process and the fixture is held back by the full pipe: read under 5,000 a second, they never
  // go over the cap. The default (5,000) is checked through the config below.
  it('closes the connection past its cap of notifications a second: down naming the flood, then back', async () => {
    // 20 list_changed every millisecond, for good, from its first tools/list answer on. Before
    // round 34: connected for good, the SDK reading and validating each notification (a core).
    const { upstream, logger } = await closedForFlood({ UPSTREAM_LIST_CHANGED_MS: '1' }, 3000, 200)
    // Made again on the gateway's backoff (reconnectInitialMs, then longer).
    expect(upstream.state(), seen(upstream, logger)).toMatchObject({ status: 'down', attempt: 1 })
    await until(() => upstream.state().status !== 'down', 'reconnecting', 30_000)
    await until(() => upstream.state().status === 'down', 'closed again', 30_000)
    // (It failed here once in round 42's mid run, at load 15-25, unseen since: what it saw.)
    expect(upstream.state().lastError, seen(upstream, logger)).toBe(floodAt('200'))
  }, 120_000)

  it('takes its cap from gateway.maxServerMessagesPerSecond', async () => {
    // 20 list_changed a millisecond (~20,000 a second): under a cap of 1,000,000 it stays up.
    const { upstream } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env: { UPSTREAM_LIST_CHANGED_MS: '1' } },
      { maxServerMessagesPerSecond: 1_000_000 },
    )
    await upstream.connect()
    await new Promise((resolve) => setTimeout(resolve, 3000))
    expect(upstream.state()).toMatchObject({ status: 'connected', lastError: null })
    // 5,000 when not set (the cap every test above sets to 200 to stay clear of a loaded reader).
    expect(parseConfig({ gateway: {} }).gateway.maxServerMessagesPerSecond).toBe(5_000)
    // Outside 100 to 1,000,000: a config error naming the key.
    for (const value of [99, 1_000_001, 1.5])
      expect(() => parseConfig({ gateway: { maxServerMessagesPerSecond: value } })).toThrow(
        /maxServerMessagesPerSecond/,
      )
  }, 60_000)

  it('keeps a server steady under the cap however uneven its bursts; one over the cap is closed', async () => {
    // 19 log notifications at once, then 40, 130, 130 ms later and so on: 190 a second (95% of a
    // cap of 200), 11 bursts (209) within 940 ms now and then.
    const steady = connection(
      {
        command: process.execPath,
        args: [NODE_UPSTREAM],
        env: { UPSTREAM_BURSTS: '19:40,130,130' },
      },
      { maxServerMessagesPerSecond: 200 },
    ).upstream
    // 60 every 100 ms: 3 x the cap, its reserve of 200 spent in ~0.5 s (over the cap even if a
    // loaded machine stretches its timers to twice as long).
    const over = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env: { UPSTREAM_BURSTS: '60:100' } },
      { maxServerMessagesPerSecond: 200, reconnectInitialMs: 60_000 },
    ).upstream
    await Promise.all([steady.connect(), over.connect()])
    const started = Date.now()
    await until(() => over.state().status === 'down', 'the one over the cap down', 20_000)
    expect(over.state().lastError).toContain('faster than 200 a second until its reserve of 200')
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 5000 - (Date.now() - started))))
    // Before: closed within 1-3 s (round 35's window from the first message after the last).
    expect(steady.state()).toMatchObject({ status: 'connected', lastError: null })
  }, 60_000)

  it('counts answers to requests never sent: past its cap a second it is closed the same way', async () => {
    // 20 answers to ids from 100,000 up every millisecond, from its first tools/list answer on.
    // Before: connected for good, the SDK dropping each one (~40% of a core at 50 a ms).
    await closedForFlood({ UPSTREAM_STRAY_MS: '1' }, 60_000, 200)
  }, 60_000)

  for (const own of ['list_changed', 'answers to ids never sent'] as const) {
    it(`closes an HTTP upstream flooding its standalone SSE stream (${own}) the same way`, async () => {
      // A raw Streamable HTTP server: JSON answers to POSTs, and on the GET stream 100 messages
      // a chunk, as fast as the gateway reads them, for good.
      let stray = 100_000
      const chunk = () => {
        let events = ''
        for (let i = 0; i < 100; i += 1) {
          const message =
            own === 'list_changed'
              ? { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }
              : { jsonrpc: '2.0', id: stray++, result: {} }
          events += `event: message\ndata: ${JSON.stringify(message)}\n\n`
        }
        return new TextEncoder().encode(events)
      }
      const served = await listenApp(async (request) => {
        if (request.method === 'GET') {
          const stream = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(chunk()) })
          return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
        }
        const { id, method, params } = (await request.json()) as {
          id?: number
          method: string
          params?: { protocolVersion?: string }
        }
        if (id === undefined) return new Response(null, { status: 202 })
        const result =
          method === 'initialize'
            ? {
                protocolVersion: params?.protocolVersion,
                capabilities: { tools: { listChanged: true } },
                serverInfo: { name: 'flood', version: '1' },
              }
            : { tools: [{ name: 'tool_0', inputSchema: { type: 'object' } }] }
        return Response.json({ jsonrpc: '2.0', id, result })
      })
      open.push(served)
      // A cap of 200, not the default 5,000: this server and the gateway share the test's
      // process, so the flood is only as fast as that process reads it, and on a loaded 2-core
      // machine (two busy loops on top) that fell under 5,000 a second: never closed, 'not seen
      // in 20000 ms: down' (1 run of 3). The stdio floods above use 200 for the same reason.
      const { upstream, logger } = connection(
        { url: `${served.url}/mcp` },
        { reconnectInitialMs: 60_000, maxServerMessagesPerSecond: 200 },
      )
      await upstream.connect()
      // Before: connected for good, the SDK parsing and validating each message.
      await until(() => upstream.state().status === 'down', 'down', 20_000)
      expect(upstream.state().lastError).toBe(floodAt('200'))
      expect(logger.lines.join('\n')).toContain(`Upstream "bounded": ${floodAt('200')}`)
    }, 60_000)
  }

  it('names the flood when it starts during the handshake', async () => {
    // Floods from the initialize request on and answers it 8 s later: the cap closes it first
    // (0.7-1.2 s in on a loaded 2-core machine: 2 s, as it was, left too little room).
    // A cap of 200, as the list_changed flood above.
    const { upstream } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env: { UPSTREAM_FLOOD_EARLY: '1' } },
      { reconnectInitialMs: 60_000, maxServerMessagesPerSecond: 200 },
    )
    await upstream.connect()
    // Before: 'Connection closed' (the connect's own failure covered the reason).
    expect(upstream.state()).toMatchObject({ status: 'down', lastError: floodAt('200') })
  }, 60_000)
})

describe('an upstream that stops reading its stdin', () => {
  // Round 42: the SDK's `send` added a 'drain' listener to the process's stdin for each message
  // waiting (each call and each timed-out call's cancellation): "MaxListenersExceededWarning: 11
  // drain listeners added to [Socket]" in this test process. One listener now (boundUnreadInput).
  const warnings: string[] = []
  const onWarning = (warning: Error) => void warnings.push(`${warning.name}: ${warning.message}`)
  beforeEach(() => {
    warnings.length = 0
    process.on('warning', onWarning)
  })
  afterEach(() => void process.off('warning', onWarning))
  /** Node emits a warning on the next tick: one later, what came. */
  const listenerWarnings = async () => {
    await new Promise((resolve) => setImmediate(resolve))
    return warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))
  }

  /** 64 calls of 32 KiB each (2 MiB): the socket and the process's stream hold a few hundred KiB, our side the rest. */
  async function callMany(upstream: UpstreamConnection) {
    const text = 'x'.repeat(32 * 1024)
    const started = Date.now()
    return Promise.all(
      Array.from({ length: 64 }, () =>
        upstream.callTool('tool_0', { text }).then(
          () => 'answered' as const,
          (error: unknown) => ({ message: (error as Error).message, at: Date.now() - started }),
        ),
      ),
    )
  }
  const isRefusal = (result: unknown): result is { message: string; at: number } =>
    typeof result === 'object' &&
    (result as { message: string }).message.includes('not reading its input')

  it('gets no more than maxMessageBytes queued for it: later calls fail at once, marked slow; after callTimeoutMs with none of it read, it is closed and made again', async () => {
    const { upstream, logger } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env: { UPSTREAM_STOP_READING: '1' } },
      { callTimeoutMs: 3000, reconnectInitialMs: 200 },
    )
    await upstream.connect()
    const calls = callMany(upstream)
    // Slow, not dropped at once (a live server reading a large call can hold a backlog).
    await until(() => upstream.state().status === 'slow', 'slow', 10_000)
    const settled = await calls
    // Before round 36: all 64 queued (2 MiB in our memory, and so on for every later call), each
    // timing out at callTimeoutMs: 'did not answer in time (Request timed out)'.
    const refused = settled.filter(isRefusal)
    expect(refused.length).toBeGreaterThan(32)
    for (const result of refused) {
      expect(result.message).toMatch(
        /^Upstream server "bounded": the upstream is not reading its input: [\d,]+ bytes wait to be written to its stdin, over gateway\.maxMessageBytes \(65,536\); the request was not sent; it is marked slow\. Retry later\.$/,
      )
      expect(result.at).toBeLessThan(2000)
    }
    // Round 37: none of the backlog read for callTimeoutMs: down with that reason, then a new
    // process (this one stops reading again after its first listing, but is connected). Before,
    // it stayed slow for good: 'not seen in 20000 ms: down'.
    await until(() => upstream.state().status === 'down', 'down', 20_000)
    expect(upstream.state().lastError).toMatch(
      /^the upstream read none of its input for 3,000 ms \(gateway\.callTimeoutMs\): [\d,]+ bytes wait to be written to its stdin, over gateway\.maxMessageBytes \(65,536\); the connection is closed and made again$/,
    )
    await until(() => upstream.state().status === 'connected', 'connected again', 30_000)
    expect(upstream.state()).toMatchObject({ outages: 1, toolCount: 3 })
    const down = logger.lines.filter((line) => line.includes('is down'))
    expect(down).toHaveLength(1)
    expect(down[0]).toContain('read none of its input for 3,000 ms')
    expect(await listenerWarnings()).toEqual([])
  }, 90_000)

  // rpc4 (round 37): the watch started at the first refusal only. A process that stops reading
  // under light traffic never gets a backlog over maxMessageBytes (here 8 MiB), so nothing was
  // refused and every call waited callTimeoutMs, the server `slow` for good.
  it('is closed and made again when it stops reading before its backlog reaches maxMessageBytes: a call times out, none of what waits is read for callTimeoutMs', async () => {
    const { upstream, logger } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env: { UPSTREAM_STOP_READING: '1' } },
      { callTimeoutMs: 2000, reconnectInitialMs: 200, maxMessageBytes: 8 * 1024 * 1024 },
    )
    await upstream.connect()
    // 8 calls of 64 KiB: more than the pipe and the process's stream take, far under the bound.
    const text = 'x'.repeat(64 * 1024)
    const settled = await Promise.all(
      Array.from({ length: 8 }, () =>
        upstream.callTool('tool_0', { text }).then(
          () => 'answered',
          (error: unknown) => (error as Error).message,
        ),
      ),
    )
    for (const result of settled) expect(result).toMatch(/did not answer in time/)
    await until(() => upstream.state().status === 'down', 'down', 20_000)
    expect(upstream.state().lastError).toMatch(
      /^the upstream read none of its input for 2,000 ms \(gateway\.callTimeoutMs\): [\d,]+ bytes wait to be written to its stdin; the connection is closed and made again$/,
    )
    await until(() => upstream.state().status === 'connected', 'connected again', 30_000)
    expect(upstream.state()).toMatchObject({ outages: 1, toolCount: 3 })
    expect(logger.lines.filter((line) => line.includes('is down'))).toHaveLength(1)
    expect(await listenerWarnings()).toEqual([])
  }, 90_000)

  // Round 44: the watch was a plain timer, which may end up to ~1 ms early (round 43): the stall
  // it named ("read none of its input for 2,000 ms") could be shorter. With every timer ending at
  // half its time, it dropped the process ~1 s after the first call timed out; now >= 2 s.
  it('waits at least callTimeoutMs before it decides a stall, though every timer ends early', async () => {
    const { upstream } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM], env: { UPSTREAM_STOP_READING: '1' } },
      { callTimeoutMs: 2000, reconnectInitialMs: 200, maxMessageBytes: 8 * 1024 * 1024 },
    )
    await upstream.connect()
    const undo = earlyTimers(0.5)
    try {
      // As above: calls that time out (here early: the SDK's timer too) with input left unread.
      const text = 'x'.repeat(64 * 1024)
      const settledAt: number[] = []
      await Promise.all(
        Array.from({ length: 8 }, () =>
          upstream.callTool('tool_0', { text }).then(
            () => settledAt.push(performance.now()),
            () => settledAt.push(performance.now()),
          ),
        ),
      )
      // The watch starts when the first call fails, before that failure reaches its caller.
      const firstFailure = Math.min(...settledAt)
      await until(() => upstream.state().status === 'down', 'down', 20_000)
      expect(upstream.state().lastError).toMatch(/read none of its input for 2,000 ms/)
      // Polled every 20 ms (10 with the early timers): a little after the drop.
      expect(performance.now() - firstFailure).toBeGreaterThanOrEqual(2000)
    } finally {
      undo()
    }
  }, 90_000)

  it('is kept when it reads again within callTimeoutMs: the calls sent are answered, no restart', async () => {
    const { upstream, logger } = connection(
      {
        command: process.execPath,
        args: [NODE_UPSTREAM],
        env: { UPSTREAM_STOP_READING_MS: '1000' },
      },
      { callTimeoutMs: 3000, reconnectInitialMs: 200 },
    )
    await upstream.connect()
    const settled = await callMany(upstream)
    expect(settled.filter(isRefusal).length).toBeGreaterThan(0)
    expect(settled.filter((result) => result === 'answered').length).toBeGreaterThan(0)
    // Past two looks of the watch (callTimeoutMs each): still the first process, serving.
    await new Promise((resolve) => setTimeout(resolve, 7000))
    await expect(upstream.callTool('tool_0', {})).resolves.toMatchObject({
      content: [{ text: 'ok' }],
    })
    expect(upstream.state()).toMatchObject({ status: 'connected', outages: 0 })
    expect(logger.lines.filter((line) => line.includes('is down'))).toEqual([])
  }, 90_000)
})

describe('a call still in flight on a dropped connection', () => {
  it('fails that call without taking down the connection made since', async () => {
    // A process that ignores the end of its stdin and SIGTERM (the SDK's close SIGKILLs it 4 s
    // later) floods while a call is in flight: the gateway drops it and reconnects within
    // ~0.3 s; the old call fails only when the old process is gone, with the new one up.
    const { upstream, logger } = connection(
      {
        command: process.execPath,
        args: [NODE_UPSTREAM],
        env: { UPSTREAM_DEAF: '1', UPSTREAM_FLOOD_ON_CALL: '1' },
      },
      { maxServerMessagesPerSecond: 100, reconnectInitialMs: 200, callTimeoutMs: 30_000 },
    )
    await upstream.connect()
    const call = upstream.callTool('flood', {}).catch((error: unknown) => error)
    await until(() => upstream.state().status === 'down', 'down', 20_000)
    await until(() => upstream.state().status === 'connected', 'back', 20_000)
    const failed = await call
    expect(failed).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: expect.stringMatching(
        /^Upstream server "bounded" dropped the connection this call went through \(the upstream sent messages of its own .*\); it is connected again: retry the call\.$/,
      ),
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Before: the old call's "Connection closed" marked the new connection down and closed it
    // ('is down' logged twice, outages 2).
    expect(upstream.state()).toMatchObject({ status: 'connected', outages: 1, lastError: null })
    expect(logger.lines.filter((line) => line.includes('"bounded" is down'))).toHaveLength(1)
    expect((await upstream.callTool('tool_0', {})).content).toEqual([{ type: 'text', text: 'ok' }])
  }, 60_000)
})

describe('the reconnect backoff', () => {
  it('keeps growing over connections that end within reconnectMaxMs, and so does the attempt reported; one up that long starts both over', async () => {
    const { upstream } = connection(
      { command: process.execPath, args: [NODE_UPSTREAM] },
      { reconnectInitialMs: 300, reconnectMaxMs: 3000 },
    )
    const reported: Array<{ attempt: number; outages: number }> = []
    /** Ends the process (SIGKILL) and reads the delay planned for the next attempt. */
    const dropped = async () => {
      expect(upstream.kill()).toBe(true)
      await until(() => upstream.state().status === 'down', 'down')
      const { nextRetryAt, downSince, attempt, outages } = upstream.state()
      reported.push({ attempt, outages })
      // Both set by the same close: the delay itself (300 ms x 2^step, ±20%).
      const delay = Date.parse(nextRetryAt!) - Date.parse(downSince!)
      await until(() => upstream.state().status === 'connected', 'back')
      expect(upstream.state()).toMatchObject({ attempt: 0, outages, downSince: null })
      return delay
    }
    await upstream.connect()
    expect(upstream.state()).toMatchObject({ attempt: 0, outages: 0 })
    const delays = [await dropped(), await dropped(), await dropped()]
    // Before: each connect reset the backoff, so a server closing within a second of every
    // connect (a flood, a crash) came back every 240-360 ms here (1-2 s at the defaults).
    expect(delays[0]).toBeLessThan(400)
    expect(delays[1]).toBeGreaterThan(450)
    expect(delays[2]).toBeGreaterThan(900)
    await new Promise((resolve) => setTimeout(resolve, 3100))
    expect(await dropped()).toBeLessThan(400)
    // The attempt reported is the backoff's: attempt 3 waits 4 x reconnectInitialMs. Before: 1
    // at each outage ("attempt 1" waiting 16 s at the defaults), and no count of the outages.
    expect(reported).toEqual([
      { attempt: 1, outages: 1 },
      { attempt: 2, outages: 2 },
      { attempt: 3, outages: 3 },
      { attempt: 1, outages: 4 },
    ])
  }, 120_000)
})

describe('an upstream answer over gateway.maxMessageBytes', () => {
  it('fails only its stdio call: the line is skipped, the process goes on, the others answer', async () => {
    const { upstream, logger } = notes()
    await oneLargeAmongMany(upstream, 'big_answer', (bytes, delay_ms) => ({ bytes, delay_ms }))
    expect(logger.lines.join('\n')).toContain(
      'sent a message over 65,536 bytes (gateway.maxMessageBytes): dropped (the answer to request',
    )
  }, 150_000)

  for (const json of [true, false]) {
    it(`fails only its HTTP call (${json ? 'JSON' : 'SSE'} answers); the others and the next call work`, async () => {
      const served = await bigHttpUpstream(json)
      const { upstream } = connection({ url: `${served.url}/mcp` })
      await oneLargeAmongMany(upstream, 'big', (bytes, delayMs) => ({ bytes, delayMs }))
    }, 60_000)
  }
})

describe('an HTTP upstream answer that never ends', () => {
  for (const json of [true, false]) {
    it(`fails its call at maxMessageBytes, reading a bounded part of it (${json ? 'a JSON body' : 'one SSE event'} streaming for good)`, async () => {
      let streamed = 0
      const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
      const endless = (id: unknown) => {
        const head = `${json ? '' : 'event: message\ndata: '}{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`
        const body = new ReadableStream<Uint8Array>({
          start: (controller) => controller.enqueue(new TextEncoder().encode(head)),
          // Only as fast as the gateway reads: what it read is what was streamed.
          pull: (controller) => {
            streamed += chunk.length
            controller.enqueue(chunk)
          },
        })
        const type = json ? 'application/json' : 'text/event-stream'
        return new Response(body, { headers: { 'content-type': type } })
      }
      const register = (server: McpServer) => {
        for (const name of ['endless', 'ok'])
          server.registerTool(name, {}, () => ({ content: [{ type: 'text', text: name }] }))
      }
      const served = await httpUpstream(json, register, async (request) => {
        const text = request.method === 'POST' ? await request.clone().text() : ''
        const message = text
          ? (JSON.parse(text) as { id?: unknown; params?: { name?: string } })
          : {}
        return message.params?.name === 'endless' ? endless(message.id) : undefined
      })
      const { upstream } = connection({ url: `${served.url}/mcp` }, { callTimeoutMs: 30_000 })
      await upstream.connect()
      const started = Date.now()
      await expect(upstream.callTool('endless', {})).rejects.toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        message: tooLarge('endless'),
      })
      expect(Date.now() - started).toBeLessThan(15_000)
      // The gateway read up to the limit and cancelled the body: the stream stops (what it wrote
      // past the limit is what the sockets' buffers held), the upstream told by the closed socket.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const after = streamed
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(streamed).toBe(after)
      expect(streamed).toBeLessThan(32 * 1024 * 1024)
      expect(upstream.state()).toMatchObject({
        status: 'connected',
        lastError: `tools/call endless: an upstream message was over 65,536 bytes (gateway.maxMessageBytes)`,
      })
      expect((await upstream.callTool('ok', {})).content).toEqual([{ type: 'text', text: 'ok' }])
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
    // Short lines, 0.5 s apart, until one is logged: the flood's last window (1 s from its first
    // line, by the wall clock, whenever the lines arrived) is over. Counted: those dropped are in
    // the note of the one logged.
    const shorts: Array<Promise<unknown>> = []
    let nextShort = Date.now() + 1000
    await until(() => {
      if (logger.lines.some((line) => line.includes('[bounded] token') && !line.includes('cut at')))
        return true
      const now = Date.now()
      if (now >= nextShort) {
        nextShort = now + 500
        shorts.push(upstream.callTool('stderr_lines', { count: 1, chars: 10 }))
      }
      return false
    }, 'a short line logged after the flood')
    await Promise.all(shorts)
    const logged = logger.lines.filter(
      (line) => line.includes('[bounded]') && line.includes('token'),
    )
    const flood = logged.filter((line) => line.includes('line cut at'))
    // The limiter's windows start at a line's arrival: the flood may share the window of the
    // fixture's start-up line, and may reach into a second window when its 2 MB come slowly
    // through the pipe (a loaded machine). So no fixed count; what holds however the lines
    // arrive: a window past its limit drops lines, and the first line logged after the drops
    // names how many. And the log's times fit windows of at most 20 lines a second: a count of
    // lines between two notes does not (the flood may start in the start-up line's window, not
    // full, and go on into the next without a note: test/mcp/gateway/upstream-stderr.test.ts).
    const dropNote = /\((\d+) earlier stderr line\(s\) dropped: over (\d+) a second\)/
    const dropNotes = logged.map((line) => dropNote.exec(line))
    const stderrLines = logger.lines.filter((line) => line.includes(' DEBUG [bounded] '))
    // How the lines came, for a failure's message (a load failure of round 38 lost it): each
    // stderr line's time (the start-up line's too), flood or short, and the drops its note names.
    const arrivals = `${shorts.length} short(s) sent; logged: ${stderrLines
      .map((line) => {
        const kind = line.includes('line cut at')
          ? 'flood'
          : line.includes('token')
            ? 'short'
            : 'other'
        const note = dropNote.exec(line)
        return `${line.slice(11, 23)} ${kind}${note ? ` +${note[1]} dropped` : ''}`
      })
      .join(', ')}`
    const times = stderrLines.map((line) => ({
      at: Date.parse(line.slice(0, 24)),
      note: dropNote.test(line),
    }))
    // The logger's clock is read just after the limiter's: 50 ms for a loaded machine's pauses.
    expect(fitsStderrLimiter(times, MAX_STDERR_LINES_PER_SECOND, 50), arrivals).toBe(true)
    // At least its first window's (less the start-up line), never all of it.
    expect(flood.length, arrivals).toBeGreaterThanOrEqual(MAX_STDERR_LINES_PER_SECOND - 1)
    expect(flood.length, arrivals).toBeLessThan(200)
    const dropped = dropNotes.reduce((sum, note) => sum + (note ? Number(note[1]) : 0), 0)
    // The flood's lines not logged, and the short lines that came while its last window lasted
    // (the one logged came after them; any sent after it are not in these notes).
    expect(dropped - (200 - flood.length), arrivals).toBeGreaterThanOrEqual(0)
    expect(dropped - (200 - flood.length), arrivals).toBeLessThan(shorts.length)
    for (const line of logged) {
      expect(line).not.toContain(TOKEN)
      expect(line.length).toBeLessThan(MAX_STDERR_LINE_CHARS + 200)
    }
    expect(flood[0]).toContain(`… (line cut at ${MAX_STDERR_LINE_CHARS} characters)`)
  }, 150_000)
})
