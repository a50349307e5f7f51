import { describe, expect, it } from 'vitest'
import {
  MOST_WARM_UP_RUNS,
  parseWrkOutput,
  WARM_UP_PASSES,
  warmUpTogether,
  warmUpUntilSteady,
  STEADY_CPU_TOLERANCE,
  MOST_REPEATS_WARM_UP_RUNS,
  warmUpUntil,
} from '../../bench/perf/wrk-load.ts'

// wrk 4's report for `-t1 -c16 -d10s --latency`; the thread stats' `+/- Stdev` column ends in
// `95.50%` and `70.99%`, which an unanchored `50%` / `99%` would read as the percentiles.
const REPORT = `Running 10s test @ http://127.0.0.1:41234/v1/select-tools
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   645.12us    1.23ms  31.72ms   95.50%
    Req/Sec    16.21k     1.05k   17.80k    70.99%
  Latency Distribution
     50%  512.00us
     75%  601.00us
     90%  789.00us
     99%    5.12ms
  161887 requests in 10.10s, 1.05GB read
  Socket errors: connect 0, read 1, write 0, timeout 2
  Non-2xx or 3xx responses: 3
Requests/sec:  16028.41
Transfer/sec:    106.52MB
`

describe('parseWrkOutput', () => {
  it('reads the percentiles from the latency distribution, not the stdev column', () => {
    expect(parseWrkOutput(REPORT)).toEqual({
      generator: 'wrk',
      p50: 0.512,
      p99: 5.12,
      requestsPerSecond: 16028.41,
      requests: 161887,
      errors: 3,
      non2xx: 3,
    })
  })

  it('converts every unit wrk prints, and gives NaN for a report without the line', () => {
    const at = (p50: string, p99: string) =>
      parseWrkOutput(REPORT.replace('512.00us', p50).replace('5.12ms', p99))
    expect(at('1.50s', '1.50m')).toMatchObject({ p50: 1500, p99: 90_000 })
    expect(at('2.00ms', '1.00h')).toMatchObject({ p50: 2, p99: 3_600_000 })
    const result = parseWrkOutput(REPORT.replace(/ {5}50%.*\n/, ''))
    expect(result.p50).toBeNaN()
    expect(result.p99).toBe(5.12)
    expect(parseWrkOutput('Requests/sec:  10.00\n')).toMatchObject({ errors: 0, non2xx: 0 })
  })
})

describe('warmUpUntil', () => {
  // Each run stands for 2 s of load that sent `perRun` requests.
  const counting = (perRun: number) => {
    const runs: number[] = []
    return {
      runs,
      warmUpRun: async () => {
        runs.push(perRun)
        return perRun
      },
    }
  }

  it('runs once, then again until the requests wanted are sent', async () => {
    const once = counting(2_000)
    expect(await warmUpUntil(once.warmUpRun, 1_605)).toBe(2_000)
    expect(once.runs).toHaveLength(1)
    // A 100k server on a loaded machine: 600 requests per 2 s run, 3 passes of 535 wanted.
    const slow = counting(600)
    expect(await warmUpUntil(slow.warmUpRun, 1_605)).toBe(1_800)
    expect(slow.runs).toHaveLength(3)
    const none = counting(5)
    expect(await warmUpUntil(none.warmUpRun, 0)).toBe(5)
    expect(none.runs).toHaveLength(1)
  })

  it('stops after MOST_WARM_UP_RUNS runs however few requests they sent', async () => {
    const stalled = counting(0)
    expect(await warmUpUntil(stalled.warmUpRun, 1_605)).toBe(0)
    expect(stalled.runs).toHaveLength(MOST_WARM_UP_RUNS)
  })
})

