import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { reciprocalRankFusion } from '../../../src/retrieve/hybrid/reciprocal-rank-fusion.ts'
import { weightedMinMaxFusion } from '../../../src/retrieve/hybrid/weighted-min-max-fusion.ts'
import type { Candidate } from '../../../src/contracts.ts'

type Fuse = (lists: Candidate[][], weights: number[]) => Candidate[]

const FUSIONS: Record<string, Fuse> = {
  reciprocalRankFusion: (lists, weights) => reciprocalRankFusion(lists, { weights }),
  weightedMinMaxFusion: (lists, weights) => weightedMinMaxFusion(lists, { weights }),
}

const candidate = (score: fc.Arbitrary<number>) =>
  fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), score })
const finiteScore = fc.double({ noNaN: true, noDefaultInfinity: true })
const moderateScore = fc.double({ noNaN: true, min: -100, max: 100 })
const weight = fc.double({ noNaN: true, min: 0, max: 10 })
/** Lists with one weight each. */
const weightedLists = (score: fc.Arbitrary<number>) =>
  fc.array(fc.tuple(fc.array(candidate(score), { maxLength: 8 }), weight), {
    minLength: 1,
    maxLength: 4,
  })

const asMap = (fused: Candidate[]) => new Map(fused.map(({ id, score }) => [id, score]))

describe.each(Object.entries(FUSIONS))('%s', (_name, fuse) => {
  it('does not depend on the order of the input lists', () => {
    fc.assert(
      fc.property(weightedLists(moderateScore), fc.integer(), (inputs, seed) => {
        const shuffled = [...inputs].sort(
          (a, b) => Math.sin(seed + inputs.indexOf(a)) - Math.sin(seed + inputs.indexOf(b)),
        )
        const original = asMap(
          fuse(
            inputs.map(([list]) => list),
            inputs.map(([, w]) => w),
          ),
        )
        const permuted = asMap(
          fuse(
            shuffled.map(([list]) => list),
            shuffled.map(([, w]) => w),
          ),
        )
        expect([...permuted.keys()].sort()).toEqual([...original.keys()].sort())
        for (const [id, score] of original) expect(permuted.get(id)).toBeCloseTo(score, 9)
      }),
    )
  })

  it("never lowers a tool's fused score when one of its input scores rises", () => {
    fc.assert(
      fc.property(
        weightedLists(moderateScore).filter((inputs) => inputs.some(([list]) => list.length > 0)),
        fc.nat(),
        fc.double({ noNaN: true, min: 0, max: 100 }),
        (inputs, pick, raise) => {
          const lists = inputs.map(([list]) => list.map((entry) => ({ ...entry })))
          const weights = inputs.map(([, w]) => w)
          const nonEmpty = lists.filter((list) => list.length > 0)
          const list = nonEmpty[pick % nonEmpty.length]
          const raised = list[pick % list.length]
          const before = asMap(fuse(lists, weights)).get(raised.id) ?? 0
          raised.score += raise
          const after = asMap(fuse(lists, weights)).get(raised.id) ?? 0
          expect(after).toBeGreaterThanOrEqual(before - 1e-12)
        },
      ),
    )
  })

  it('gives finite scores, sorted descending with ties by id, one per id', () => {
    fc.assert(
      fc.property(weightedLists(finiteScore), (inputs) => {
        const fused = fuse(
          inputs.map(([list]) => list),
          inputs.map(([, w]) => w),
        )
        const ids = new Set(inputs.flatMap(([list]) => list.map((entry) => entry.id)))
        expect(fused.map((entry) => entry.id).sort()).toEqual([...ids].sort())
        for (const [index, entry] of fused.entries()) {
          expect(Number.isFinite(entry.score)).toBe(true)
          const next = fused[index + 1]
          if (next) {
            expect(entry.score >= next.score).toBe(true)
            if (entry.score === next.score) expect(entry.id < next.id).toBe(true)
          }
        }
      }),
    )
  })
})

describe('reciprocalRankFusion', () => {
  it('adds weight / (k + rank) over the lists, ranking each list by its own scores', () => {
    const fused = reciprocalRankFusion(
      [
        [
          { id: 'b', score: 1 },
          { id: 'a', score: 9 },
        ],
        [{ id: 'b', score: 5 }],
      ],
      { k: 10, weights: [1, 2] },
    )
    expect(fused).toEqual([
      { id: 'b', score: 1 / 12 + 2 / 11 },
      { id: 'a', score: 1 / 11 },
    ])
  })

  it('defaults to k = 60 and weight 1', () => {
    expect(reciprocalRankFusion([[{ id: 'a', score: 0 }]])).toEqual([{ id: 'a', score: 1 / 61 }])
  })
})

describe('weightedMinMaxFusion', () => {
  it('scales each list to [0, 1] by its min and max and adds with weights (default 1/n)', () => {
    const fused = weightedMinMaxFusion([
      [
        { id: 'a', score: 10 },
        { id: 'b', score: 5 },
        { id: 'c', score: 0 },
      ],
      [
        { id: 'c', score: 0.9 },
        { id: 'b', score: 0.5 },
      ],
    ])
    expect(fused).toEqual([
      { id: 'a', score: 0.5 },
      { id: 'c', score: 0.5 },
      { id: 'b', score: 0.25 },
    ])
  })

  it('scales a list whose scores are all equal to 1 and keeps scores finite at the float limits', () => {
    expect(
      weightedMinMaxFusion(
        [
          [
            { id: 'a', score: 3 },
            { id: 'b', score: 3 },
          ],
        ],
        { weights: [1] },
      ),
    ).toEqual([
      { id: 'a', score: 1 },
      { id: 'b', score: 1 },
    ])
    const extreme = weightedMinMaxFusion(
      [
        [
          { id: 'a', score: Number.MAX_VALUE },
          { id: 'b', score: -Number.MAX_VALUE },
        ],
      ],
      { weights: [1] },
    )
    expect(extreme).toEqual([
      { id: 'a', score: 1 },
      { id: 'b', score: 0 },
    ])
  })
})
