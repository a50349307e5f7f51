/** Test helper: run the benchmark over the hand-written fixtures (no shared data needed). */
import { fileURLToPath } from 'node:url'
import type { BenchRunSettings } from '../../src/bench/bench-report.ts'
import { createOracleCountRunner, createPipelineRunner } from '../../src/bench/case-runner.ts'
import { runBench } from '../../src/bench/run-bench.ts'
import { createComponents } from '../../src/components.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { createLogger } from '../../src/log.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'

export const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url))

export function fixtureSettings(overrides: Partial<BenchRunSettings> = {}): BenchRunSettings {
  return {
    suite: 'toolbench-g2',
    name: 'fixture',
    dataDir: `${FIXTURES}/data`,
    libraryMode: 'union',
    unmappable: 'drop',
    planner: 'rule',
    selector: 'top1',
    retriever: 'bm25',
    k: 15,
    tau: 3,
    compact: false,
    ...overrides,
  }
}

/** Runs `runBench` with the default config and the components the settings name. */
export async function runFixtureBench(overrides: Partial<BenchRunSettings> = {}) {
  const settings = fixtureSettings(overrides)
  const config = defaultConfig()
  const logger = createLogger('silent')
  const service = new ToolselService(config, logger, createComponents(config, logger))
  const request = { retriever: settings.retriever, k: settings.k }
  const runner = settings.baseline
    ? createOracleCountRunner(service, request)
    : createPipelineRunner(service, {
        ...request,
        planner: settings.planner,
        selector: settings.selector,
      })
  return runBench({ settings, config, runner })
}
