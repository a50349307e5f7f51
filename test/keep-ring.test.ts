import { describe, expect, it } from 'vitest'
import { KEEP_ONE_MISS_IN, KeepRing } from '../src/keep-ring.ts'

describe('KeepRing', () => {
  it('keeps every key until full, then one in KEEP_ONE_MISS_IN in the place of the oldest', () => {
    const evicted: number[] = []
    const ring = new KeepRing<number>(3, (key) => evicted.push(key))
    expect([0, 1, 2].map((key) => ring.admit(key))).toEqual([true, true, true])
    expect(ring.size).toBe(3)
    const offered = Array.from({ length: 3 * KEEP_ONE_MISS_IN }, (_, at) => 100 + at)
    const kept = offered.filter((key) => ring.admit(key))
    // Each KEEP_ONE_MISS_IN-th offer is kept, replacing 0, then 1, then 2: the oldest first.
    expect(kept).toEqual([1, 2, 3].map((turn) => 100 + turn * KEEP_ONE_MISS_IN - 1))
    expect(evicted).toEqual([0, 1, 2])
    expect(ring.size).toBe(3)
  })

  it('holds at least one key', () => {
    const ring = new KeepRing<string>(0, () => {})
    expect(ring.capacity).toBe(1)
    expect(ring.admit('a')).toBe(true)
  })
})
