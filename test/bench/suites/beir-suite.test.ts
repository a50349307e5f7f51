import { describe, expect, it } from 'vitest'
import { parseQrels } from '../../../src/bench/suites/beir-suite.ts'
import { hasData } from '../../helpers/data-dir.ts'
import { loadSuite, mean } from './load-suite.ts'

describe.skipIf(!hasData('toollens'))(
  'toollens suite on shared/data (skipped: no toollens data)',
  () => {
    it('loads the 1,877 test queries over the 464-API corpus, gold from qrels', async () => {
      const { splits, skipped } = await loadSuite('toollens')
      expect(skipped).toEqual([])
      const [split] = splits
      expect(split.cases).toHaveLength(1877)
      expect(split.tools).toHaveLength(464)
      // qrels/test.tsv has 5,010 rows, but 23 repeat a (query, corpus id) pair.
      expect(split.cases.reduce((sum, item) => sum + item.gold.length, 0)).toBe(4987)
      expect(mean(split.cases.map((item) => item.gold.length))).toBeCloseTo(2.66, 2)
      expect(split.stats).toMatchObject({ unmappedGold: 0, droppedQueries: 0 })
    })
  },
)

describe.skipIf(!hasData('toolbench'))('toolbench-g3-colt (skipped: no toolbench data)', () => {
  it('is skipped with "no queries available": COLT G3 queries.jsonl is not published here', async () => {
    const { splits, skipped } = await loadSuite('toolbench-g3-colt')
    expect(splits).toEqual([])
    expect(skipped[0].reason).toMatch(/^no queries available; not found: .*queries\.jsonl$/)
  })
})

describe('parseQrels', () => {
  it('groups corpus ids by query, skipping the header and non-positive scores', () => {
    const qrels = parseQrels('query-id\tcorpus-id\tscore\n1\t0\t1\n1\t5\t1\n2\t3\t0\n2\t4\t1\n')
    expect([...qrels]).toEqual([
      ['1', ['0', '5']],
      ['2', ['4']],
    ])
  })
})
