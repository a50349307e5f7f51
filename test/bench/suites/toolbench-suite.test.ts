import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { standardizeToolbenchName } from '../../../src/bench/suites/standardize-toolbench-name.ts'
import { hasData } from '../../helpers/data-dir.ts'
import { loadSuite, mean } from './load-suite.ts'

const FIXTURE_DATA = fileURLToPath(new URL('../fixtures/data', import.meta.url))

describe.skipIf(!hasData('toolbench'))(
  'toolbench suites on shared/data (skipped: no toolbench data)',
  () => {
    it('loads the G1 splits with the README counts and union libraries', async () => {
      const { splits } = await loadSuite('toolbench-g1')
      const summary = splits.map((split) => [split.name, split.cases.length, split.tools.length])
      expect(summary).toEqual([
        ['toolbench-g1/G1_instruction', 163, 810],
        ['toolbench-g1/G1_category', 153, 364],
        ['toolbench-g1/G1_tool', 158, 499],
        ['toolbench-g1/data_example', 5, 12],
      ])
      const sizes = splits[0].cases.map((item) => item.gold.length)
      expect(mean(sizes)).toBeCloseTo(2.28, 2)
      expect(Math.max(...sizes)).toBe(6)
      expect(splits[0].cases[0]).toMatchObject({
        id: '588',
        gold: ['TheClique::Transfermarkt search', 'TheClique::Transfermarkt details'],
      })
    })

    it('loads G3 (StableToolBench, ToolPlanner G3_clear, data_example) with de-duplicated gold', async () => {
      const { splits } = await loadSuite('toolbench-g3')
      expect(splits.map((split) => [split.cases.length, split.tools.length])).toEqual([
        [61, 44],
        [218, 589],
        [2, 11],
      ])
      const clear = splits[1].cases.map((item) => item.gold.length)
      expect(mean(clear)).toBeCloseTo(2.95, 1)
      expect(Math.max(...clear)).toBe(8)
      // 643 listed pairs, of which 2 repeat a pair within their record (README 1.4).
      expect(clear.reduce((sum, size) => sum + size, 0)).toBe(641)
      expect(splits.every((split) => split.stats.unmappedGold === 0)).toBe(true)
    })

    it('maps every G3 gold pair onto the COLT corpus in corpus mode', async () => {
      const { splits } = await loadSuite('toolbench-g3', { libraryMode: 'corpus' })
      for (const split of splits) {
        expect(split.tools.length).toBe(1415)
        expect(split.stats).toMatchObject({ unmappedGold: 0, droppedQueries: 0 })
      }
    })

    it('gives each query its own api_list in closed mode', async () => {
      const { splits } = await loadSuite('toolbench-g3', { libraryMode: 'closed' })
      const sizes = splits[0].cases.map((item) => item.library?.length ?? 0)
      expect(mean(sizes)).toBeCloseTo(5.8, 1)
      for (const item of splits[0].cases) {
        const ids = new Set(item.library?.map((tool) => tool.id))
        expect(item.gold.every((id) => ids.has(id))).toBe(true)
      }
    })

    it('refuses corpus mode without a corpus', async () => {
      await expect(loadSuite('toolbench-g1', { libraryMode: 'corpus' })).rejects.toThrow(
        /no default corpus; give one with --tools/,
      )
    })
  },
)

describe('toolbench-g2 (hand-written fixture in the G2 file layout)', () => {
  it('loads G2 files from a data root and skips the missing ones with the reason', async () => {
    const { splits, skipped } = await loadSuite('toolbench-g2', { dataDir: FIXTURE_DATA })
    expect(splits.map((split) => split.name)).toEqual(['toolbench-g2/G2_instruction'])
    expect(splits[0].cases.map((item) => item.gold)).toEqual([
      ['Open Weather::5 day forecast', 'Currency Exchange::Convert'],
      ['Lyrics Finder::Search lyrics', 'Music Charts::Artist top tracks'],
    ])
    expect(splits[0].tools).toHaveLength(5)
    expect(skipped).toEqual([
      {
        name: 'toolbench-g2/G2_category',
        reason: expect.stringMatching(/^not found: .*G2_category\.json$/),
      },
    ])
  })

  it('reads an explicit --queries file in closed mode', async () => {
    const file = `${FIXTURE_DATA}/toolbench/StableToolBench/solvable_queries/test_instruction/G2_instruction.json`
    const { splits } = await loadSuite('toolbench-g2', { queries: file, libraryMode: 'closed' })
    expect(splits[0].name).toBe('toolbench-g2/G2_instruction')
    expect(splits[0].cases.map((item) => item.library?.length)).toEqual([3, 3])
  })
})

describe('standardizeToolbenchName', () => {
  it('follows ToolBench: non-word characters to _, collapsed, lower-case, get_ before a digit', () => {
    expect(standardizeToolbenchName('World Bank | GDP')).toBe('world_bank_gdp')
    expect(standardizeToolbenchName('  Priceline com Provider ')).toBe('priceline_com_provider')
    expect(standardizeToolbenchName('5 day forecast')).toBe('get_5_day_forecast')
  })
})
