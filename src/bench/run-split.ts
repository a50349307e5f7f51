/**
 * Runs one split: index its library (or each query's own, in closed mode, or the swapped-in
 * `--library`), answer every query, and score it against the gold.
 * @module
 */
import type { Config } from '../config/schema.ts'
import type { Tool } from '../library/tool.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import { buildIndexedLibrary } from '../store/build-index.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'
import pLimit from 'p-limit'
import type { BenchCase } from './bench-case.ts'
import type { QueryReport, SplitReport } from './bench-report.ts'
import type { CaseRunner } from './case-runner.ts'
import {
  aggregateMetrics,
  summarizeLatency,
  type ScoredQuery,
} from './metrics/aggregate-metrics.ts'
import { lexicalFilter, toolContentText } from './metrics/lexical-filter.ts'
import { queryMetrics } from './metrics/query-metrics.ts'
import { queryReport, roundMetrics } from './query-report.ts'
import type { BenchSplit } from './suites/bench-suite.ts'

export interface SplitRunOptions {
  runner: CaseRunner
  config: Config
  /** Only the first N queries. */
  limit?: number
  /** Leave candidate lists out of the per-query records. */
  compact: boolean
  /** `--library`: evaluate against this index instead of the split's own library. */
  swap?: { file: string; indexed: IndexedLibrary }
  /** Called after each query. */
  onQuery?: () => void
  /** Queries run at once. Default 1. */
  concurrency?: number
  /** Results of an interrupted run (`--resume`), by `caseKey`: these queries are not run again. */
  completed?: ReadonlyMap<string, CaseResult>
  /** Called with each query's result as soon as it is scored (resumable runs append it to a file). */
  onResult?: (result: CaseResult & { split: string; key: string }) => void
}

/** One query's record and what aggregation needs of it. */
export interface CaseResult {
  query: QueryReport
  scored: ScoredQuery
}

/** Identifies a query within its split for `--resume`: position and dataset id. */
export function caseKey(index: number, id: string): string {
  return `${index}:${id}`
}

export interface SplitRun {
  report: SplitReport
  scored: ScoredQuery[]
}

export async function runSplit(split: BenchSplit, options: SplitRunOptions): Promise<SplitRun> {
  const cases = options.limit === undefined ? split.cases : split.cases.slice(0, options.limit)
  const indexStarted = performance.now()
  // Closed mode still indexes the split's union: it names the components and the match keys.
  const shared =
    options.swap?.indexed ?? (await indexTools(split.name, split.tools, options.config))
  let indexMs = performance.now() - indexStarted
  const keyOf = createKeyOf(split, options.swap?.indexed.library.tools)
  const textOf = createTextOf(split.tools)
  const evalKeys = new Set(shared.library.tools.map((tool) => keyOf(tool.id)))
  let goldMissing = 0
  let queriesWithGoldMissing = 0

  const runStarted = performance.now()
  const runCase = async (benchCase: BenchCase): Promise<CaseResult> => {
    let target = shared
    if (benchCase.library && !options.swap) {
      const started = performance.now()
      target = await indexTools(`${split.name}.${benchCase.id}`, benchCase.library, options.config)
      indexMs += performance.now() - started
    }
    const outcome = await options.runner.run(benchCase.instruction, benchCase.gold, target)
    const goldKeys = unique(benchCase.gold.map(keyOf))
    const filteredGold = lexicalFilter(benchCase.instruction, benchCase.gold, textOf)
    const metrics = roundMetrics(
      queryMetrics({
        predicted: unique(outcome.predicted.map(keyOf)),
        gold: goldKeys,
        stepCandidates: outcome.steps.map((step) =>
          unique(step.candidates.map((c) => keyOf(c.id))),
        ),
        filteredGold: unique(filteredGold.map(keyOf)),
      }),
    )
    return {
      query: queryReport(benchCase, outcome, metrics, filteredGold, options.compact),
      scored: {
        metrics,
        goldSize: goldKeys.length,
        totalMs: outcome.timings.totalMs,
        usage: outcome.usage,
        fallbacks: {
          planner: outcome.fallbacks.filter((fallback) => fallback.stage === 'planner').length,
          selector: outcome.fallbacks.filter((fallback) => fallback.stage === 'selector').length,
        },
        error: outcome.error,
      },
    }
  }
  // Queries run `concurrency` at a time (model servers batch them); results keep dataset order.
  const limit = pLimit(options.concurrency ?? 1)
  const results = await Promise.all(
    cases.map((benchCase, index) =>
      limit(async () => {
        const key = caseKey(index, benchCase.id)
        const resumed = options.completed?.get(key)
        const result = resumed ?? (await runCase(benchCase))
        if (!resumed) options.onResult?.({ split: split.name, key, ...result })
        options.onQuery?.()
        return result
      }),
    ),
  )
  const queries: QueryReport[] = results.map((result) => result.query)
  const scored: ScoredQuery[] = results.map((result) => result.scored)
  if (options.swap) {
    for (const benchCase of cases) {
      const missing = unique(benchCase.gold.map(keyOf)).filter((key) => !evalKeys.has(key)).length
      goldMissing += missing
      if (missing > 0) queriesWithGoldMissing += 1
    }
  }
  const runMs = performance.now() - runStarted

  const report: SplitReport = {
    name: split.name,
    files: split.files,
    notes: split.notes,
    stats: split.stats,
    library: {
      name: shared.library.name,
      tools: shared.library.size,
      ...(options.swap && {
        swapped: { file: options.swap.file, goldMissing, queriesWithGoldMissing },
      }),
      matchBy: split.matchKey ? 'api_call' : 'id',
    },
    components: options.runner.components(shared),
    metrics: aggregateMetrics(scored),
    latency: summarizeLatency(scored),
    timings: { indexMs: Math.round(indexMs), runMs: Math.round(runMs) },
    queries,
  }
  return { report, scored }
}

/** Library names are directory-safe (see LIBRARY_NAME_PATTERN): `/` and the like become `.`. */
export function benchLibraryName(name: string): string {
  const safe = `bench.${name}`.replace(/[^a-zA-Z0-9._-]/g, '.')
  return safe.length <= 64 ? safe : safe.slice(0, 64)
}

async function indexTools(name: string, tools: readonly Tool[], config: Config) {
  return buildIndexedLibrary(new ToolLibrary(benchLibraryName(name), tools), config)
}

/** Tool id → match key (the id itself unless the split matches by an equivalence, e.g. api_call). */
function createKeyOf(split: BenchSplit, extra: readonly Tool[] = []): (id: string) => string {
  const { matchKey } = split
  if (!matchKey) return (id) => id
  const keys = new Map<string, string>()
  for (const tool of [...split.tools, ...extra]) keys.set(tool.id, matchKey(tool))
  return (id) => keys.get(id) ?? id
}

function createTextOf(tools: readonly Tool[]): (id: string) => string | undefined {
  const byId = new Map(tools.map((tool) => [tool.id, tool]))
  return (id) => {
    const tool = byId.get(id)
    return tool && toolContentText(tool)
  }
}

function unique<T>(values: Iterable<T>): T[] {
  return [...new Set(values)]
}
