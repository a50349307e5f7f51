import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TopK } from '../../src/retrieve/top-k.ts'

/** The first `k` (position, score) pairs of `scores` by sorting all: score desc, position asc. */
function bestFirst(scores: readonly number[], k: number) {
  return scores
    .map((score, position) => ({ position, score }))
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, k)
}

describe('TopK', () => {
  it('reset empties it for another query of any k, on its arrays or larger ones', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            scores: fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 40 }),
            k: fc.integer({ min: 0, max: 30 }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc.integer({ min: 0, max: 30 }),
        (queries, first) => {
          const top = new TopK(first)
          for (const { scores, k } of queries) {
            top.reset(k)
            expect(top.k).toBe(k)
            expect(top.threshold).toBe(new TopK(k).threshold)
            scores.forEach((score, position) => top.push(position, score))
            const expected = bestFirst(scores, k)
            expect(top.sorted()).toEqual(expected)
          }
        },
      ),
    )
  })

  it('keeps the same pairs as sorting everything (score desc, position asc)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 60 }),
        fc.integer({ min: 0, max: 70 }),
        (scores, k) => {
          const top = new TopK(k)
          scores.forEach((score, position) => top.push(position, score))
          const expected = bestFirst(scores, k)
          expect(top.sorted()).toEqual(expected)
        },
      ),
    )
  })

  it('stays a valid heap after sorted(): later pushes and a second sorted() agree with sorting everything', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 60 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 20 }),
        (scores, split, k) => {
          const top = new TopK(k)
          const cut = Math.min(split, scores.length)
          scores.slice(0, cut).forEach((score, position) => top.push(position, score))
          const first = top.sorted()
          expect(top.sorted()).toEqual(first)
          scores.slice(cut).forEach((score, at) => top.push(cut + at, score))
          const expected = bestFirst(scores, k)
          expect(top.sorted()).toEqual(expected)
          if (k > 0) {
            expect(top.threshold).toBe(expected.length === k ? expected[k - 1].score : -Infinity)
          }
        },
      ),
    )
  })

  it('reports -Infinity as threshold until k pairs are kept, then the worst kept score', () => {
    const top = new TopK(2)
    top.push(0, 0.5)
    expect(top.threshold).toBe(-Infinity)
    top.push(1, 0.9)
    top.push(2, 0.7)
    expect(top.threshold).toBe(0.7)
  })

  it('ignores NaN scores and keeps nothing for k = 0', () => {
    const top = new TopK(0)
    top.push(0, 1)
    expect(top.sorted()).toEqual([])
    const one = new TopK(1)
    one.push(0, Number.NaN)
    expect(one.sorted()).toEqual([])
  })
})

describe('TopK with a caller tie order', () => {
  it('breaks score ties by the given order, in the heap and in the result', () => {
    const names = ['b', 'c', 'a', 'd']
    const top = new TopK(2, (x, y) => names[x] > names[y])
    for (const position of [0, 1, 2, 3]) top.push(position, 1)
    expect(top.sorted().map(({ position }) => names[position])).toEqual(['a', 'b'])
  })
})
