import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  candidateRecall,
  mergeRankedCandidates,
  recallAtK,
} from '../../../src/bench/metrics/candidate-recall.ts'

const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g')
const ranked = fc.uniqueArray(id, { maxLength: 6 })
const steps = fc.array(ranked, { maxLength: 4 })
const gold = fc.uniqueArray(id, { minLength: 1, maxLength: 4 })

describe('mergeRankedCandidates', () => {
  it('interleaves the steps by rank and keeps the first place of repeats', () => {
    expect(mergeRankedCandidates([['a', 'b', 'c'], ['d', 'a'], ['e']])).toEqual([
      'a',
      'd',
      'e',
      'b',
      'c',
    ])
  })

  it('is the step list itself when there is one step', () => {
    fc.assert(
      fc.property(ranked, (list) => {
        expect(mergeRankedCandidates([list])).toEqual(list)
      }),
    )
  })

  it('holds exactly the union of the steps, without repeats', () => {
    fc.assert(
      fc.property(steps, (lists) => {
        const merged = mergeRankedCandidates(lists)
        expect(new Set(merged).size).toBe(merged.length)
        expect(new Set(merged)).toEqual(new Set(lists.flat()))
      }),
    )
  })
})

describe('recallAtK', () => {
  it('never decreases with K and reaches the pool recall', () => {
    fc.assert(
      fc.property(steps, gold, (lists, goldIds) => {
        const merged = mergeRankedCandidates(lists)
        let previous = 0
        for (const k of [1, 3, 5, 10, 15]) {
          const value = recallAtK(merged, goldIds, k)
          expect(value).toBeGreaterThanOrEqual(previous)
          expect(value).toBeLessThanOrEqual(1)
          previous = value
        }
        expect(recallAtK(merged, goldIds, merged.length)).toBe(
          candidateRecall(lists.flat(), goldIds),
        )
      }),
    )
  })

  it('counts the share of gold among the first K', () => {
    expect(recallAtK(['x', 'a', 'y', 'b'], ['a', 'b'], 1)).toBe(0)
    expect(recallAtK(['x', 'a', 'y', 'b'], ['a', 'b'], 3)).toBe(0.5)
    expect(recallAtK(['x', 'a', 'y', 'b'], ['a', 'b'], 4)).toBe(1)
    expect(candidateRecall([], [])).toBe(1)
  })
})
