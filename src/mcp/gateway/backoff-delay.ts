/**
 * Exponential backoff with jitter for reconnecting to an upstream: `initial * 2^attempt`, capped
 * at `max`, then scaled by a random factor in [0.8, 1.2) so that many gateways restarted together
 * don't reconnect in lockstep ("Exponential Backoff And Jitter", AWS Architecture Blog, 2015).
 * @module
 */

/** Delay in ms before reconnect attempt `attempt` (0-based). `random` is injectable for tests. */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30))
  return Math.round(Math.min(maxMs, base * (0.8 + 0.4 * random())))
}
