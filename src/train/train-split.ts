/**
 * The training examples `toolsel train-data` turns into records: an instruction and its gold tool
 * ids over one library. They come from a suite's training split (never a file the benchmark
 * evaluates on: test queries are excluded by id and by text) or from a user's examples file.
 * @module
 */
import type { Tool } from '../library/tool.ts'

export interface TrainExample {
  /** Stable id within the split: the dataset's query id, or the line number of an examples file. */
  id: string
  instruction: string
  /** Gold tool ids (tool ids of the split's library), de-duplicated, in dataset order. */
  gold: string[]
}

/** What was left out of a training split before any record was written, and why. */
export interface SplitExclusions {
  /** The benchmark test files whose queries were excluded. */
  testFiles: string[]
  /** Training queries whose id is a test query id. */
  byId: number
  /** Training queries whose text (whitespace and case folded) is a test query's text, id aside. */
  byText: number
  /** Training queries whose gold names a tool the library lacks. */
  unmappable: number
  /** Training queries without text or gold. */
  empty: number
}

export interface TrainSplit {
  /** `toolbench-g3/train`, `toollens/train`, or `examples:<file>`. */
  name: string
  /** Files read, as paths. */
  files: string[]
  /** The library the gold ids name. */
  tools: Tool[]
  examples: TrainExample[]
  /** Records in the source before exclusions. */
  records: number
  exclusions: SplitExclusions
  /** How gold was built, in words (for the data card). */
  notes: string[]
}

/** Case and whitespace folded, for matching a training query against test queries by text. */
export function normalizeQueryText(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase()
}

/**
 * Drops examples whose id or text is a test query's, counting each reason once (an id match is
 * counted as such even when the text matches too).
 */
export function excludeTestQueries(
  examples: readonly TrainExample[],
  test: ReadonlyArray<{ id: string; instruction: string }>,
): { kept: TrainExample[]; byId: number; byText: number } {
  const ids = new Set(test.map((item) => item.id))
  const texts = new Set(test.map((item) => normalizeQueryText(item.instruction)))
  let byId = 0
  let byText = 0
  const kept: TrainExample[] = []
  for (const example of examples) {
    if (ids.has(example.id)) byId += 1
    else if (texts.has(normalizeQueryText(example.instruction))) byText += 1
    else kept.push(example)
  }
  return { kept, byId, byText }
}
