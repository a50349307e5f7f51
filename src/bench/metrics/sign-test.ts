/**
 * The two-sided sign test `bench/compare-runs.ts` puts next to every "queries gained / lost"
 * count, so that a difference of a point between two benchmark runs can be told from noise.
 * @module
 */

/**
 * Two-sided exact sign test: the probability, under "either run is as likely to win a query",
 * of a split at least as uneven as `wins` against `losses` (ties left out before calling).
 * 1 when there is nothing to compare.
 */
export function signTestP(wins: number, losses: number): number {
  const n = wins + losses
  if (n === 0) return 1
  // In logarithms: 2^-n underflows to 0 beyond n = 1,074 (ToolLens alone has 1,877 queries).
  let logTerm = -n * Math.LN2 // log(C(n, 0) / 2^n)
  let logTail = Number.NEGATIVE_INFINITY
  for (let k = 0; k <= Math.min(wins, losses); k += 1) {
    logTail = logAdd(logTail, logTerm)
    logTerm += Math.log(n - k) - Math.log(k + 1)
  }
  return Math.min(1, 2 * Math.exp(logTail))
}

/** log(e^a + e^b) without overflow or underflow. */
function logAdd(a: number, b: number): number {
  const high = Math.max(a, b)
  if (high === Number.NEGATIVE_INFINITY) return high
  return high + Math.log1p(Math.exp(Math.min(a, b) - high))
}
