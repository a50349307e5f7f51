import { describe, expect, it } from 'vitest'
import { parseTaskbenchRecord } from '../../../src/bench/suites/taskbench-suite.ts'
import { hasData } from '../../helpers/data-dir.ts'
import { loadSuite } from './load-suite.ts'

describe.skipIf(!hasData('taskbench'))(
  'taskbench suites on shared/data (skipped: no taskbench data)',
  () => {
    it.each([
      ['taskbench-huggingface', 23, 502, 439, 103],
      ['taskbench-multimedia', 40, 533, 508, 42],
    ])(
      '%s: %i tools; of %i records %i have gold ⊆ tool ids (default), %i unmappable gold nodes',
      async (name, tools, records, subset, unmapped) => {
        const dropped = (await loadSuite(name)).splits[0]
        expect(dropped.tools).toHaveLength(tools)
        expect(dropped.stats).toMatchObject({ records, queries: subset, unmappedGold: unmapped })
        expect(dropped.notes.join('\n')).toMatch(/subset: records whose gold ⊆ tool ids/)
        const kept = (await loadSuite(name, { unmappable: 'keep' })).splits[0]
        expect(kept.cases).toHaveLength(records)
      },
    )

    it('reads the object-shaped task_nodes of record 17353313', async () => {
      const { splits } = await loadSuite('taskbench-huggingface')
      expect(splits[0].cases.find((item) => item.id === '17353313')?.gold).toEqual([
        'Text-to-Image',
      ])
    })

    it('skips dailylifeapis with the reason (held out of shared/data)', async () => {
      const { skipped } = await loadSuite('taskbench-dailylifeapis')
      expect(skipped[0].reason).toMatch(/^not found: /)
    })
  },
)

describe('parseTaskbenchRecord', () => {
  it('accepts task_nodes, tool_nodes as a JSON string, and user_request', () => {
    const nodes = [{ task: 'A' }, { task: 'B' }, { task: 'A' }]
    expect(parseTaskbenchRecord({ id: '1', instruction: 'x', task_nodes: nodes })).toEqual({
      id: '1',
      instruction: 'x',
      gold: ['A', 'B'],
    })
    expect(
      parseTaskbenchRecord({ user_request: 'y', tool_nodes: JSON.stringify(nodes) })?.gold,
    ).toEqual(['A', 'B'])
    expect(parseTaskbenchRecord({ instruction: 'z', task_nodes: [] })).toBeUndefined()
  })
})
