/** Small measurement helpers for the benchmarks: percentiles, timers, memory. */

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]
}

export interface LatencySummary {
  count: number
  p50: number
  p99: number
  mean: number
}

/** Milliseconds per call, summarised. */
export function summarize(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b)
  const mean = sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length)
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean }
}

/** Runs `call` once per input (`passes` times over the inputs) and returns per-call milliseconds. */
export async function timeCalls<T>(
  inputs: readonly T[],
  passes: number,
  call: (input: T) => unknown,
): Promise<number[]> {
  const samples: number[] = []
  for (let pass = 0; pass < passes; pass += 1) {
    for (const input of inputs) {
      const started = process.hrtime.bigint()
      await call(input)
      samples.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
  }
  return samples
}

export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc) {
    gc()
    gc()
  }
}

export function rssMiB(): number {
  return process.memoryUsage().rss / 2 ** 20
}

export function heapMiB(): number {
  return process.memoryUsage().heapUsed / 2 ** 20
}
