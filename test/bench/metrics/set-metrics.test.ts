import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { exactMatch, setScores } from '../../../src/bench/metrics/set-metrics.ts'

const ids = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 8 })
const sameSet = (left: string[], right: string[]) => {
  const a = new Set(left)
  const b = new Set(right)
  return a.size === b.size && [...a].every((id) => b.has(id))
}
const shuffled = (list: string[], seed: number) =>
  list
    .map((id, index) => ({ id, key: Math.sin(seed + index * 7.13) }))
    .sort((a, b) => a.key - b.key)
    .map((entry) => entry.id)

describe('setScores', () => {
  it('gives exact match 1 exactly when the sets are equal', () => {
    fc.assert(
      fc.property(ids, ids, (predicted, gold) => {
        expect(exactMatch(predicted, gold)).toBe(sameSet(predicted, gold) ? 1 : 0)
      }),
    )
  })

  it('keeps every score in [0, 1]', () => {
    fc.assert(
      fc.property(ids, ids, (predicted, gold) => {
        for (const value of Object.values(setScores(predicted, gold))) {
          expect(value).toBeGreaterThanOrEqual(0)
          expect(value).toBeLessThanOrEqual(1)
        }
      }),
    )
  })

  it('ignores the order and repetition of predictions and gold', () => {
    fc.assert(
      fc.property(ids, ids, fc.integer(), (predicted, gold, seed) => {
        const reordered = setScores(
          [...shuffled(predicted, seed), ...predicted],
          shuffled(gold, -seed),
        )
        expect(reordered).toEqual(setScores(predicted, gold))
      }),
    )
  })

  it('scores 1 everywhere when the prediction equals the gold', () => {
    fc.assert(
      fc.property(ids, (gold) => {
        expect(setScores(gold, gold)).toEqual({ exactMatch: 1, precision: 1, recall: 1, f1: 1 })
      }),
    )
  })

  it('follows the documented empty-set conventions', () => {
    expect(setScores([], [])).toEqual({ exactMatch: 1, precision: 1, recall: 1, f1: 1 })
    expect(setScores([], ['a'])).toEqual({ exactMatch: 0, precision: 0, recall: 0, f1: 0 })
    expect(setScores(['a'], [])).toEqual({ exactMatch: 0, precision: 0, recall: 1, f1: 0 })
  })

  it('computes precision, recall and F1 of a partial overlap', () => {
    const scores = setScores(['a', 'b', 'x'], ['a', 'b', 'c', 'd'])
    expect(scores.exactMatch).toBe(0)
    expect(scores.precision).toBeCloseTo(2 / 3)
    expect(scores.recall).toBeCloseTo(1 / 2)
    expect(scores.f1).toBeCloseTo(4 / 7)
  })
})
