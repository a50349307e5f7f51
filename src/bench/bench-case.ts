/**
 * The one shape every dataset adapter produces: a query, its gold tools, and (closed mode only)
 * its own small library.
 * @module
 */
import type { Tool } from '../library/tool.ts'

export interface BenchCase {
  /** Stable id within its split: the dataset's query id, or the record's position. */
  id: string
  /** The query text given to the pipeline. */
  instruction: string
  /** Gold tool ids, de-duplicated, in dataset order. */
  gold: string[]
  /** Closed mode only: the query's own candidate tools (e.g. a ToolBench record's `api_list`). */
  library?: Tool[]
}
