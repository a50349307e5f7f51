import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { aggregateMetrics, summarizeLatency } from '../../../src/bench/metrics/aggregate-metrics.ts'
import { queryMetrics, RECALL_KS } from '../../../src/bench/metrics/query-metrics.ts'

const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f')
const input = fc.record({
  predicted: fc.uniqueArray(id, { maxLength: 4 }),
  gold: fc.uniqueArray(id, { minLength: 1, maxLength: 4 }),
  stepCandidates: fc.array(fc.uniqueArray(id, { maxLength: 5 }), { maxLength: 4 }),
  keep: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
})

describe('queryMetrics', () => {
  it('keeps every metric in [0, 1]', () => {
    fc.assert(
      fc.property(input, ({ predicted, gold, stepCandidates, keep }) => {
        const metrics = queryMetrics({
          predicted,
          gold,
          stepCandidates,
          filteredGold: gold.filter((_, index) => keep[index]),
        })
        const numbers = JSON.stringify(metrics).match(/-?\d+(\.\d+)?(e-?\d+)?/g) ?? []
        for (const text of numbers) {
          const value = Number(text)
          if (RECALL_KS.includes(value as never) && value > 1) continue
          expect(value).toBeGreaterThanOrEqual(0)
          expect(value).toBeLessThanOrEqual(1)
        }
      }),
    )
  })

  it('does not count a filtered-out gold tool as a false positive', () => {
    const metrics = queryMetrics({
      predicted: ['a', 'b'],
      gold: ['a', 'b'],
      stepCandidates: [['a'], ['b']],
      filteredGold: ['a'],
    })
    expect(metrics.filtered).toEqual({ exactMatch: 1, precision: 1, recall: 1, f1: 1 })
    expect(
      queryMetrics({ predicted: [], gold: ['a'], stepCandidates: [], filteredGold: [] }).filtered,
    ).toBeNull()
  })

  it('reports pool recall and recall@K of the merged candidates', () => {
    const metrics = queryMetrics({
      predicted: ['a'],
      gold: ['a', 'b'],
      stepCandidates: [
        ['x', 'a'],
        ['y', 'z', 'b'],
      ],
      filteredGold: ['a', 'b'],
    })
    expect(metrics.poolRecall).toBe(1)
    expect(metrics.poolComplete).toBe(1)
    expect(metrics.recallAtK).toEqual({ 1: 0, 3: 0.5, 5: 1, 10: 1, 15: 1 })
  })
})

describe('loss attribution', () => {
  const loss = (predicted: string[], gold: string[], stepCandidates: string[][]) =>
    queryMetrics({ predicted, gold, stepCandidates, filteredGold: gold }).loss

  it('blames the first stage that made exact match fail', () => {
    expect(loss(['a', 'b'], ['a', 'b'], [['a'], ['b']])).toBeNull()
    expect(loss(['a'], ['a', 'b'], [['a', 'b']])).toBe('planning')
    expect(loss(['a', 'x'], ['a', 'b'], [['a'], ['x']])).toBe('retrieval')
    expect(
      loss(
        ['a', 'a'],
        ['a', 'b'],
        [
          ['a', 'b'],
          ['a', 'b'],
        ],
      ),
    ).toBe('selection')
    expect(loss(['a', 'b', 'x'], ['a', 'b'], [['a'], ['b'], ['x']])).toBe('selection')
  })

  it('does not blame planning when one step predicts several tools (oracle-count)', () => {
    expect(loss(['a', 'x'], ['a', 'b'], [['a', 'x', 'b']])).toBe('selection')
  })
})

describe('aggregateMetrics', () => {
  it('averages over queries and breaks exact match down by gold-set size', () => {
    const scored = [
      { gold: ['a'], predicted: ['a'], totalMs: 1 },
      { gold: ['a', 'b'], predicted: ['a'], totalMs: 3 },
      { gold: ['a', 'b'], predicted: ['a', 'b'], totalMs: 2 },
    ].map(({ gold, predicted, totalMs }) => ({
      metrics: queryMetrics({ predicted, gold, stepCandidates: [gold], filteredGold: gold }),
      goldSize: gold.length,
      totalMs,
      usage: { inputTokens: 10, outputTokens: 2 },
      fallbacks: { planner: totalMs === 3 ? 1 : 0, selector: 0 },
    }))
    const aggregate = aggregateMetrics(scored)
    expect(aggregate.queries).toBe(3)
    expect(aggregate.exactMatch).toBe(0.6667)
    expect(aggregate.losses).toEqual({ planning: 0.3333, retrieval: 0, selection: 0 })
    expect(aggregate.byGoldSize).toEqual([
      { size: 1, queries: 1, exactMatch: 1 },
      { size: 2, queries: 2, exactMatch: 0.5 },
    ])
    expect(aggregate.fallbacks).toEqual({ planner: 1, selector: 0 })
    expect(aggregate.tokens).toEqual({ input: 30, output: 6, perQuery: 12 })
    expect(summarizeLatency(scored)).toEqual({ p50Ms: 2, p95Ms: 3, meanMs: 2 })
  })
})
