/**
 * The retries of model calls that one request may make, all its calls together
 * (`models.openai.maxRetriesPerRequest`). Each call has its own `maxRetries`, and a request makes
 * one call per model of a fallback list (per step for the selector), so before round 43 the
 * retries multiplied along the list: `["openai:b", "openai:c", "rule"]` after `openai:a`, 2
 * retries and `Retry-After: 1` made one request call a failing endpoint 18 times in 12.5 s. Now
 * the retries are shared: every model of the list still gets its first try (a healthy request,
 * one call per step, is never held back), and only as many retries are made in all as the
 * budget holds.
 *
 * `selectTools` makes one budget per request and hands it to its stages with their signal
 * (`CallOptions.retries`); the model clients take from it. It is passed, not found through
 * AsyncLocalStorage: on Node 20 the first `AsyncLocalStorage.run` turns on promise hooks for the
 * whole process, a cost on every promise of every request, model or not. A call given none
 * (`toolsel models check`, `toolsel train-data`) has only its own `maxRetries`.
 *
 * The budget also remembers the models that failed unavailable in the request
 * (`UPSTREAM_UNAVAILABLE`: unreachable, or a 429 or 5xx after its retries): an LLM planner or
 * selector whose model is among them does not call it again but lets its fallback stand in at
 * once (llm-planner.ts, llm-selector.ts). Before round 45 a planner's `openai:a` refused its
 * connection and the selector's `openai:a` was called for each step all the same, each call
 * failing the same way (with its own first try and whatever retries were left).
 * @module
 */
import type { ModelFailure, RetryBudget } from '../contracts.ts'
import { ToolselError, type ErrorCode } from '../errors.ts'

/** One request's shared retries: a counter the concurrent selector steps take from. */
export class RequestRetries implements RetryBudget {
  #used = 0
  /** The models that failed unavailable in this request, by model id: their first failure. */
  readonly #failed = new Map<string, ModelFailure>()

  /** Retries taken so far. */
  get used(): number {
    return this.#used
  }

  /** Takes one retry of at most `limit`: false when they are spent (no retry then). */
  take(limit: number): boolean {
    if (this.#used >= limit) return false
    this.#used += 1
    return true
  }

  markFailed(modelId: string, failure: ModelFailure): void {
    if (!this.#failed.has(modelId)) this.#failed.set(modelId, failure)
  }

  failureOf(modelId: string): ModelFailure | undefined {
    return this.#failed.get(modelId)
  }
}

/**
 * True for a failure that marks a model failed for the rest of its request: `UPSTREAM_UNAVAILABLE`,
 * which the OpenAI-compatible client throws for an unreachable server and for a 429 or 5xx once
 * its retries are done (or the request's are spent). Not an answer that could not be used
 * (`PLAN_UNPARSABLE`, a body that is no chat completion) or any other `MODEL_CALL_FAILED` (a 400
 * may be about one prompt), which another step's call may not meet; not `TIMEOUT` or `ABORTED`,
 * which fail the request anyway.
 */
export function failsForTheRequest(failure: { code: string }): boolean {
  return failure.code === 'UPSTREAM_UNAVAILABLE'
}

/**
 * What a call skipped for `earlier` fails with: its code and details (the status the endpoint
 * answered; not its answer, `raw`), the message saying the model was not called again and why.
 */
export function skippedCall(name: string, earlier: ModelFailure): ToolselError {
  return new ToolselError(
    earlier.code as ErrorCode,
    `${name} not called: its model failed earlier in this request (${earlier.message})`,
    // Its status, not its answer: this call got none.
    { details: { ...withoutRaw(earlier.details), skipped: true } },
  )
}

function withoutRaw(details: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { raw: _raw, ...rest } = details
  return rest
}
