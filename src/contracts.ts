/**
 * The stage contracts and the types they share: what a planner, retriever, reranker and selector
 * take and return. Every stage folder (plan/, retrieve/, rerank/, select/) and models/ import
 * from here and from nowhere else for these types, so no stage depends on another.
 *
 * Implementations are found by id in lookup tables: planners, rerankers and selectors in
 * `components.ts`, retriever kinds in `retrieve/retriever-kinds.ts`.
 * @module
 */
import type { Tool } from './library/tool.ts'
import type { ToolLibrary } from './library/tool-library.ts'
import type { ExampleDecisionModel } from './examples/example-decision.ts'

// ── Shared ──────────────────────────────────────────────────────────────────────────────────

export interface CallOptions {
  signal?: AbortSignal
  /**
   * The retries the model calls of one request share (`models.openai.maxRetriesPerRequest`);
   * `selectTools` makes one per request. None: each call has only its own `maxRetries`.
   */
  retries?: RetryBudget
}

/**
 * A request's shared retries of model calls (models/request-retries.ts), and the models that
 * failed unavailable in it, which its later calls skip where a fallback stands in.
 */
export interface RetryBudget {
  /** Takes one retry of at most `limit`: false when they are spent (no retry then). */
  take(limit: number): boolean
  /** Records that `modelId` failed unavailable in this request (the first failure is kept). */
  markFailed?(modelId: string, failure: ModelFailure): void
  /** `modelId`'s failure earlier in this request, when it had one. */
  failureOf?(modelId: string): ModelFailure | undefined
}

/** A model call's failure as a request remembers it (a ToolselError's code, message, details). */
export interface ModelFailure {
  code: string
  message: string
  details: Readonly<Record<string, unknown>>
}

/** Tokens a model-backed component used. Rule-based components report none. */
export interface Usage {
  inputTokens: number
  outputTokens: number
}

/** Recorded when a component could not do its job and another one stood in for it. */
export interface Fallback {
  /** Stage: `planner` or `selector`. */
  stage: 'planner' | 'selector'
  /** Name of the component that failed. */
  from: string
  /** Name of the component that stood in. */
  to: string
  /** The error code and message of the failure. */
  code: string
  message: string
  /** The HTTP status the model's endpoint answered with, when it answered (401: key refused). */
  status?: number
  /**
   * The raw model output that could not be used, or the endpoint's answer when the call itself
   * failed (an HTTP 401 or 500, a body that is no chat completion), when there was one.
   */
  raw?: string
}

/** A `Fallback`'s fields that describe the failure `error`: its code, message and HTTP status. */
export function fallbackFailure(error: {
  code: string
  message: string
  details: Readonly<Record<string, unknown>>
}): Pick<Fallback, 'code' | 'message' | 'status'> {
  const { status } = error.details
  return {
    code: error.code,
    message: error.message,
    ...(typeof status === 'number' && status > 0 ? { status } : {}),
  }
}

/** A retrieved candidate with what a reranker or selector needs to judge it. */
export interface CandidateTool {
  id: string
  name: string
  /** One-line description (selectors never see full schemas). */
  description: string
  /** The retriever's score (or the reranker's, after reranking). */
  score: number
  /** The tool's position in the library, when the retriever knows it (see `Candidate.position`). */
  position?: number
}

// ── Plan ────────────────────────────────────────────────────────────────────────────────────

export interface PlanResult {
  /** Sub-step texts, in order. Never empty: a planner that finds nothing returns the instruction. */
  steps: string[]
  /** Name of the planner that actually produced `steps` (differs from the configured one after a fallback). */
  planner: string
  usage?: Usage
  fallback?: Fallback
  /**
   * The fallbacks after `fallback`, in order, when the planner that stood in fell back too (a
   * `plan.fallback` list: `llm(openai:b)` failed as well, and `rule` answered).
   */
  chained?: Fallback[]
}

/** An instruction in, short one-capability sub-steps out. */
export interface Planner {
  /** Identifies the planner in responses and benchmark rows: `rule`, `none`, `llm(onnx:qwen3-1.7b)`. */
  readonly name: string
  plan(instruction: string, options?: CallOptions): Promise<PlanResult>
}

// ── Retrieve ────────────────────────────────────────────────────────────────────────────────

