import { describe, expect, it } from 'vitest'
import { parseCraftQueries } from '../../../src/bench/suites/craft-suite.ts'
import { hasData } from '../../helpers/data-dir.ts'
import { loadSuite } from './load-suite.ts'

describe.skipIf(!hasData('craft'))('craft suites on shared/data (skipped: no craft data)', () => {
  it.each([
    ['craft-math', 282],
    ['craft-tabmwp', 180],
    ['craft-vqa', 525],
  ])(
    '%s: one query per toolset row, gold = its tool_id, library = the %i tools',
    async (name, count) => {
      const { splits } = await loadSuite(name)
      const [split] = splits
      expect(split.cases).toHaveLength(count)
      expect(split.tools).toHaveLength(count)
      expect(split.cases.every((item) => item.gold.length === 1 && item.gold[0] === item.id)).toBe(
        true,
      )
      expect(split.stats.unmappedGold).toBe(0)
    },
  )

  it('appends the table to TabMWP questions', async () => {
    const { splits } = await loadSuite('craft-tabmwp')
    expect(splits[0].cases[0].instruction).toMatch(
      /How many strings had exactly 74 broken lights\?\n\nStem \| Leaf/,
    )
  })
})

describe('parseCraftQueries', () => {
  it('reads question (and table) with quoted newlines', () => {
    const csv =
      'question,table,tool_id,tool\n"What is 2+2?\nExplain.","a | b\n1 | 2",7,"def f():\n  pass"\n'
    expect(parseCraftQueries(csv, 'x.csv')).toEqual([
      { id: '7', instruction: 'What is 2+2?\nExplain.\n\na | b\n1 | 2', gold: ['7'] },
    ])
  })
})
