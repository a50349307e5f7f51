/**
 * The selection contract: for each step, pick at most one tool from its candidates.
 * @module
 */
import type { Tool } from '../library/tool.ts'
import type { CallOptions, Fallback, Usage } from '../plan/planner.ts'

/** A retrieved candidate with what a selector needs to judge it. */
export interface CandidateTool {
  id: string
  name: string
  /** One-line description (selectors never see full schemas). */
  description: string
  /** The retriever's score. */
  score: number
}

export interface SelectionRequest {
  /** The step text the tool must serve. */
  step: string
  /** Candidates, best-scored first. May be empty. */
  candidates: CandidateTool[]
  /** True for the step the pipeline added with the whole instruction (see `wholeInstructionStep`). */
  whole?: boolean
}

/** What a selector may read beside the steps. Every field is optional. */
export interface SelectOptions extends CallOptions {
  /** The instruction the steps were planned from. */
  instruction?: string
  /** Looks a candidate's tool up in the library. */
  tool?: (id: string) => Tool
  /** Return per-candidate features (`Selection.features`). */
  explain?: boolean
  /** Votes of the library's usage examples per tool id (0-1), when it has examples. */
  exampleVotes?: ReadonlyMap<string, number>
}

export interface Selection {
  /** The chosen candidate's id, or `null` for "none of these". Always one of the request's candidates. */
  toolId: string | null
  /** Selector-specific confidence (retriever score, log-probability…), when there is one. */
  score?: number
  usage?: Usage
  fallback?: Fallback
  /** With `explain`: the features the selector judged each candidate by, by candidate id. */
  features?: Record<string, Record<string, number>>
}

export interface Selector {
  /** Identifies the selector in responses and benchmark rows: `top1`, `llm(openai:qwen3-8b)`. */
  readonly name: string
  /**
   * One selection per request, in order. Takes all steps at once so model-backed selectors can
   * batch them.
   */
  select(requests: SelectionRequest[], options?: SelectOptions): Promise<Selection[]>
  /** Ask the pipeline to add the whole instruction as a last step when the plan split it. */
  readonly wholeInstructionStep?: boolean
  /** Retrieval threshold to use when the request sets none (the selector decides acceptance). */
  readonly retrievalMinScore?: number
}
