/** Test helper: run the benchmark over the hand-written fixtures (no shared data needed). */
import { fileURLToPath } from 'node:url'
import type { BenchRunSettings } from '../../src/bench/bench-report.ts'
import { createOracleCountRunner, createPipelineRunner } from '../../src/bench/case-runner.ts'
import { runBench } from '../../src/bench/run-bench.ts'
import { createComponents } from '../../src/components.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { createLogger } from '../../src/log.ts'

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
  const components = createComponents(config, createLogger('silent'))
  const runner = settings.baseline
    ? createOracleCountRunner({ k: settings.k })
    : createPipelineRunner({
        planner: components.planner(settings.planner),
        selector: components.selector(settings.selector),
        k: settings.k,
      })
  return runBench({ settings, config, runner })
}
