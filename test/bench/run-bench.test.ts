import { describe, expect, it } from 'vitest'
import { createPipelineRunner } from '../../src/bench/case-runner.ts'
import { runBench } from '../../src/bench/run-bench.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { ToolselError } from '../../src/errors.ts'
import type { Planner } from '../../src/contracts.ts'
import { createComponents } from '../../src/components.ts'
import { createLogger } from '../../src/log.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { FIXTURES, fixtureSettings, runFixtureBench } from './fixture-bench.ts'

const TF = {
  suite: 'gorilla-tensorflow',
  queries: `${FIXTURES}/gorilla/tensorflowhub_eval.jsonl`,
  tools: `${FIXTURES}/gorilla/tensorflowhub_api.jsonl`,
}

describe('runBench', () => {
  it('scores every query of a split and reports skipped splits with their reason', async () => {
    const report = await runFixtureBench()
    expect(report.suites.map((suite) => suite.name)).toEqual(['toolbench-g2'])
    const [split] = report.suites[0].splits
    expect(split.queries.map((query) => query.id)).toEqual(['9001', '9002'])
    expect(split.components).toEqual({
      planner: 'rule',
      retriever: 'bm25',
      reranker: 'identity',
      selector: 'top1',
    })
    expect(split.metrics.queries).toBe(2)
    expect(report.skipped.map((skip) => skip.name)).toEqual(['toolbench-g2/G2_category'])
    expect(report.config.retrieve.k).toBe(15)
  })

  it('is deterministic apart from the timing fields', async () => {
    const strip = (value: unknown): unknown =>
      JSON.parse(
        JSON.stringify(value, (key, inner: unknown) =>
          ['timings', 'latency'].includes(key) ? undefined : inner,
        ),
      )
    expect(strip(await runFixtureBench())).toEqual(strip(await runFixtureBench()))
  })

  it('matches Gorilla TF Hub predictions by api_call class, not by record', async () => {
    const report = await runFixtureBench({ ...TF, planner: 'none' })
    const [first] = report.suites[0].splits[0].queries
    expect(first.gold).toEqual(['tensorflowhub_api:0'])
    // Record 1 shares record 0's hub.KerasLayer(...) call, so predicting it is an exact match.
    expect(first.predicted).toEqual(['tensorflowhub_api:1'])
    expect(first.metrics.exactMatch).toBe(1)
    expect(report.suites[0].splits[0].library.matchBy).toBe('api_call')
  })

  it('runs the oracle-count baseline: the top |gold| tools for the whole instruction', async () => {
    const report = await runFixtureBench({ baseline: 'oracle-count', planner: 'none' })
    for (const query of report.suites[0].splits[0].queries) {
      expect(query.predicted).toHaveLength(query.gold.length)
      expect(query.steps).toHaveLength(1)
    }
    expect(report.suites[0].splits[0].components.selector).toBe('oracle-count(top-|gold|)')
  })

  it('counts gold tools missing from a swapped library as misses and reports them', async () => {
    const report = await runFixtureBench({
      swapLibrary: `${FIXTURES}/gorilla/huggingface_api.jsonl`,
    })
    const [split] = report.suites[0].splits
    expect(split.library).toMatchObject({
      name: 'bench.swap',
      tools: 4,
      swapped: { goldMissing: 4, queriesWithGoldMissing: 2 },
    })
    expect(split.metrics.exactMatch).toBe(0)
  })

  it('indexes each query on its own in closed mode and honours --limit', async () => {
    const report = await runFixtureBench({ libraryMode: 'closed', limit: 1 })
    const [split] = report.suites[0].splits
    expect(split.queries).toHaveLength(1)
    expect(split.notes[0]).toMatch(/closed, each query's own api_list/)
  })

  it('records a failing pipeline as a miss with its error and keeps going', async () => {
    const failing: Planner = {
      name: 'broken',
      plan: async () => {
        throw new ToolselError('PLAN_UNPARSABLE', 'not a list of steps')
      },
    }
    const config = defaultConfig()
    const logger = createLogger('silent')
    const components = { ...createComponents(config, logger), planner: () => failing }
    const service = new ToolselService(config, logger, components)
    const runner = createPipelineRunner(service, { retriever: 'bm25' })
    const report = await runBench({ settings: fixtureSettings(), config, runner })
    const [split] = report.suites[0].splits
    expect(split.metrics.errors).toBe(2)
    expect(split.queries[0].error).toEqual({
      code: 'PLAN_UNPARSABLE',
      message: 'not a list of steps',
    })
    expect(split.metrics.exactMatch).toBe(0)
  })

  it('skips every data suite, without failing, when the data root is empty', async () => {
    const report = await runFixtureBench({ suite: 'all', dataDir: `${FIXTURES}/no-such-dir` })
    // Only the demo suite runs: its library and queries live in the repository.
    expect(report.suites.map((suite) => suite.name)).toEqual(['demo'])
    expect(report.skipped.length).toBeGreaterThanOrEqual(14)
    expect(
      report.skipped.find((skip) => skip.name.startsWith('gorilla-huggingface'))?.reason,
    ).toMatch(/no queries available|not found/)
  })
})
