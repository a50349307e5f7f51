/**
 * The shape of `report.json`. Everything outside the `timings`/`latency` fields is a
 * deterministic function of the code, the data and the config, so two runs diff cleanly.
 * @module
 */
import type { Config } from '../config/schema.ts'
import type { StageTimings } from '../pipeline.ts'
import type { Fallback, Usage } from '../contracts.ts'
import type { AggregateMetrics, LatencySummary } from './metrics/aggregate-metrics.ts'
import type { QueryMetrics } from './metrics/query-metrics.ts'
import type {
  ExamplesMode,
  LibraryMode,
  SkippedSplit,
  SplitStats,
  UnmappableGold,
} from './suites/bench-suite.ts'

export const REPORT_FORMAT_VERSION = 1

/** What was run, beyond the config: the CLI's benchmark options. */
export interface BenchRunSettings {
  suite: string
  /** A short label for the run (directory name, chart titles). */
  name: string
  dataDir: string
  queries?: string
  tools?: string
  libraryMode: LibraryMode
  unmappable: UnmappableGold
  /** `oracle-count` runs the BM25 whole-instruction top-|gold| baseline instead of the pipeline. */
  baseline?: 'oracle-count'
  planner: string
  selector: string
  retriever: string
  k: number
  tau: number
  limit?: number
  /** `--library`: a tool file evaluated in place of each suite's own library. */
  swapLibrary?: string
  /** `--examples`: `train` gives each split's library its training usage examples. Default `none`. */
  examples?: ExamplesMode
  /**
   * `--examples file:<path>` (with `examples: 'train'`): this file is every split's training
   * split, less the examples whose instruction is an evaluated query (bench/examples-from-file.ts).
   */
  examplesFile?: string
  /**
   * Trimmed per-query records for committed baselines: no candidate lists, query texts or
   * per-query timings; `filteredGold` and step texts only where they add something.
   */
  compact: boolean
  /** `--query-timeout`: time limit per query in ms; a query past it is a miss with error TIMEOUT. */
  queryTimeoutMs?: number
  /** `--concurrency`: queries run at once (default 1). Does not change any metric. */
  concurrency?: number
}

export interface QueryReport {
  /** The dataset's query id (ToolBench query_id, BEIR _id, CRAFT tool_id) or record position. */
  id: string
  /** The query text. Compact reports omit it: it is the dataset's, found by `id`. */
  instruction?: string
  gold: string[]
  predicted: string[]
  /** The gold tools that pass the lexical filter. Compact reports omit it when it equals `gold`. */
  filteredGold?: string[]
  steps: Array<{
    /** The step text. Compact reports omit it when it is the whole instruction. */
    text?: string
    selected: string | null
    /** Omitted in compact reports. */
    candidates?: Array<{ id: string; score: number }>
  }>
  /**
   * Compact reports omit `metrics.filtered` together with `filteredGold`: when the filter removed
   * nothing, the filtered scores are the raw ones.
   */
  metrics: Omit<QueryMetrics, 'filtered'> & { filtered?: QueryMetrics['filtered'] }
  /** Present when a component fell back for this query. */
  fallbacks?: Fallback[]
  /** Present when a model used tokens. */
  usage?: Usage
  /** Present when the pipeline threw; the query counts as a miss. */
  error?: { code: string; message: string }
  /** Pipeline stage times. Omitted in compact reports (the split's `latency` keeps the summary). */
  timings?: StageTimings
}

export interface SplitReport {
  name: string
  files: string[]
  notes: string[]
  stats: SplitStats
  library: {
    name: string
    tools: number
    /** Set when `--library` replaced the split's own library. */
    swapped?: { file: string; goldMissing: number; queriesWithGoldMissing: number }
    /** What predictions are matched by: `id`, or `api_call` for Gorilla. */
    matchBy: 'id' | 'api_call'
  }
  /** Names (and model ids) of the components, as they report themselves. */
  components: { planner: string; retriever: string; reranker?: string; selector: string }
  /**
   * Usage examples the library was given (`--examples train`): where they came from, how many
   * (per fold for k-fold), and the fold count (absent for a fixed training split).
   */
  examples?: { source: string; counts: number[]; folds?: number }
  metrics: AggregateMetrics
  latency: LatencySummary
  timings: { indexMs: number; runMs: number }
  queries: QueryReport[]
}

export interface SuiteReport {
  name: string
  description: string
  splits: SplitReport[]
  /** Over every query of every split (micro-average). */
  metrics: AggregateMetrics
  latency: LatencySummary
}

export interface BenchReport {
  formatVersion: number
  settings: BenchRunSettings
  /** The merged configuration (defaults < file < env < flags). */
  config: Config
  suites: SuiteReport[]
  /** Splits that could not run, with the reason (missing files, no queries). */
  skipped: SkippedSplit[]
  timings: { wallMs: number; loadMs: number }
}
