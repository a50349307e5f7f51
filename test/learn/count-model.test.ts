import { describe, expect, it } from 'vitest'
import { FEATURE_NAMES } from '../../src/learn/candidate-features.ts'
import {
  applyCount,
  byProbability,
  COUNT_FEATURE_NAMES,
  countFeatures,
  decideTools,
  extendCoherent,
  extensionRoom,
  oneNeed,
  predictCount,
  sharedTops,
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

describe('extendCoherent', () => {
  const scored = [
    { id: 'kick.channel', p: 0.9 },
    { id: 'news.top', p: 0.5 },
    { id: 'kick.clips', p: 0.2 },
    { id: 'kick.chat', p: 0.1 },
  ]
  const namespaceOf = (id: string) => id.split('.')[0]

  it("adds the most probable candidates of the set's own namespaces that reach the floor", () => {
    expect(extendCoherent(['kick.channel'], scored, 2, 0.15, namespaceOf)).toEqual([
      'kick.channel',
      'kick.clips',
    ])
    expect(extendCoherent(['kick.channel'], scored, 3, 0.15, namespaceOf)).toEqual([
      'kick.channel',
      'kick.clips',
    ])
    expect(extendCoherent(['kick.channel'], scored, 2, 0.25, namespaceOf)).toEqual(['kick.channel'])
  })

  it('extends nothing when the count is reached, the set is empty or namespaces say nothing', () => {
    expect(extendCoherent(['kick.channel'], scored, 1, 0.15, namespaceOf)).toEqual(['kick.channel'])
    expect(extendCoherent([], scored, 2, 0.15, namespaceOf)).toEqual([])
    expect(extendCoherent(['kick.channel'], scored, 2, 0.15, () => undefined)).toEqual([
      'kick.channel',
    ])
    // One namespace for every candidate (a library of one server) tells no tool apart.
    expect(extendCoherent(['kick.channel'], scored, 2, 0.15, () => 'all')).toEqual(['kick.channel'])
  })
})

describe('sharedTops', () => {
  it('counts the candidates among the first two of two clauses or more', () => {
    const clauses = [
      ['a', 'b', 'c'],
      ['b', 'a', 'd'],
      ['e', 'c', 'a'],
    ]
    // a and b are in the first two of clauses 1 and 2; c only in clause 3's (third in clause 1).
    expect(sharedTops(clauses)).toBe(2)
    expect(
      sharedTops([
        ['a', 'b'],
        ['c', 'd'],
      ]),
    ).toBe(0)
    // A clause that lists a candidate twice counts it once.
    expect(sharedTops([['a', 'a'], ['b']])).toBe(0)
    expect(sharedTops([])).toBe(0)
  })
})

describe('oneNeed', () => {
  const identify = ['vision.classify', 'vision.detect', 'vision.segment', 'audio.vad', 'text.gen']
  const classify = ['vision.detect', 'vision.classify', 'text.gen', 'audio.tts', 'audio.vad']

  it('keeps the more probable tool when both are among both clauses first candidates', () => {
    expect(oneNeed(['vision.classify', 'vision.detect'], [identify, classify])).toEqual([
      'vision.classify',
    ])
  })

  it('keeps both when one of them is not among a clause first candidates', () => {
    const other = ['mail.send', 'vision.classify', 'mail.draft', 'mail.list', 'mail.read']
    expect(oneNeed(['vision.classify', 'mail.send'], [identify, other])).toEqual([
      'vision.classify',
      'mail.send',
    ])
    // Sixth place is beyond the compared depth.
    const deep = [...classify.filter((id) => id !== 'vision.detect'), 'x.y', 'vision.detect']
    expect(oneNeed(['vision.classify', 'vision.detect'], [identify, deep])).toEqual([
      'vision.classify',
      'vision.detect',
    ])
  })

  it('leaves plans of one or three clauses and sets of other sizes alone', () => {
    const pair = ['vision.classify', 'vision.detect']
    expect(oneNeed(pair, [identify])).toEqual(pair)
    expect(oneNeed(pair, [identify, classify, classify])).toEqual(pair)
    expect(oneNeed(['vision.classify'], [identify, classify])).toEqual(['vision.classify'])
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
    namespaceOf: () => undefined,
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

  // Two APIs of the "kick" tool and an unrelated one.
  const channel = [
    { id: 'kick.channel', p: 0.9 },
    { id: 'kick.clips', p: 0.3 },
    { id: 'news.top', p: 0.05 },
  ]
  const channelScores = {
    scored: channel,
    values: new Map(channel.map(({ id }) => [id, values(id)])),
    namespaceOf: (id: string) => id.split('.')[0],
  }

  it('extends the set with a same-namespace candidate when the extend count asks for more', () => {
    const kick = {
      ...input,
      ...channelScores,
      clauses: [
        ['kick.channel', 'kick.clips'],
        ['kick.clips', 'news.top'],
      ],
      lists: [
        ['kick.channel', 'kick.clips'],
        ['kick.clips', 'news.top'],
        ['kick.channel', 'kick.clips', 'news.top'],
      ],
    }
    const withStepFloor = { ...rule, stepFloor: 0.15 }
    expect(decideTools(kick, withStepFloor, model)).toEqual(['kick.channel', null, null])
    const extending = { ...model, extendThreshold: 0.5 }
    expect(decideTools(kick, withStepFloor, extending)).toEqual([
      'kick.channel',
      'kick.clips',
      null,
    ])
    // Without the rule's per-clause floor there is no least probability to extend with.
    expect(decideTools(kick, rule, extending)).toEqual(['kick.channel', null, null])
  })

  it('extends a one-clause plan to two tools of one namespace, placed on the whole instruction', () => {
    // "Get the channel clips and the channel details": one clause (no verb after "and"), two
    // tools of one namespace; the whole instruction's request gives the second one a place.
    const one = {
      ...input,
      ...channelScores,
      clauses: [['kick.channel', 'kick.clips', 'news.top']],
      stepTops: [['kick.channel', 'kick.clips', 'news.top']],
      lists: [
        ['kick.channel', 'kick.clips', 'news.top'],
        ['kick.clips', 'kick.channel', 'news.top'],
      ],
      wholeIndex: 1,
    }
    const withStepFloor = { ...rule, stepFloor: 0.15 }
    const always = {
      ...model,
      atLeast: [on('p1', 0, 5), on('p1', 0, 5), on('p1', 0, 5)],
      extendThreshold: 0.5,
    }
    expect(decideTools(one, withStepFloor, model)).toEqual(['kick.channel', null])
    expect(decideTools(one, withStepFloor, always)).toEqual(['kick.channel', 'kick.clips'])
    // Never more than two, and never when the plan is the instruction itself (no whole request).
    expect(extensionRoom(1, 1)).toBe(2)
    expect(extensionRoom(3, 3)).toBe(3)
    expect(
      decideTools({ ...one, lists: [one.lists[0]], wholeIndex: -1 }, withStepFloor, always),
    ).toEqual(['kick.channel'])
  })

  it('cuts the least probable tools, not the later clauses picks', () => {
    // The rule takes "flights" (above its threshold), then each other clause's best first
    // candidate by its per-clause floor, in clause order: "hotels" (0.2), then "weather" (0.35).
    // A count of two keeps "flights" and the more probable "weather".
    const picks = [
      { id: 'flights', p: 0.8 },
      { id: 'hotels', p: 0.2 },
      { id: 'weather', p: 0.35 },
    ]
    const three = {
      scored: picks,
      values: new Map(picks.map(({ id }) => [id, values(id)])),
      clauses: [['flights'], ['hotels'], ['weather']],
      stepTops: [['flights'], ['hotels'], ['weather']],
      lists: [['flights'], ['hotels'], ['weather'], ['flights', 'weather', 'hotels']],
      wholeIndex: 3,
      namespaceOf: () => undefined,
    }
    const two = { ...model, atLeast: [on('p1', 0, 5), on('p1', 0, -5), on('p1', 0, -5)] }
    const withStepFloor = { ...rule, stepFloor: 0.15 }
    expect(decideTools(three, withStepFloor, undefined)).toEqual([
      'flights',
      'hotels',
      'weather',
      null,
    ])
    expect(decideTools(three, withStepFloor, two)).toEqual(['flights', null, 'weather', null])
    expect(byProbability(['hotels', 'weather', 'flights'], picks)).toEqual([
      'flights',
      'weather',
      'hotels',
    ])
  })

  it('does not cut a one-clause plan', () => {
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
