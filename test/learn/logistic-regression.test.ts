import { describe, expect, it } from 'vitest'
import { fitLogistic, predictProbability, sigmoid } from '../../src/learn/logistic-regression.ts'

/** A deterministic data set: y ~ Bernoulli(sigmoid(2·a − 1·b + 0.5)), c is noise. */
function dataset(size: number) {
  let state = 12345
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    return state / 2 ** 32
  }
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
})
