/**
 * The dataset-adapter contract. A suite (e.g. `toolbench-g1`) loads into splits (one per query
 * file); every split has its own library and is indexed and scored on its own.
 * @module
 */
import type { BenchCase } from '../bench-case.ts'
import type { Tool } from '../../library/tool.ts'
import type { UsageExample } from '../../examples/usage-example.ts'

/** Where the library of a ToolBench split comes from (see the data README, section 1). */
export type LibraryMode = 'closed' | 'union' | 'corpus'

export const LIBRARY_MODES: readonly LibraryMode[] = ['closed', 'union', 'corpus']

/**
 * What to do with a query whose gold names a tool the suite's library does not have (TaskBench
 * gold names outside `tool_desc.json`, ToolBench pairs missing from a corpus): `drop` leaves the
 * query out, `keep` scores it against the raw gold (it can never be an exact match).
 */
export type UnmappableGold = 'drop' | 'keep'

/**
 * `--examples`: `none` (libraries without usage examples) or `train` (each split's library gets
 * its suite's training split as usage examples, or, for a suite without one, the other folds of a
 * k-fold split by query).
 */
export type ExamplesMode = 'none' | 'train'

export const EXAMPLES_MODES: readonly ExamplesMode[] = ['none', 'train']

export interface SuiteLoadOptions {
  /** Data root (the layout of shared/data). */
  dataDir: string
  /** A query file to use instead of the suite's own. */
  queries?: string
  /** A tool file to use instead of the suite's own library. */
  tools?: string
  libraryMode: LibraryMode
  unmappable: UnmappableGold
  /** Load the suite's training examples (`train`). Default `none`. */
  examples?: ExamplesMode
  /** Largest tool file read (`library.maxFileBytes`; default the importer's, 256 MiB). */
  maxFileBytes?: number
  /** Most tools (and tool file records) imported (`library.maxTools`; default 2,000,000). */
  maxTools?: number
}

/** Counts an adapter reports so that nothing is dropped silently. */
export interface SplitStats {
  /** Records read from the query file. */
  records: number
  /** Queries kept (the cases). */
  queries: number
  /** Gold tools (or pairs) that name no tool of the library. */
  unmappedGold: number
  /** Queries with at least one such gold tool. */
  queriesWithUnmappedGold: number
  /** Queries left out (unmappable gold under `drop`, or no query text). */
  droppedQueries: number
}

export interface BenchSplit {
  /** `<suite>/<part>`, e.g. `toolbench-g1/G1_instruction`. */
  name: string
  /** Files read, as paths. */
  files: string[]
  /** The split's library (for closed mode: the union, used for gold texts and match keys). */
  tools: Tool[]
  cases: BenchCase[]
  stats: SplitStats
  /** Human-readable facts about how gold was built (mapping rules, subsets, quirks). */
  notes: string[]
  /**
   * The equivalence a prediction is matched by, when it is not the tool id: Gorilla matches by
   * `api_call`, as Gorilla's own evaluation does. Tools with equal keys are interchangeable.
   */
  matchKey?: (tool: Tool) => string
  /**
   * Under `--examples train`, the suite's own training split as usage examples over this split's
   * library (tool ids of `tools`). Absent when the suite has no training split: the runner then
   * uses k-fold examples from the split's own queries.
   */
  training?: { examples: UsageExample[]; source: string; notes: string[] }
}

/** A split that could not be loaded, with why (missing files, no queries). */
export interface SkippedSplit {
  name: string
  reason: string
}

export interface SuiteLoadResult {
  splits: BenchSplit[]
  skipped: SkippedSplit[]
}

export interface BenchSuite {
  /** `toolbench-g1`, `gorilla-torchhub`, … */
  readonly name: string
  /** One line for `--help` and the report. */
  readonly description: string
  /** Loads every split; a split whose files are missing is returned in `skipped`. */
  load(options: SuiteLoadOptions): Promise<SuiteLoadResult>
}
