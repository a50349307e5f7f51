/**
 * gateway.relistGapMs and gateway.relistGapFactor: the least time between two listings of a
 * server (constants of upstream-connection.ts, 1 s and x4, until round 43), with a real stdio
 * server (test/mcp/fixtures/tiny-upstream.sh).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig, parseConfig } from '../../../src/config/load-config.ts'
import { RELIST_GAP_FACTOR, RELIST_GAP_MS } from '../../../src/mcp/gateway/upstream-connection.ts'
import { earlyTimers } from '../../helpers/early-timers.ts'
import { useUpstreamConnections } from '../../helpers/upstream-connections.ts'

const TINY = fileURLToPath(new URL('../fixtures/tiny-upstream.sh', import.meta.url))

const upstreamConnection = useUpstreamConnections()

/** The real setTimeout, for the tests' own waits while timers end early. */
const realTimeout = globalThis.setTimeout
let undoEarlyTimers: (() => void) | undefined
afterEach(() => {
  undoEarlyTimers?.()
  undoEarlyTimers = undefined
})

function tinyUpstream(env: Record<string, string>, gateway: Record<string, unknown>) {
  return upstreamConnection('tiny', {
    servers: { tiny: { command: 'bash', args: [TINY], env } },
    ...gateway,
  })
}

describe('gateway.relistGapMs and relistGapFactor', () => {
  it('default to 1 s and x4, are set by config or env, and are bounded', async () => {
    expect(parseConfig({}).gateway).toMatchObject({ relistGapMs: 1000, relistGapFactor: 4 })
    expect([RELIST_GAP_MS, RELIST_GAP_FACTOR]).toEqual([1000, 4])
    const env = { TOOLSEL_GATEWAY_RELIST_GAP_MS: '2500', TOOLSEL_GATEWAY_RELIST_GAP_FACTOR: '1.5' }
    expect((await loadConfig({ env })).gateway).toMatchObject({
      relistGapMs: 2500,
      relistGapFactor: 1.5,
    })
    for (const [key, value, why] of [
      ['relistGapMs', 99, /gateway\.relistGapMs.*at least 100 ms/],
      ['relistGapMs', 3_600_001, /gateway\.relistGapMs.*at most 3600000 ms/],
      ['relistGapFactor', 0.5, /gateway\.relistGapFactor.*at least 1/],
      ['relistGapFactor', 101, /gateway\.relistGapFactor.*at most 100/],
    ] as const) {
      expect(() => parseConfig({ gateway: { [key]: value } })).toThrow(why)
    }
    await expect(loadConfig({ env: { TOOLSEL_GATEWAY_RELIST_GAP_MS: '0' } })).rejects.toThrow(
      /TOOLSEL_GATEWAY_RELIST_GAP_MS/,
    )
  })

  it('waits relistGapMs after a listing before the next one', async () => {
    // Before round 43 the gap was 1 s whatever the config said (0.5 s of slack for a busy host).
    const upstream = tinyUpstream({ TINY_TOOLS: '3' }, { relistGapMs: 3000 })
    await upstream.connect()
    expect(upstream.state().status).toBe('connected')
    const started = performance.now()
    await upstream.sync()
    expect(performance.now() - started).toBeGreaterThanOrEqual(2500)
  }, 60_000)

  it("waits relistGapFactor times the listing's own time when that is longer", async () => {
    // Two pages of 0.1 s each: a listing of 0.2 s or more, a gap of 20 times that (4 s or more);
    // before round 43, x4 (0.8 s) and so the 1 s floor.
    const upstream = tinyUpstream(
      { TINY_TOOLS: '3', TINY_LIST_DELAY: '0.1' },
      { relistGapMs: 100, relistGapFactor: 20 },
    )
    await upstream.connect()
    const listingMs = upstream.state().lastLatencyMs ?? 0
    expect(listingMs).toBeGreaterThanOrEqual(190)
    const started = performance.now()
    await upstream.sync()
    expect(performance.now() - started).toBeGreaterThanOrEqual(20 * listingMs - 500)
  }, 60_000)

  it('keeps the gap though every timer ends early (at half its time)', async () => {
    // A Node timer may end up to ~1 ms early by performance.now() (round 43): the gap is a floor.
    const upstream = tinyUpstream({ TINY_TOOLS: '3' }, { relistGapMs: 1000, relistGapFactor: 1 })
    await upstream.connect()
    expect(upstream.state().status).toBe('connected')
    const started = performance.now()
    undoEarlyTimers = earlyTimers(0.5)
    await upstream.sync()
    undoEarlyTimers()
    // Not 1000: the gap counts from the listing's end, a little before `started`.
    expect(performance.now() - started).toBeGreaterThanOrEqual(800)
  }, 60_000)

  it('reconnects no sooner than the backoff, though every timer ends early (at a quarter of its time)', async () => {
    // An HTTP server refusing every request: each connect attempt is one initialize POST.
    const arrivals: number[] = []
    const refusing = createServer((request, response) => {
      if (request.method === 'POST') arrivals.push(performance.now())
      request.resume()
      response.writeHead(500, { 'content-type': 'text/plain' }).end('down')
    })
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = refusing.address() as AddressInfo
      // The backoff is then 640-800 ms each time (reconnectInitialMs x 0.8-1.2, capped at 800).
      const upstream = upstreamConnection('down', {
        servers: { down: { url: `http://127.0.0.1:${port}/mcp` } },
        reconnectInitialMs: 800,
        reconnectMaxMs: 800,
      })
      // Timers end at a quarter of their time: a retry that trusted one timer comes 160-200 ms
      // plus a connect (up to ~160 ms under load) after the last. (A 320-400 ms backoff with
      // timers at half came 234-298 ms apart under load: too close to 320 to tell.)
      undoEarlyTimers = earlyTimers(0.25)
      await upstream.connect()
      expect(upstream.state().status).toBe('down')
      const deadline = performance.now() + 30_000
      while (arrivals.length < 3 && performance.now() < deadline)
        await new Promise((resolve) => realTimeout(resolve, 20))
      undoEarlyTimers()
      expect(arrivals.length).toBeGreaterThanOrEqual(3)
      for (let i = 1; i < 3; i++) expect(arrivals[i] - arrivals[i - 1]).toBeGreaterThanOrEqual(640)
    } finally {
      refusing.closeAllConnections()
      await new Promise((resolve) => refusing.close(resolve))
    }
  }, 60_000)
})
