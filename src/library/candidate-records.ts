/**
 * What the pipeline and the learned selector read of a candidate tool, derived once per tool and
 * library version (library/tool-memo.ts) in one entry: the name and one-line description every
 * selector sees (pipeline.ts `toCandidateTools`), and the tool's namespace and position, by
 * which learn/candidate-features.ts finds the tool's terms (kept by position per library). One entry
 * instead of one per module: a candidate's second lookup in a request finds the entry the first
 * one just read (on a busy server each lookup of a tool not used for a while is a few cache
 * misses).
 * @module
 */
import { oneLineDescription } from './tool.ts'
import { ToolMemo } from './tool-memo.ts'

export interface CandidateRecord {
  readonly name: string
  readonly description: string
  /** The tool's namespace (the learned features' set coherence reads it). */
  readonly namespace: string | undefined
  /**
   * The tool's position in the library: the learned features keep its term numbers by position
   * in one array per library version (learn/candidate-features.ts).
   */
  readonly position: number
}

export const candidateRecords = new ToolMemo<CandidateRecord>((tool, position) => ({
  name: tool.name,
  description: oneLineDescription(tool.description),
  namespace: tool.namespace,
  position,
}))
