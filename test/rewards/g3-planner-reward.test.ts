/**
 * Acceptance: the reward service scores a hand-written plan for a real G3 training query exactly
 * as the benchmark's metric does when the same plan runs through the pipeline.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createPipelineRunner } from '../../src/bench/case-runner.ts'
import { queryMetrics } from '../../src/bench/metrics/query-metrics.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import type { Planner } from '../../src/contracts.ts'
import { scorePlans } from '../../src/rewards/score-plans.ts'
import { createComponents } from '../../src/components.ts'
import { createLogger } from '../../src/log.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { buildIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { requireRetriever, type IndexedLibrary } from '../../src/store/indexed-library.ts'
import { loadToolbenchG3Train } from '../../src/train/splits/toolbench-g3-train.ts'
import type { TrainExample } from '../../src/train/train-split.ts'
import { DATA_DIR, hasData } from '../helpers/data-dir.ts'

/** ToolBench query 25101, a ToolPlanner G3 training query (not in any G3 test file). */
const QUERY_ID = '25101'
const PERFECT_PLAN = [
  'get v2 auto-complete suggestions for tesla from Trading View',
  'get the Aave balance from a specific network',
  'get the BNB balance from a specific network',
  'get the PancakeSwap balance from a specific network',
]

const fixedPlanner = (steps: string[]): Planner => ({
  name: 'fixed',
  plan: async () => ({ steps, planner: 'fixed' }),
})

describe.skipIf(!hasData('toolbench', 'toolplanner'))(
  'planner reward on a ToolBench G3 training query (skipped: no toolbench data)',
  () => {
    const config = parseConfig({})
    let example: TrainExample
    let indexed: IndexedLibrary

    beforeAll(async () => {
      const split = await loadToolbenchG3Train(DATA_DIR)
      example = split.examples.find((item) => item.id === QUERY_ID)!
      indexed = await buildIndexedLibrary(new ToolLibrary('g3', split.tools), config)
    })

    const score = (plans: string[][]) =>
      scorePlans(
        example.instruction,
        example.gold,
        plans.map((plan) => JSON.stringify(plan)),
        {
          library: indexed.library,
          retriever: requireRetriever(indexed),
          k: config.retrieve.k,
          maxSteps: config.plan.maxSteps,
        },
      )

    /** What `toolsel bench` computes for this query when the planner answers `plan`. */
    async function benchReward(plan: string[]) {
      const logger = createLogger('silent')
      const components = { ...createComponents(config, logger), planner: () => fixedPlanner(plan) }
      const runner = createPipelineRunner(new ToolselService(config, logger, components), {
        retriever: 'auto',
      })
      const outcome = await runner.run(example.instruction, example.gold, indexed)
      return queryMetrics({
        predicted: outcome.predicted,
        gold: example.gold,
        stepCandidates: outcome.steps.map((step) => step.candidates.map((item) => item.id)),
        plannedCandidates: outcome.steps
          .filter((step) => !step.whole)
          .map((step) => step.candidates.map((item) => item.id)),
        filteredGold: example.gold,
      }).plannerReward
    }

    it('gives a plan whose steps each rank their gold tool first 1.0, as the bench does', async () => {
      expect(example.gold).toHaveLength(4)
      const [reward] = await score([PERFECT_PLAN])
      expect(reward.claims.map((claim) => claim?.rank)).toEqual([1, 1, 1, 1])
      expect(new Set(reward.claims.map((claim) => claim?.id))).toEqual(new Set(example.gold))
      expect(reward).toMatchObject({ reward: 1, precision: 1, recall: 1, f1: 1 })
      expect(await benchReward(PERFECT_PLAN)).toEqual({ precision: 1, recall: 1, f1: 1 })
    })

    it('lowers precision for an extra step and matches the bench on imperfect plans too', async () => {
      const extra = [...PERFECT_PLAN, 'book a flight to Paris']
      const vague = ['find autocomplete suggestions', 'check crypto balances']
      const [withExtra, withVague] = await score([extra, vague])
      expect(withExtra.precision).toBeCloseTo(4 / 5)
      expect(withExtra.recall).toBe(1)
      expect(withExtra.reward).toBeLessThan(1)
      for (const [plan, reward] of [
        [extra, withExtra],
        [vague, withVague],
      ] as const) {
        const bench = await benchReward(plan)
        expect(reward.precision).toBe(bench.precision)
        expect(reward.recall).toBe(bench.recall)
        expect(reward.f1).toBe(bench.f1)
      }
      expect(withVague.reward).toBeLessThan(withExtra.reward)
    })
  },
)
