/**
 * The planning contract: an instruction in, short one-capability sub-steps out.
 * @module
 */

export interface CallOptions {
  signal?: AbortSignal
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
  /** The raw model output that could not be used, when there was one. */
  raw?: string
}

export interface PlanResult {
  /** Sub-step texts, in order. Never empty: a planner that finds nothing returns the instruction. */
  steps: string[]
  /** Name of the planner that actually produced `steps` (differs from the configured one after a fallback). */
  planner: string
  usage?: Usage
  fallback?: Fallback
}

export interface Planner {
  /** Identifies the planner in responses and benchmark rows: `rule`, `none`, `llm(onnx:qwen3-1.7b)`. */
  readonly name: string
  plan(instruction: string, options?: CallOptions): Promise<PlanResult>
}
