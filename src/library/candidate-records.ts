/**
 * What the pipeline and the learned selector read of a candidate tool, derived once per tool and
 * library version (library/tool-memo.ts) in one entry: the name and one-line description every
 * selector sees (pipeline.ts `toCandidateTools`), and the learned features' terms of the tool,
 * which learn/candidate-features.ts derives on its first read and keeps beside them. One entry
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
  /** The learned features' terms of the tool (learn/candidate-features.ts), once derived. */
  featureTerms: unknown
}

export const candidateRecords = new ToolMemo<CandidateRecord>((tool) => ({
  name: tool.name,
  description: oneLineDescription(tool.description),
  featureTerms: undefined,
}))
