/**
 * The event-loop stall a piece of server work causes: a client keeps sending one request in a
 * loop while `action` runs, and `perf_hooks.monitorEventLoopDelay` records the longest and p99
 * delay of the loop meanwhile (bench/example-write-stall.ts, bench/upload-stall.ts).
 * @module
 */
import { readFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

export interface StallRow {
  phase: string
  /** How long `action` took, ms. */
  ms: number
  /** Longest and 99th-percentile event-loop delay while it ran, ms. */
  stallMax: number
  stallP99: number
  /**
   * The longest stall counted in the main thread's own CPU time, ms: the most CPU the thread used
   * between two turns of a 1 ms timer (`/proc/thread-self/schedstat`; NaN where there is none).
   * On a loaded machine the wall-clock stall also counts the time the thread waited for a core;
   * this is the part the code itself holds the event loop for (its work and the collector's).
   */
  stallCpuMax: number
  /** Client requests answered meanwhile, and the slowest of them (ms). */
  requests: number
  slowest: number
  /** The process's resident memory once `action` is done, MB. */
  rssMb: number
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
  let lastCpu = threadCpuNs()
  let stallCpuMax = 0
  const cpuProbe = setInterval(() => {
    const cpu = threadCpuNs()
    stallCpuMax = Math.max(stallCpuMax, cpu - lastCpu)
    lastCpu = cpu
  }, 1)
  latencies.length = 0
  const started = performance.now()
  try {
    await action()
  } finally {
    delay.disable()
    clearInterval(cpuProbe)
    stop = true
    await client
  }
  return {
    phase,
    ms: performance.now() - started,
    stallMax: delay.max / 1e6,
    stallP99: delay.percentile(99) / 1e6,
    stallCpuMax: stallCpuMax / 1e6,
    requests: latencies.length,
    slowest: Math.max(0, ...latencies),
    rssMb: process.memoryUsage().rss / 1e6,
  }
}

/** The calling thread's CPU time so far, ns (Linux; NaN elsewhere). */
function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])
  } catch {
    return Number.NaN
  }
}
