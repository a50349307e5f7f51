import { describe, expect, it } from 'vitest'
import { unavailableError } from '../../../src/mcp/gateway/classify-upstream-error.ts'
import { formatDuration, upstreamState } from '../../../src/mcp/gateway/upstream-state.ts'

const now = Date.parse('2026-01-01T00:10:00Z')
const base = {
  name: 'github',
  transport: 'http' as const,
  target: 'https://example.com/mcp',
  tags: [],
  toolCount: 12,
}

describe('upstream state', () => {
  it('formats durations for messages', () => {
    expect(formatDuration(42_000)).toBe('42 s')
    expect(formatDuration(185_000)).toBe('3 min 5 s')
    expect(formatDuration(7_260_000)).toBe('2 h 1 min')
  })

  it('reports how long a server has been down', () => {
    const state = upstreamState(
      { ...base, status: 'down', downSince: now - 90_000, lastError: 'fetch failed' },
      now,
    )
    expect(state).toMatchObject({
      status: 'down',
      downSince: '2026-01-01T00:08:30.000Z',
      downForMs: 90_000,
      lastSyncAt: null,
    })
  })

  it('fails calls to a down server with UPSTREAM_UNAVAILABLE naming it, its downtime and error', () => {
    const state = upstreamState({
      ...base,
      status: 'down',
      downSince: Date.now() - 90_000,
      lastError: 'ECONNREFUSED',
    })
    const error = unavailableError(state)
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE')
    expect(error.message).toBe(
      'Upstream server "github" is down (for 1 min 30 s; last error: ECONNREFUSED). Its tools stay searchable; see list_servers for its status.',
    )
    expect(error.details).toMatchObject({ server: 'github', downForMs: expect.any(Number) })
  })

  it('reports a running reconnect attempt with its number, and a planned one with its time', () => {
    const facts = { ...base, downSince: now - 5_000, lastError: 'Request timed out' }
    const running = upstreamState({ ...facts, status: 'reconnecting', attempt: 3 }, now)
    expect(running).toMatchObject({ status: 'reconnecting', attempt: 3, nextRetryAt: null })
    expect(unavailableError(running).message).toBe(
      'Upstream server "github" is down (for 5 s; last error: Request timed out). Reconnect attempt 3 is running. Its tools stay searchable; see list_servers for its status.',
    )
    expect(unavailableError(running).details).toMatchObject({ status: 'reconnecting', attempt: 3 })
    const planned = upstreamState(
      { ...facts, status: 'down', attempt: 4, nextRetryAt: now + 8_000 },
      now,
    )
    expect(planned).toMatchObject({ attempt: 4, nextRetryAt: '2026-01-01T00:10:08.000Z' })
    expect(upstreamState({ ...base, status: 'connected' }, now).attempt).toBe(0)
  })
})
