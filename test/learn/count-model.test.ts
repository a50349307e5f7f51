import { describe, expect, it } from 'vitest'
import { FEATURE_NAMES } from '../../src/learn/candidate-features.ts'
import {
  applyCount,
  COUNT_FEATURE_NAMES,
  countFeatures,
  decideTools,
  predictCount,
  type CountModel,
} from '../../src/learn/count-model.ts'
import { placeTools } from '../../src/learn/decide-set.ts'
import type { LogisticModel } from '../../src/learn/logistic-regression.ts'

const width = COUNT_FEATURE_NAMES.length

/** A logistic model whose probability is sigmoid(bias + weight × feature `name`). */
function on(name: (typeof COUNT_FEATURE_NAMES)[number], weight: number, bias: number) {
  const weights = new Array<number>(width).fill(0)
  weights[COUNT_FEATURE_NAMES.indexOf(name)] = weight
  return {
    mean: new Array<number>(width).fill(0),
    scale: new Array<number>(width).fill(1),
    weights,
    bias,
  } satisfies LogisticModel
}

/** Count ≥ 2 when at least two clauses have a confident candidate of their own; never ≥ 3. */
const model: CountModel = {
  features: [...COUNT_FEATURE_NAMES],
  atLeast: [on('clauses_confident_30', 10, -15), on('p1', 0, -10), on('p1', 0, -10)],
  threshold: 0.5,
}

const vector = (values: Partial<Record<(typeof COUNT_FEATURE_NAMES)[number], number>>) =>
  COUNT_FEATURE_NAMES.map((name) => values[name] ?? 0)

describe('predictCount', () => {
  it('takes the largest count whose chain of "at least" probabilities reaches the threshold', () => {
    expect(predictCount(model, vector({ clauses_confident_30: 1 }), 4)).toBe(1)
    expect(predictCount(model, vector({ clauses_confident_30: 2 }), 4)).toBe(2)
    const always: CountModel = {
      ...model,
      atLeast: [on('p1', 0, 5), on('p1', 0, 5), on('p1', 0, -5)],
    }
    expect(predictCount(always, vector({}), 4)).toBe(3)
    // A later "at least" cannot raise the count past a failed earlier one.
    const gap: CountModel = { ...model, atLeast: [on('p1', 0, -5), on('p1', 0, 5), on('p1', 0, 5)] }
    expect(predictCount(gap, vector({}), 4)).toBe(1)
  })

  it('never predicts more than the cap, nor less than one', () => {
    const always: CountModel = {
      ...model,
      atLeast: [on('p1', 0, 5), on('p1', 0, 5), on('p1', 0, 5)],
    }
    expect(predictCount(always, vector({}), 4)).toBe(4)
    expect(predictCount(always, vector({}), 2)).toBe(2)
    expect(predictCount(always, vector({}), 0)).toBe(1)
  })
})

describe('applyCount', () => {
  it('cuts the rule set to the count, keeping its order, and never adds a tool', () => {
    expect(applyCount(['a', 'b', 'c'], 2)).toEqual(['a', 'b'])
    expect(applyCount(['a'], 3)).toEqual(['a'])
    expect(applyCount(['a', 'b'], 0)).toEqual(['a'])
    expect(applyCount([], 2)).toEqual([])
  })
})

describe('placeTools', () => {
  it('gives each tool to the request that ranks it best, clauses before the whole instruction', () => {
    const lists = [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'a', 'b'],
    ]
    expect(placeTools(['a', 'b', 'c'], lists, 2)).toEqual(['a', 'b', 'c'])
    // A tool no free request retrieved is left out.
    expect(placeTools(['a', 'x'], lists, 2)).toEqual(['a', null, null])
    expect(placeTools(['a', 'b'], [['a', 'b']], -1)).toEqual(['a'])
  })
})

describe('decideTools', () => {
  const values = (id: string) => FEATURE_NAMES.map(() => (id === 'weather' ? 1 : 0))
  // "What is the weather in Paris? Tell me the forecast": two clauses, both best served by the
  // weather tool; the rule also takes the news tool (above its threshold), the count cuts it.
  const scored = [
    { id: 'weather', p: 0.9 },
    { id: 'news', p: 0.45 },
    { id: 'calendar', p: 0.05 },
  ]
  const input = {
    scored,
    values: new Map(scored.map(({ id }) => [id, values(id)])),
    clauses: [
      ['weather', 'calendar'],
      ['weather', 'news'],
    ],
    stepTops: [[], []],
    lists: [
      ['weather', 'calendar'],
      ['weather', 'news'],
      ['weather', 'news', 'calendar'],
    ],
    wholeIndex: 2,
  }
  const rule = { threshold: 0.4, floor: 0, extra: 0 }

  it('cuts the rule set to the learned count', () => {
    expect(decideTools(input, rule, undefined)).toEqual(['weather', 'news', null])
    expect(decideTools(input, rule, model)).toEqual(['weather', null, null])
  })

  it('keeps two tools when two clauses each have a confident tool of their own', () => {
    const two = {
      ...input,
      clauses: [
        ['weather', 'calendar'],
        ['news', 'calendar'],
      ],
      lists: [['weather', 'calendar'], ['news', 'calendar'], input.lists[2]],
    }
    expect(decideTools(two, rule, model)).toEqual(['weather', 'news', null])
  })

  it('does not apply to a one-clause plan', () => {
    const one = {
      ...input,
      clauses: [['weather', 'news']],
      stepTops: [[]],
      lists: [['weather', 'news']],
      wholeIndex: -1,
    }
    expect(decideTools(one, { ...rule, extra: 1 }, model)).toEqual(['weather'])
  })

  it('reads every count feature', () => {
    const features = countFeatures({
      scored,
      values: input.values,
      clauses: input.clauses,
      actionClauses: 1,
      ruleCount: 2,
    })
    expect(features).toHaveLength(width)
    expect(features[COUNT_FEATURE_NAMES.indexOf('clauses_confident_30')]).toBe(1)
    expect(features[COUNT_FEATURE_NAMES.indexOf('p2')]).toBe(0.45)
    expect(features[COUNT_FEATURE_NAMES.indexOf('rule_count')]).toBe(2)
  })
})
