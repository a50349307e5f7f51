/**
 * The event-loop stall a piece of server work causes: a client keeps sending one request in a
 * loop while `action` runs, and `perf_hooks.monitorEventLoopDelay` records the longest and p99
 * delay of the loop meanwhile (bench/example-write-stall.ts, bench/upload-stall.ts).
 * @module
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'

export interface StallRow {
  phase: string
  /** How long `action` took, ms. */
  ms: number
  /** Longest and 99th-percentile event-loop delay while it ran, ms. */
  stallMax: number
  stallP99: number
  /** Client requests answered meanwhile, and the slowest of them (ms). */
  requests: number
  slowest: number
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `action` while `request` is sent in a loop (100 ms of it first), and measures the stall. */
export async function measureStall(
  phase: string,
  request: () => Promise<Response>,
  action: () => Promise<unknown>,
): Promise<StallRow> {
  let stop = false
  const latencies: number[] = []
  const client = (async () => {
    while (!stop) {
      const started = performance.now()
      const response = await request()
      await response.arrayBuffer()
      latencies.push(performance.now() - started)
    }
  })()
  await pause(100)
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  latencies.length = 0
  const started = performance.now()
  try {
    await action()
  } finally {
    delay.disable()
    stop = true
    await client
  }
  return {
    phase,
    ms: performance.now() - started,
    stallMax: delay.max / 1e6,
    stallP99: delay.percentile(99) / 1e6,
    requests: latencies.length,
    slowest: Math.max(0, ...latencies),
  }
}
