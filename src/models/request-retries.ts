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
 * The budget follows the request through its async calls (AsyncLocalStorage): `selectTools`
 * opens one, and the model clients take from it. A call outside any (`toolsel models check`,
 * `toolsel train-data`) has only its own `maxRetries`.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks'

interface RetryBudget {
  /** Retries taken so far in this request. */
  used: number
}

const current = new AsyncLocalStorage<RetryBudget>()

/** Runs `work` with a fresh retry budget, or within the one it already runs in. */
export function withRequestRetries<T>(work: () => Promise<T>): Promise<T> {
  return current.getStore() === undefined ? current.run({ used: 0 }, work) : work()
}

/**
 * Takes one retry of the running request's budget, of at most `limit`: false when they are
 * spent (no retry then). Always true outside a request.
 */
export function takeRequestRetry(limit: number): boolean {
  const budget = current.getStore()
  if (budget === undefined) return true
  if (budget.used >= limit) return false
  budget.used += 1
  return true
}
