import { describe, expect, it } from 'vitest'
import { backoffDelay } from '../../../src/mcp/gateway/backoff-delay.ts'

describe('backoffDelay', () => {
  const middle = () => 0.5

  it('doubles per attempt from the initial delay', () => {
    expect([0, 1, 2, 3].map((attempt) => backoffDelay(attempt, 1000, 60_000, middle))).toEqual([
      1000, 2000, 4000, 8000,
    ])
  })

  it('never exceeds the maximum, even with jitter and huge attempt counts', () => {
    for (const attempt of [10, 100, 10_000]) {
      expect(backoffDelay(attempt, 1000, 60_000, () => 0.999)).toBeLessThanOrEqual(60_000)
    }
  })

  it('jitters within ±20%', () => {
    expect(backoffDelay(2, 1000, 60_000, () => 0)).toBe(3200)
    expect(backoffDelay(2, 1000, 60_000, () => 0.999)).toBeCloseTo(4800, -1)
  })
})