/** One retrieved tool. Scores are only comparable within one retriever. */
export interface Candidate {
  /** Tool id in the library the retriever was built over. */
  id: string
  /** Retriever-specific relevance score; higher is better (BM25 score, cosine, fused score). */
  score: number
  /**
   * The tool's position in that library, when the retriever knows it (BM25: its document number):
   * per-tool data is then found by position instead of by id (library/tool-memo.ts). A hint only:
   * a position that does not hold `id` is ignored.
   */
  position?: number
}

export interface RetrieveOptions {
  /** Maximum number of candidates to return. */
  k: number
  /**
   * Minimum score a candidate needs to be kept (exclusive for BM25: the paper keeps scores above
   * tau). `undefined` means the retriever's own configured threshold.
   */
  minScore?: number
  signal?: AbortSignal
}

/** A query in, scored tool ids out, best first. */
export interface Retriever {
  /** Identifies the retriever in responses and benchmark rows: `bm25`, `dense:use-lite`, `hybrid(bm25+dense:use-lite)`. */
  readonly name: string
  /** Candidates sorted by descending score (ties by id), at most `k`, all above the threshold. */
  retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]>
  /**
   * True when `retrieve` never waits (BM25): it can only see an abort that fired before the call.
   * The pipeline checks its abort right before and passes such a retriever no signal, so that a
   * request's AbortSignal need not be made (lazy-abort.ts).
   */
  readonly synchronous?: boolean
}

// ── Rerank ──────────────────────────────────────────────────────────────────────────────────

/** One step and its retrieved candidates, best first. Also what a selector gets. */
export interface SelectionRequest {
  /** The step text the tool must serve. */
  step: string
  /** Candidates, best-scored first. May be empty. */
  candidates: CandidateTool[]
  /** True for the step the pipeline added with the whole instruction (see `wholeInstructionStep`). */
  whole?: boolean
}

/**
 * Reorders (or drops) each step's candidates between retrieval and selection. It may only return
 * candidates it was given; the pipeline refuses any other id (`RERANK_OUTSIDE_CANDIDATES`).
 */
export interface Reranker {
  /** Identifies the reranker in responses and benchmark rows: `identity`. */
  readonly name: string
  /** One candidate list per request, in request order, best first. */
  rerank(requests: SelectionRequest[], options?: CallOptions): Promise<CandidateTool[][]>
}

// ── Select ──────────────────────────────────────────────────────────────────────────────────

export interface Selection {
  /** The chosen candidate's id, or `null` for "none of these". Always one of the request's candidates. */
  toolId: string | null
  /** Selector-specific confidence (retriever score, log-probability…), when there is one. */
  score?: number
  usage?: Usage
  fallback?: Fallback
  /** The fallbacks after `fallback`, in order, when the selector that stood in fell back too. */
  chained?: Fallback[]
  /** With `explain`: the features the selector judged each candidate by, by candidate id. */
  features?: Record<string, Record<string, number>>
  /**
   * With `probabilities`: the selector's probability that each of the request's candidates is
   * needed, by candidate id (selectors that have one: the learned selector).
   */
  probabilities?: Record<string, number>
}

/** What a selector may read beside the steps. Every field is optional. */
export interface SelectOptions extends CallOptions {
  /** The instruction the steps were planned from. */
  instruction?: string
  /** Looks a candidate's tool up in the library. */
  tool?: (id: string) => Tool
  /**
   * The library the candidates come from (what `tool` reads), for selectors that keep data
   * derived from its tools across requests (see library/tool-memo.ts).
   */
  library?: ToolLibrary
  /** Return per-candidate features (`Selection.features`). */
  explain?: boolean
  /** Votes of the library's usage examples per tool id (0-1), when it has examples. */
  exampleVotes?: ReadonlyMap<string, number>
  /** Return each candidate's probability (`Selection.probabilities`), when the selector has one. */
  probabilities?: boolean
}

/** For each step, pick at most one tool from its candidates. */
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
  /**
   * The example-aware decision (examples/example-decision.ts) that re-decides this selector's
   * answer from a library's usage examples; it reads `Selection.probabilities`.
   */
  readonly exampleDecision?: ExampleDecisionModel
  /**
   * Loads what the first `select` would otherwise load on the way (e.g. the word vectors of a
   * model trained with dense features). The service awaits it at start-up, before it reports
   * ready, so no request pays for it. Resolves also when the load fails and the selector can
   * work without it.
   */
  prepare?(): Promise<void>
}
