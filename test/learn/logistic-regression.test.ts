import { describe, expect, it } from 'vitest'
import { fitLogistic, predictProbability, sigmoid } from '../../src/learn/logistic-regression.ts'

/** A deterministic uniform [0, 1) generator (a linear congruential one) from `seed`. */
function lcg(seed: number): () => number {
  let state = seed
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    return state / 2 ** 32
  }
}

/** A deterministic data set: y ~ Bernoulli(sigmoid(2·a − 1·b + 0.5)), c is noise. */
function dataset(size: number) {
  const random = lcg(12345)
  const rows: number[][] = []
  const labels: number[] = []
  for (let index = 0; index < size; index += 1) {
    const row = [random() * 4 - 2, random() * 4 - 2, random() * 10]
    rows.push(row)
    labels.push(random() < sigmoid(2 * row[0] - row[1] + 0.5) ? 1 : 0)
  }
  return { rows, labels }
}

describe('fitLogistic', () => {
  it('recovers the weights that generated the labels', () => {
    const { rows, labels } = dataset(20_000)
    const model = fitLogistic(rows, labels, { l2: 0.01 })
    // Weights are on standardised features: divide by the scale to compare with the generator.
    const raw = model.weights.map((weight, index) => weight / model.scale[index])
    expect(raw[0]).toBeCloseTo(2, 0)
    expect(raw[1]).toBeCloseTo(-1, 0)
    expect(Math.abs(raw[2])).toBeLessThan(0.05)
    expect(predictProbability(model, [1, 0, 5])).toBeCloseTo(sigmoid(2.5), 1)
  })

  it('is deterministic and keeps constant features at weight 0', () => {
    const { rows, labels } = dataset(2_000)
    const withConstant = rows.map((row) => [...row, 1])
    const first = fitLogistic(withConstant, labels)
    expect(fitLogistic(withConstant, labels)).toEqual(first)
    expect(first.scale[3]).toBe(1)
    expect(Math.abs(first.weights[3])).toBeLessThan(1e-12)
  })

  it('weighs rows by rowWeights', () => {
    const rows = [[0], [0], [1], [1]]
    const labels = [0, 1, 0, 1]
    const model = fitLogistic(rows, labels, { l2: 0, rowWeights: [1, 3, 1, 1] })
    expect(predictProbability(model, [0])).toBeCloseTo(0.75, 3)
    expect(predictProbability(model, [1])).toBeCloseTo(0.5, 3)
  })

  it('adds a listwise term that fits a conditional logit over each group', () => {
    // Groups of 5 candidates; one positive per group, drawn with probability softmax(2·a − b).
    const random = lcg(777)
    const rows: number[][] = []
    const labels: number[] = []
    const groups = [0]
    for (let group = 0; group < 3_000; group += 1) {
      const members = Array.from({ length: 5 }, () => [random() * 2 - 1, random() * 2 - 1])
      const odds = members.map(([a, b]) => Math.exp(2 * a - b))
      let draw = random() * odds.reduce((sum, value) => sum + value, 0)
      const positive = odds.findIndex((value) => (draw -= value) < 0)
      members.forEach((row, index) => {
        rows.push(row)
        labels.push(index === positive ? 1 : 0)
      })
      groups.push(rows.length)
    }
    const pointwise = fitLogistic(rows, labels)
    expect(fitLogistic(rows, labels, { groups, listwise: 0 })).toEqual(pointwise)
    const listwise = fitLogistic(rows, labels, { groups, listwise: 50 })
    const raw = listwise.weights.map((weight, index) => weight / listwise.scale[index])
    expect(raw[0] / raw[1]).toBeCloseTo(-2, 0)
    expect(raw[0]).toBeGreaterThan(1.5)
    expect(raw[0]).toBeLessThan(2.5)
  })

  it('skips groups with no positive or only positives in the listwise term', () => {
    const { rows, labels } = dataset(400)
    // Groups of two rows with the same label.
    const sorted = rows
      .map((row, index) => ({ row, label: labels[index] }))
      .sort((a, b) => a.label - b.label)
    const groups = [0]
    for (let index = 0; index < sorted.length; index += 2) {
      groups.push(sorted[index + 1]?.label === sorted[index].label ? index + 2 : index + 1)
      if (groups.at(-1) === index + 1) groups.push(index + 2)
    }
    const x = sorted.map(({ row }) => row)
    const y = sorted.map(({ label }) => label)
    expect(fitLogistic(x, y, { groups, listwise: 10 })).toEqual(fitLogistic(x, y))
  })
})
