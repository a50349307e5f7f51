/**
 * Runs one split: index its library (or each query's own, in closed mode, or the swapped-in
 * `--library`), answer every query, and score it against the gold.
 * @module
 */
import type { Config } from '../config/schema.ts'
import { ExampleSet } from '../examples/example-set.ts'
import type { UsageExample } from '../examples/usage-example.ts'
import type { Tool } from '../library/tool.ts'
import { indexTools as indexLibraryTools } from '../store/library-lifecycle.ts'
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
import type { BenchSplit, ExamplesMode } from './suites/bench-suite.ts'

/** Folds of the k-fold example protocol for splits without a training split. */
export const EXAMPLE_FOLDS = 5

export interface SplitRunOptions {
  runner: CaseRunner
  config: Config
  /** Only the first N queries. */
  limit?: number
  /** Leave candidate lists out of the per-query records. */
  compact: boolean
  /** `--library`: evaluate against this index instead of the split's own library. */
  swap?: { file: string; indexed: IndexedLibrary }
  /** `train`: give the library usage examples (the split's training set, else k-fold). */
  examples?: ExamplesMode
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
  const plan = examplePlan(split, options.examples ?? 'none')
  const baseTools = options.swap?.indexed.library.tools ?? split.tools
  const baseName = options.swap ? 'swap' : split.name
  // One library per fold (a single one without k-fold): built on first use.
  const libraries = new Map<number, Promise<IndexedLibrary>>()
  const libraryOfFold = (fold: number): Promise<IndexedLibrary> => {
    let indexed = libraries.get(fold)
    if (indexed === undefined) {
      const examples = plan?.examplesFor(fold)
      indexed =
        options.swap && examples === undefined
          ? Promise.resolve(options.swap.indexed)
          : indexTools(baseName, baseTools, options.config, examples)
      libraries.set(fold, indexed)
    }
    return indexed
  }
  // Closed mode still indexes the split's union: it names the components and the match keys.
  const shared = await libraryOfFold(0)
  let indexMs = performance.now() - indexStarted
  const keyOf = createKeyOf(split, options.swap?.indexed.library.tools)
  const textOf = createTextOf(split.tools)
  const evalKeys = new Set(shared.library.tools.map((tool) => keyOf(tool.id)))
  let goldMissing = 0
  let queriesWithGoldMissing = 0
  // A query's own library; a tool list several queries share (a file suite's `library`) is
  // indexed once per fold, the others are indexed for their query and not kept.
  const uses = new Map<readonly Tool[], number>()
  for (const benchCase of cases) {
    if (benchCase.library) uses.set(benchCase.library, (uses.get(benchCase.library) ?? 0) + 1)
  }
  const caseLibraries = new Map<readonly Tool[], Map<number, Promise<IndexedLibrary>>>()
  const caseLibrary = (benchCase: BenchCase, tools: readonly Tool[], fold: number) => {
    const build = () =>
      indexTools(`${split.name}.${benchCase.id}`, tools, options.config, plan?.examplesFor(fold))
    if ((uses.get(tools) ?? 0) < 2) return build()
    let byFold = caseLibraries.get(tools)
    if (byFold === undefined) caseLibraries.set(tools, (byFold = new Map()))
    let indexed = byFold.get(fold)
    if (indexed === undefined) byFold.set(fold, (indexed = build()))
    return indexed
  }

  const runStarted = performance.now()
  const runCase = async (benchCase: BenchCase, position: number): Promise<CaseResult> => {
    const fold = plan?.foldOf(position) ?? 0
    const started = performance.now()
    let target = await libraryOfFold(fold)
    if (benchCase.library && !options.swap) {
      target = await caseLibrary(benchCase, benchCase.library, fold)
    }
    indexMs += performance.now() - started
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
        plannedCandidates: outcome.steps
          .filter((step) => !step.whole)
          .map((step) => unique(step.candidates.map((c) => keyOf(c.id)))),
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
        const result = resumed ?? (await runCase(benchCase, index))
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
    notes: plan && split.training ? [...split.notes, ...split.training.notes] : split.notes,
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
    ...(plan && {
      examples: {
        source: plan.source,
        counts: await Promise.all(
          [...libraries.keys()]
            .sort((a, b) => a - b)
            .map(async (fold) => (await libraries.get(fold)!).examples?.set.size ?? 0),
        ),
        ...(plan.folds > 1 && { folds: plan.folds }),
      },
    }),
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

async function indexTools(
  name: string,
  tools: readonly Tool[],
  config: Config,
  examples?: readonly UsageExample[],
) {
  const libraryName = benchLibraryName(name)
  if (examples === undefined) return indexLibraryTools(libraryName, tools, config)
  // Only the examples' tools this library has (a swapped-in or closed-mode library is smaller).
  const known = new Set(tools.map((tool) => tool.id))
  const usable = examples.flatMap((example) => {
    const ids = example.tools.filter((id) => known.has(id))
    return ids.length === 0 ? [] : [{ instruction: example.instruction, tools: ids }]
  })
  const set = ExampleSet.of(usable, { cap: config.library.maxExamples })
  return indexLibraryTools(libraryName, tools, config, { examples: set })
}

interface ExamplePlan {
  source: string
  folds: number
  /** The fold a query (by position) is evaluated in. */
  foldOf(position: number): number
  /** The usage examples the library of `fold` gets: never one from that fold. */
  examplesFor(fold: number): UsageExample[]
}

/**
 * Where a split's usage examples come from under `--examples train`: its suite's training split
 * (one library for every query), else k-fold by query position (query i is in fold i mod k, and
 * its library holds the examples of the other folds).
 */
function examplePlan(split: BenchSplit, mode: ExamplesMode): ExamplePlan | undefined {
  if (mode === 'none') return undefined
  if (split.training) {
    const { examples, source } = split.training
    return { source, folds: 1, foldOf: () => 0, examplesFor: () => examples }
  }
  const folds = EXAMPLE_FOLDS
  const byFold = new Map<number, UsageExample[]>()
  return {
    source: `${folds}-fold by query: each query's library holds the other folds' queries and gold`,
    folds,
    foldOf: (position) => position % folds,
    examplesFor(fold) {
      let examples = byFold.get(fold)
      if (examples === undefined) {
        examples = split.cases
          .filter((_, position) => position % folds !== fold)
          .map((benchCase) => ({ instruction: benchCase.instruction, tools: benchCase.gold }))
        byFold.set(fold, examples)
      }
      return examples
    },
  }
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
