/**
 * The selection contract: for each step, pick at most one tool from its candidates.
 * @module
 */
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
}

export interface Selection {
  /** The chosen candidate's id, or `null` for "none of these". Always one of the request's candidates. */
  toolId: string | null
  /** Selector-specific confidence (retriever score, log-probability…), when there is one. */
  score?: number
  usage?: Usage
  fallback?: Fallback
}

export interface Selector {
  /** Identifies the selector in responses and benchmark rows: `top1`, `llm(openai:qwen3-8b)`. */
  readonly name: string
  /**
   * One selection per request, in order. Takes all steps at once so model-backed selectors can
   * batch them.
   */
  select(requests: SelectionRequest[], options?: CallOptions): Promise<Selection[]>
}
