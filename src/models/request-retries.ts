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
 * @module
 */
import type { RetryBudget } from '../contracts.ts'

/** One request's shared retries: a counter the concurrent selector steps take from. */
export class RequestRetries implements RetryBudget {
  #used = 0

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
}