describe('warmUpTogether', () => {
  it('loads all sides again until each has been sent the requests wanted', async () => {
    const runs: number[][] = []
    // A 10k and a 100k server loaded together: 1,500 and 600 requests per run.
    const warmUpRun = async () => {
      runs.push([1_500, 600])
      return [1_500, 600]
    }
    const wanted = WARM_UP_PASSES * 535
    expect(await warmUpTogether(warmUpRun, wanted)).toEqual([9_000, 3_600])
    expect(runs).toHaveLength(6)
  })

  it('stops after MOST_WARM_UP_RUNS runs however few requests one side was sent', async () => {
    let runs = 0
    const warmUpRun = async () => {
      runs += 1
      return [2_000, 0]
    }
    expect(await warmUpTogether(warmUpRun, 3_210)).toEqual([2_000 * MOST_WARM_UP_RUNS, 0])
    expect(runs).toBe(MOST_WARM_UP_RUNS)
  })
})

describe('warmUpUntilSteady', () => {
  // Each run loads both servers once: 1,500 and 600 requests, CPU per request from a list.
  const loading = (cpu: number[][]) => {
    let run = 0
    return {
      runs: () => run,
      warmUpRun: async () => {
        run += 1
        return cpu.map((series, at) => ({
          requests: at === 0 ? 1_500 : 600,
          cpuMsPerRequest: series[Math.min(run, series.length) - 1],
        }))
      },
    }
  }

  it('goes on past the requests wanted until two successive runs agree on every server', async () => {
    // Round 51: still falling after 6 passes; 100k steady only at its 9th run.
    const cpu = [
      [4.5, 3.0, 2.2, 1.6, 1.2, 1.1, 1.05, 1.0, 1.0],
      [4.1, 3.5, 3.0, 2.6, 2.2, 1.9, 1.6, 1.4, 1.3],
    ]
    const { runs, warmUpRun } = loading(cpu)
    const wanted = 2 * 535
    const warmUp = await warmUpUntilSteady(warmUpRun, wanted)
    expect(warmUp.steadyAtRun).toEqual([6, 9])
    expect(warmUp.runs).toBe(9)
    expect(runs()).toBe(9)
    expect(warmUp.sent).toEqual([13_500, 5_400])
    expect(warmUp.cpuMsPerRequest[1]).toEqual(cpu[1])
    expect(warmUp.wanted).toBe(wanted)
  })

  it('does not count two agreeing runs before the requests wanted were sent', async () => {
    // 600 requests a run, 1,605 wanted: runs 1-2 agree but only run 3 has sent enough.
    const { warmUpRun } = loading([
      [1, 1, 1, 1],
      [1, 1, 2, 1.95],
    ])
    const warmUp = await warmUpUntilSteady(warmUpRun, 1_605)
    expect(warmUp.steadyAtRun).toEqual([2, 4])
  })

  it('stops after the most runs, naming the server that never settled', async () => {
    const noisy = Array.from({ length: 200 }, (_, at) => (at % 2 === 0 ? 1 : 1.5))
    const { runs, warmUpRun } = loading([[1], noisy])
    const warmUp = await warmUpUntilSteady(warmUpRun, 0)
    expect(warmUp.runs).toBe(MOST_REPEATS_WARM_UP_RUNS)
    expect(runs()).toBe(MOST_REPEATS_WARM_UP_RUNS)
    expect(warmUp.steadyAtRun).toEqual([2, null])
  })

  it('agrees within the tolerance of the larger figure, never on a run without requests', async () => {
    const inside = 1 - STEADY_CPU_TOLERANCE + 0.001
    expect(
      (await warmUpUntilSteady(loading([[1, inside]]).warmUpRun, 0, undefined, 2)).steadyAtRun,
    ).toEqual([2])
    const outside = 1 - STEADY_CPU_TOLERANCE - 0.001
    expect(
      (await warmUpUntilSteady(loading([[1, outside]]).warmUpRun, 0, undefined, 2)).steadyAtRun,
    ).toEqual([null])
    const idle = loading([[Number.NaN]]).warmUpRun
    expect((await warmUpUntilSteady(idle, 0, undefined, 3)).steadyAtRun).toEqual([null])
  })
})
