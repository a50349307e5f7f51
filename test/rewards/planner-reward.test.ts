import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { plannerReward, rankDiscount } from '../../src/rewards/planner-reward.ts'

describe('plannerReward', () => {
  it('scores 1 when each step finds a distinct gold tool at rank 1', () => {
    const reward = plannerReward(
      [
        ['a', 'x'],
        ['b', 'y'],
      ],
      ['a', 'b'],
    )
    expect(reward).toMatchObject({ precision: 1, recall: 1, f1: 1 })
    expect(reward.claims).toEqual([
      { id: 'a', rank: 1 },
      { id: 'b', rank: 1 },
    ])
  })

  it('lets a later step claim the next gold tool when the first is taken', () => {
    const reward = plannerReward(
      [
        ['a', 'b'],
        ['a', 'b'],
      ],
      ['a', 'b'],
    )
    expect(reward.claims).toEqual([
      { id: 'a', rank: 1 },
      { id: 'b', rank: 2 },
    ])
    expect(reward.precision).toBe(1)
    expect(reward.recall).toBeCloseTo((1 + 1 / Math.log2(3)) / 2)
  })

  it('counts a step that finds no unclaimed gold tool against precision', () => {
    const reward = plannerReward([['a'], ['a'], ['z']], ['a'])
    expect(reward.claims).toEqual([{ id: 'a', rank: 1 }, null, null])
    expect(reward.precision).toBeCloseTo(1 / 3)
    expect(reward.recall).toBe(1)
    expect(reward.f1).toBeCloseTo(0.5)
  })

  it('discounts recall by rank and counts unclaimed gold as 0', () => {
    const reward = plannerReward([['x', 'y', 'a']], ['a', 'b'])
    expect(reward.recall).toBeCloseTo(rankDiscount(3) / 2)
    expect(rankDiscount(3)).toBe(0.5)
  })

  it('scores a plan without steps 0', () => {
    expect(plannerReward([], ['a'])).toMatchObject({ precision: 0, recall: 0, f1: 0 })
  })

  it('stays in [0, 1]', () => {
    const id = fc.constantFrom('a', 'b', 'c', 'd', 'e')
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(id, { maxLength: 5 }), { maxLength: 5 }),
        fc.uniqueArray(id, { maxLength: 3 }),
        (steps, gold) => {
          const { precision, recall, f1 } = plannerReward(steps, gold)
          for (const value of [precision, recall, f1]) {
            expect(value).toBeGreaterThanOrEqual(0)
            expect(value).toBeLessThanOrEqual(1)
          }
        },
      ),
    )
  })
})
