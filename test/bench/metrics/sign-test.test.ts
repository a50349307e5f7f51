import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { signTestP } from '../../../src/bench/metrics/sign-test.ts'

/** The same test in exact integer arithmetic: 2 · Σ_{k ≤ min} C(n, k) / 2^n, capped at 1. */
function exactP(wins: number, losses: number): number {
  const n = wins + losses
  if (n === 0) return 1
  let choose = 1n
  let tail = 0n
  for (let k = 0; k <= Math.min(wins, losses); k += 1) {
    tail += choose
    choose = (choose * BigInt(n - k)) / BigInt(k + 1)
  }
  const scale = 1_000_000_000_000n
  return Math.min(1, Number((2n * tail * scale) / 2n ** BigInt(n)) / Number(scale))
}

describe('signTestP', () => {
  it('gives the textbook values', () => {
    expect(signTestP(0, 0)).toBe(1)
    expect(signTestP(5, 0)).toBeCloseTo(2 / 32, 12) // 2 · (1/2)^5
    expect(signTestP(3, 7)).toBeCloseTo((2 * (1 + 10 + 45 + 120)) / 1024, 12)
    expect(signTestP(8, 5)).toBeCloseTo((2 * (1 + 13 + 78 + 286 + 715 + 1287)) / 8192, 12)
    expect(signTestP(1, 1)).toBe(1)
    expect(signTestP(10, 10)).toBe(1)
  })

  it('is symmetric, at most 1, and falls as the split grows more uneven', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.nat(200), (wins, losses) => {
        const p = signTestP(wins, losses)
        expect(p).toBe(signTestP(losses, wins))
        expect(p).toBeGreaterThan(0)
        expect(p).toBeLessThanOrEqual(1)
        if (wins > losses) expect(signTestP(wins + 1, losses)).toBeLessThanOrEqual(p)
      }),
    )
  })

  it('matches exact integer arithmetic', () => {
    fc.assert(
      fc.property(fc.nat(120), fc.nat(120), (wins, losses) => {
        expect(signTestP(wins, losses)).toBeCloseTo(exactP(wins, losses), 9)
      }),
    )
  })

  it('stays right beyond the 1,074 queries where 2^-n underflows', () => {
    expect(signTestP(700, 700)).toBe(1)
    expect(signTestP(1500, 1499)).toBe(1)
    // Normal approximation with continuity correction: 2·Φ(−(650 − 600.5) / √325) ≈ 0.0060.
    expect(signTestP(700, 600)).toBeGreaterThan(0.0055)
    expect(signTestP(700, 600)).toBeLessThan(0.0066)
    const p = signTestP(600, 400)
    expect(p).toBeGreaterThan(0)
    expect(p).toBeLessThan(1e-9)
  })
})
