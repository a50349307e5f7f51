/**
 * Nearest-rank percentile (the smallest value with at least p% of the values at or below it),
 * so a reported p95 is always a latency that was actually observed. NaN for no values.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * sorted.length)
  return sorted[Math.max(0, rank - 1)]
}
