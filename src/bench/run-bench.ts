/**
 * `toolsel bench` without the command line: load the suites, run every split, and assemble the
 * report. Output is deterministic apart from the timing fields.
 * @module
 */
import type { Config } from '../config/schema.ts'
import { isToolselError, ToolselError } from '../errors.ts'
import { importLibrary } from '../store/library-lifecycle.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'
import {
  REPORT_FORMAT_VERSION,
  type BenchReport,
  type BenchRunSettings,
  type SuiteReport,
} from './bench-report.ts'
import type { CaseRunner } from './case-runner.ts'
import {
  aggregateMetrics,
  summarizeLatency,
  type ScoredQuery,
} from './metrics/aggregate-metrics.ts'
import { trainingFromFile } from './examples-from-file.ts'
import { readExamplesFile } from '../train/splits/examples-file.ts'
import { runSplit, type CaseResult, type SplitRunOptions } from './run-split.ts'
import type { BenchSplit, BenchSuite, SkippedSplit } from './suites/bench-suite.ts'
import { resolveSuites } from './suites/suite-registry.ts'

export interface RunBenchOptions {
  settings: BenchRunSettings
  config: Config
  runner: CaseRunner
  /** Progress after each query: (done, total, split name). */
  onProgress?: (done: number, total: number, label: string) => void
  /** Results already scored by an interrupted run, by split name then `caseKey` (`--resume`). */
  completed?: ReadonlyMap<string, ReadonlyMap<string, CaseResult>>
  /** Called with each newly scored query (a resumable run appends it to its progress file). */
  onResult?: SplitRunOptions['onResult']
  /** A line for the person running it (`--examples file:` examples dropped as evaluated queries). */
  onNote?: (text: string) => void
}

export async function runBench(options: RunBenchOptions): Promise<BenchReport> {
  const { settings, config } = options
  const started = performance.now()
  const suites = resolveSuites(settings.suite)
  const loaded: Array<{ suite: BenchSuite; splits: BenchSplit[] }> = []
  const skipped: SkippedSplit[] = []
  for (const suite of suites) {
    const result = await loadSuite(suite, settings, config, suites.length > 1)
    skipped.push(...result.skipped)
    if (result.splits.length > 0) loaded.push({ suite, splits: result.splits })
  }
  if (settings.examplesFile !== undefined) {
    // Read once for every split (was: once per split, so a pipe, `file:<(…)`, gave its examples
    // to the first split of a 5-fold suite and failed the next with "holds no examples").
    const records = await readExamplesFile(settings.examplesFile, {
      maxExamples: config.library.maxExamples,
    })
    for (const split of loaded.flatMap(({ splits }) => splits)) {
      const { training, dropped } = trainingFromFile(split, records)
      split.training = training
      if (dropped > 0) options.onNote?.(`${split.name}: ${training.notes[0]}`)
    }
  }
  const swap = settings.swapLibrary ? await loadSwap(settings, config) : undefined
  const loadMs = performance.now() - started

  const total = loaded
    .flatMap(({ splits }) => splits)
    .reduce((sum, split) => sum + Math.min(split.cases.length, settings.limit ?? Infinity), 0)
  let done = 0
  const reports: SuiteReport[] = []
  for (const { suite, splits } of loaded) {
    const scored: ScoredQuery[] = []
    const splitReports = []
    for (const split of splits) {
      const run = await runSplit(split, {
        runner: options.runner,
        config,
        limit: settings.limit,
        compact: settings.compact,
        swap,
        examples: settings.examples,
        concurrency: settings.concurrency,
        completed: options.completed?.get(split.name),
        onResult: options.onResult,
        onQuery: () => options.onProgress?.((done += 1), total, split.name),
      })
      splitReports.push(run.report)
      scored.push(...run.scored)
    }
    reports.push({
      name: suite.name,
      description: suite.description,
      splits: splitReports,
      metrics: aggregateMetrics(scored),
      latency: summarizeLatency(scored),
    })
  }
  return {
    formatVersion: REPORT_FORMAT_VERSION,
    settings,
    config,
    suites: reports,
    skipped,
    timings: { wallMs: Math.round(performance.now() - started), loadMs: Math.round(loadMs) },
  }
}

/**
 * Loads a suite. Under `--suite all` a suite that cannot load with these options (no default
 * corpus, unreadable file) is reported as skipped instead of stopping every other suite.
 */
async function loadSuite(
  suite: BenchSuite,
  settings: BenchRunSettings,
  config: Config,
  many: boolean,
) {
  try {
    return await suite.load({
      dataDir: settings.dataDir,
      queries: settings.queries,
      tools: settings.tools,
      libraryMode: settings.libraryMode,
      unmappable: settings.unmappable,
      // `--examples file:<path>` replaces the suite's own training split (read afterwards).
      examples: settings.examplesFile === undefined ? settings.examples : 'none',
      maxFileBytes: config.library.maxFileBytes,
      maxTools: config.library.maxTools,
    })
  } catch (error) {
    if (!many || !isToolselError(error)) throw error
    return {
      splits: [],
      skipped: [{ name: suite.name, reason: `${error.code}: ${error.message}` }],
    }
  }
}

async function loadSwap(
  settings: BenchRunSettings,
  config: Config,
): Promise<{ file: string; indexed: IndexedLibrary }> {
  const file = settings.swapLibrary as string
  if (settings.libraryMode === 'closed') {
    throw new ToolselError(
      'INVALID_INPUT',
      '--library replaces the library of every query, so it cannot be combined with --library-mode closed.',
    )
  }
  const { indexed } = await importLibrary(
    { path: file, maxFileBytes: config.library.maxFileBytes, maxTools: config.library.maxTools },
    'bench.swap',
    config,
  )
  return { file, indexed }
}
