import { describe, expect, it } from 'vitest'
import {
  candidateProbability,
  ensembleMargin,
  fitBoostedTrees,
} from '../../src/learn/boosted-trees.ts'
import { fitLogistic, predictProbability } from '../../src/learn/logistic-regression.ts'

// Two inputs whose exclusive or is the label (a is 1 in three rows of four, so that a split on
// it alone already gains), and a third that is noise: no linear model separates it, two levels of
// splits do.
const rows: number[][] = []
const labels: number[] = []
for (let index = 0; index < 400; index += 1) {
  const a = index % 4 === 0 ? 0 : 1
  const b = Math.floor(index / 4) % 2
  rows.push([a, b, (index * 37) % 11])
  labels.push(a ^ b)
}

describe('fitBoostedTrees', () => {
  it('learns an interaction the logistic model cannot', () => {
    const linear = fitLogistic(rows, labels)
    const wrong = rows.filter(
      (row, index) => predictProbability(linear, row) > 0.5 !== (labels[index] === 1),
    )
    expect(wrong.length).toBeGreaterThanOrEqual(50)
    const ensemble = fitBoostedTrees(rows, labels, {
      features: [0, 1, 2],
      trees: 20,
      depth: 2,
      learningRate: 0.5,
      minChildWeight: 1,
    })
    rows.forEach((row, index) => {
      const p = candidateProbability({ model: linear, trees: ensemble }, row)
      if (labels[index] === 1) expect(p).toBeGreaterThan(0.9)
      else expect(p).toBeLessThan(0.1)
    })
  })

  it('is deterministic, splits only on the given features and stores the learning rate in its leaves', () => {
    const options = { features: [0, 2], trees: 5, depth: 3, learningRate: 0.1 }
    const first = fitBoostedTrees(rows, labels, options)
    expect(fitBoostedTrees(rows, labels, options)).toEqual(first)
    expect(first.trees).toHaveLength(5)
    for (const tree of first.trees) {
      expect(tree.split).toHaveLength(7)
      expect(tree.leaf).toHaveLength(8)
      for (const feature of tree.split) expect([-1, 0, 2]).toContain(feature)
    }
    // Feature 0 alone says nothing about the label: every leaf stays near 0.
    const alone = fitBoostedTrees(rows, labels, { ...options, features: [0] })
    for (const row of rows) expect(Math.abs(ensembleMargin(alone, row))).toBeLessThan(0.05)
  })

  it('fits on top of the base margins: a base that already separates leaves little to add', () => {
    const base = rows.map((_row, index) => (labels[index] === 1 ? 6 : -6))
    const ensemble = fitBoostedTrees(rows, labels, {
      features: [0, 1, 2],
      trees: 5,
      depth: 2,
      learningRate: 0.3,
      baseMargins: base,
    })
    for (const row of rows) expect(Math.abs(ensembleMargin(ensemble, row))).toBeLessThan(0.05)
  })

  it('scores as the logistic model alone without trees', () => {
    const linear = fitLogistic(rows, labels)
    for (const row of rows)
      expect(candidateProbability({ model: linear }, row)).toBe(predictProbability(linear, row))
  })
})
