import { describe, expect, it } from 'vitest'
import {
  bestSummed,
  fitTrainingSets,
  trainingSets,
  trainLearnedModel,
  TREE_FEATURES,
  type TrainingSource,
} from '../../src/learn/train-model.ts'
import { formatLearnedModel, parseLearnedModel } from '../../src/learn/learned-model.ts'
import { BM25_SETTINGS } from '../helpers/feature-input.ts'
import { sampleSource, trainingCases } from '../helpers/training-cases.ts'

const CASES = trainingCases([
  ['What is the weather in Paris tomorrow', ['weather.get_forecast']],
  ['Email the report to Ann', ['mail.send_email']],
  ['Text my brother that I am late', ['sms.send_sms']],
  ['Find flights from Rome to Madrid', ['travel.search_flights']],
  [
    'Book a hotel in Lisbon, and email the booking to Ann',
    ['travel.book_hotel', 'mail.send_email'],
  ],
  ['How is the AAPL stock doing', ['finance.get_stock_quote']],
  ['Any mail from Bob in my inbox?', ['mail.search_inbox']],
  ['Send an SMS to Carla saying hi', ['sms.send_sms']],
  ['Search flights to Oslo next week', ['travel.search_flights']],
  ['Forecast for Berlin, and text it to Ben', ['weather.get_forecast', 'sms.send_sms']],
])

const SOURCES: TrainingSource[] = [sampleSource(CASES)]

describe('trainLearnedModel recipes', () => {
  const options = { bm25: BM25_SETTINGS }
  const sets = trainingSets(SOURCES, options)

  it('fits the same model from rows built once as in one call', () => {
    expect(sets.sets.map((set) => set.name)).toEqual(['sample'])
    expect(sets.sets[0].queries).toHaveLength(CASES.length)
    expect(fitTrainingSets(sets, options)).toEqual(trainLearnedModel(SOURCES, options))
  })

  it('keeps a fixed decision rule and count thresholds instead of choosing them', () => {
    const rule = { threshold: 0.35, floor: 0.05, extra: 1 }
    const model = fitTrainingSets(sets, {
      ...options,
      fixedRule: rule,
      fixedCount: { threshold: 0.6 },
    })
    expect(model.rule).toEqual(rule)
    expect(model.model).toEqual(fitTrainingSets(sets, options).model)
    expect(model.count?.threshold).toBe(0.6)
  })

  it('fits boosted trees on bounded features on top of the same linear model (format version 2)', () => {
    const linear = fitTrainingSets(sets, options)
    expect(linear.formatVersion).toBe(1)
    expect(linear.trees).toBeUndefined()
    const settings = { trees: 4, depth: 2, learningRate: 0.3, minChildWeight: 0 }
    const boosted = fitTrainingSets(sets, { ...options, trees: settings })
    expect(boosted.formatVersion).toBe(2)
    expect(boosted.model).toEqual(linear.model)
    expect(boosted.trees?.trees).toHaveLength(4)
    const allowed = TREE_FEATURES.map((name) => boosted.features.indexOf(name))
    const splits = boosted.trees!.trees.flatMap((tree) => tree.split)
    expect(splits.some((feature) => feature >= 0)).toBe(true)
    for (const feature of splits) expect([-1, ...allowed]).toContain(feature)
    expect(parseLearnedModel(formatLearnedModel(boosted), 'gbt.json')).toEqual(boosted)
    expect(fitTrainingSets(sets, { ...options, trees: settings })).toEqual(boosted)
  })

  it('changes the candidate weights with the listwise term', () => {
    const pointwise = fitTrainingSets(sets, options).model.weights
    const listwise = fitTrainingSets(sets, { ...options, listwise: 1 }).model.weights
    expect(listwise).toHaveLength(pointwise.length)
    expect(listwise).not.toEqual(pointwise)
    for (const weight of listwise) expect(Number.isFinite(weight)).toBe(true)
  })
})

describe('bestSummed (the count thresholds of two held-out folds)', () => {
  it("picks the best sum, not either fold's own best", () => {
    // Fold A alone picks 1, fold B alone picks 3; summed, 2 wins.
    expect(bestSummed([[0.4, 0.46, 0.45, 0.41]])).toBe(1)
    expect(
      bestSummed([
        [0.4, 0.46, 0.45, 0.41],
        [0.4, 0.4, 0.43, 0.44],
      ]),
    ).toBe(2)
  })

  it('keeps the lowest index on a tie (the rule alone, then lower thresholds)', () => {
    expect(bestSummed([[0.5, 0.5, 0.5]])).toBe(0)
    expect(
      bestSummed([
        [0.4, 0.45, 0.45],
        [0.4, 0.41, 0.41],
      ]),
    ).toBe(1)
  })
})
