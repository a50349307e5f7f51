/**
 * gateway.relistGapMs and gateway.relistGapFactor: the least time between two listings of a
 * server (constants of upstream-connection.ts, 1 s and x4, until round 43), with a real stdio
 * server (test/mcp/fixtures/tiny-upstream.sh).
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadConfig, parseConfig } from '../../../src/config/load-config.ts'
import { RELIST_GAP_FACTOR, RELIST_GAP_MS } from '../../../src/mcp/gateway/upstream-connection.ts'
import { useUpstreamConnections } from '../../helpers/upstream-connections.ts'

const TINY = fileURLToPath(new URL('../fixtures/tiny-upstream.sh', import.meta.url))

const upstreamConnection = useUpstreamConnections()

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
})
