/**
 * `--examples train`: each split's library gets its training examples, and never an example of
 * a query it is evaluated on (k-fold for suites without a training split).
 */
import { describe, expect, it } from 'vitest'
import type { CaseRunner } from '../../src/bench/case-runner.ts'
import { createPipelineRunner } from '../../src/bench/case-runner.ts'
import { runBench } from '../../src/bench/run-bench.ts'
import { normalizeQueryText } from '../../src/train/train-split.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { createComponents } from '../../src/components.ts'
import { createLogger } from '../../src/log.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { DATA_DIR, hasData } from '../helpers/data-dir.ts'
import { FIXTURES, fixtureSettings } from './fixture-bench.ts'

/** The pipeline, plus a check per query that its library's examples do not hold its own text. */
function leakCheckingRunner(seen: {
  queries: number
  withExamples: number
  leaks: string[]
}): CaseRunner {
  const config = defaultConfig()
  const logger = createLogger('silent')
  const service = new ToolselService(config, logger, createComponents(config, logger))
  const pipeline = createPipelineRunner(service, { k: 15 })
  return {
    components: pipeline.components,
    async run(instruction, gold, target) {
      seen.queries += 1
      if (target.examples) {
        seen.withExamples += 1
        const own = normalizeQueryText(instruction)
        for (const { example } of target.examples.memory.neighbors(instruction, 50)) {
          if (normalizeQueryText(example.instruction) === own) seen.leaks.push(instruction)
        }
      }
      return pipeline.run(instruction, gold, target)
    },
  }
}

describe('bench --examples train', () => {
  it('k-fold: every query is answered by a library holding the other folds only', async () => {
    const seen = { queries: 0, withExamples: 0, leaks: [] as string[] }
    const report = await runBench({
      settings: fixtureSettings({
        suite: 'gorilla-tensorflow',
        queries: `${FIXTURES}/gorilla/tensorflowhub_eval.jsonl`,
        tools: `${FIXTURES}/gorilla/tensorflowhub_api.jsonl`,
        examples: 'train',
      }),
      config: defaultConfig(),
      runner: leakCheckingRunner(seen),
    })
    const [split] = report.suites[0].splits
    expect(seen.queries).toBeGreaterThan(1)
    expect(seen.withExamples).toBe(seen.queries)
    expect(seen.leaks).toEqual([])
    expect(split.examples).toMatchObject({ folds: 5, source: expect.stringContaining('5-fold') })
    // Each fold's library holds every query but its fold's.
    const n = split.queries.length
    const expected = Array.from(
      { length: Math.min(5, n) },
      (_, fold) => split.queries.filter((_, position) => position % 5 !== fold).length,
    )
    expect(split.examples!.counts).toEqual(expected)
  })

  it('without the flag, libraries have no examples', async () => {
    const seen = { queries: 0, withExamples: 0, leaks: [] as string[] }
    const report = await runBench({
      settings: fixtureSettings(),
      config: defaultConfig(),
      runner: leakCheckingRunner(seen),
    })
    expect(seen.withExamples).toBe(0)
    expect(report.suites[0].splits[0].examples).toBeUndefined()
  })

  const g3 = 'toolbench/toolplanner/data/category/coarse_instruction/api_instruction_5000.json'
  it.skipIf(!hasData(g3))(
    `ToolBench G3: ToolPlanner train minus every test id and text (needs ${g3})`,
    async () => {
      const seen = { queries: 0, withExamples: 0, leaks: [] as string[] }
      const report = await runBench({
        settings: fixtureSettings({
          suite: 'toolbench-g3',
          dataDir: DATA_DIR,
          libraryMode: 'corpus',
          examples: 'train',
          limit: 15,
        }),
        config: defaultConfig(),
        runner: leakCheckingRunner(seen),
      })
      const splits = report.suites[0].splits
      expect(splits.map((split) => split.name)).toEqual([
        'toolbench-g3/G3_instruction',
        'toolbench-g3/G3_clear',
        'toolbench-g3/data_example',
      ])
      for (const split of splits) {
        expect(split.examples).toMatchObject({ source: expect.stringContaining('ToolPlanner') })
        // 5,000 records; the 218 G3_clear and 9 StableToolBench G3 test queries left out.
        expect(split.notes.join('\n')).toContain('5000 records, 227 left out as test queries')
        // 4,773 with a corpus tool; 22 of them repeat another's text and tools (de-duplicated).
        expect(split.examples!.counts).toEqual([4751])
      }
      expect(seen.withExamples).toBe(seen.queries)
      expect(seen.leaks).toEqual([])
    },
    // Three corpus libraries of 1,415 tools with 4,751 examples each, on a shared 2-core machine.
    120_000,
  )

  const toollens = 'toollens/COLT/datasets/ToolLens/qrels/train.tsv'
  it.skipIf(!hasData(toollens))(
    `ToolLens: its train qrels (needs ${toollens})`,
    async () => {
      const seen = { queries: 0, withExamples: 0, leaks: [] as string[] }
      const report = await runBench({
        settings: fixtureSettings({
          suite: 'toollens',
          dataDir: DATA_DIR,
          examples: 'train',
          limit: 40,
        }),
        config: defaultConfig(),
        runner: leakCheckingRunner(seen),
      })
      const [split] = report.suites[0].splits
      expect(split.examples!.source).toContain('qrels/train.tsv')
      expect(split.examples!.counts[0]).toBe(16893)
      expect(seen.withExamples).toBe(40)
      // The memory answers these template-like queries far better than the rule pipeline alone.
      expect(split.metrics.exactMatch).toBeGreaterThan(0.3)
    },
    120_000,
  )
})
