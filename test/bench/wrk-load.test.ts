import { describe, expect, it } from 'vitest'
import {
  MOST_WARM_UP_RUNS,
  parseWrkOutput,
  WARM_UP_PASSES,
  warmUpTogether,
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
