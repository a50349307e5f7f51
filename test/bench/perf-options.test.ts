import { describe, expect, it } from 'vitest'
import { MAX_PERF_SIZE, parsePerfArgs, perfJson } from '../../bench/perf/perf-options.ts'

describe('bench/perf.ts flags', () => {
  it('has the documented defaults', () => {
    const options = parsePerfArgs([])
    expect(options.sizes).toEqual([10_000, 50_000])
    expect(options).toMatchObject({
      durationSeconds: 10,
      connections: 16,
      repeats: 1,
      together: false,
      generator: 'wrk',
      ceiling: false,
      json: undefined,
      dense: false,
    })
  })

  it('reads --sizes up to 1,000,000, --ceiling and --json', () => {
    const options = parsePerfArgs([
      '--sizes',
      '50, 10000,1_000_000',
      '--ceiling',
      '--json',
      'bench/out/perf.json',
      '--duration',
      '3',
      '--generator',
      'autocannon',
    ])
    expect(options.sizes).toEqual([50, 10_000, MAX_PERF_SIZE])
    expect(options.ceiling).toBe(true)
    expect(options.json).toBe('bench/out/perf.json')
    expect(options.durationSeconds).toBe(3)
    expect(options.generator).toBe('autocannon')
  })

  it('refuses bad values, naming the value and what is accepted', () => {
    expect(() => parsePerfArgs(['--sizes', '1000001'])).toThrow(
      '--sizes takes whole numbers of tools from 1 to 1000000, comma-separated (e.g. 10000,100000,1000000); got "1000001".',
    )
    for (const sizes of ['0', '10k', '1e5', '', '10000,,5', '2.5']) {
      expect(() => parsePerfArgs(['--sizes', sizes]), sizes).toThrow(/^--sizes takes/)
    }
    expect(() => parsePerfArgs(['--duration', '0'])).toThrow('--duration takes a whole number')
    expect(parsePerfArgs(['--repeats', '5', '--together'])).toMatchObject({
      repeats: 5,
      together: true,
    })
    expect(() => parsePerfArgs(['--together'])).toThrow(
      '--together loads the sizes in rounds: give --repeats N (N > 1) with it.',
    )
    for (const repeats of ['0', '51', '2.5', 'x']) {
      expect(() => parsePerfArgs(['--repeats', repeats]), repeats).toThrow(
        `--repeats takes a whole number from 1 to 50, got "${repeats}".`,
      )
    }
    expect(() => parsePerfArgs(['--generator', 'ab'])).toThrow(
      '--generator must be wrk or autocannon, got "ab".',
    )
    expect(() => parsePerfArgs(['--sizes=-3'])).toThrow(/^--sizes takes/)
    expect(() => parsePerfArgs(['--json', ''])).toThrow('--json needs a file name')
    expect(() => parsePerfArgs(['10000'])).toThrow('Unexpected argument "10000"')
    expect(() => parsePerfArgs(['--size', '10'])).toThrow(/size/)
  })
})

describe('bench/perf.ts --json', () => {
  // What one tiny size's measurement hands over (values made up; only the shape is checked).
  const row = {
    tools: 50,
    buildSeconds: 0.02,
    bm25: { p50: 0.01, p99: 0.05 },
    selectTools: { p50: 0.04 },
    http: {
      serverLoadSeconds: 1.5,
      serverReadyRssMiB: 120,
      serverPeakRssMiB: 140,
      requestsPerSecond: 900,
      p50: 4.2,
    },
  }

  it('writes exactly {rows:[{tools, buildS, loadS, rssMiB, peakRssMiB, bm25P50Ms, bm25P99Ms, selectP50Ms, httpReqPerS, httpP50Ms}], ceiling:{httpReqPerS}}', () => {
    const json = JSON.parse(JSON.stringify(perfJson([row], { requestsPerSecond: 3000 })))
    expect(Object.keys(json)).toEqual(['rows', 'ceiling'])
    expect(json.rows).toHaveLength(1)
    expect(Object.keys(json.rows[0])).toEqual([
      'tools',
      'buildS',
      'loadS',
      'rssMiB',
      'peakRssMiB',
      'bm25P50Ms',
      'bm25P99Ms',
      'selectP50Ms',
      'httpReqPerS',
      'httpP50Ms',
    ])
    expect(json.rows[0]).toEqual({
      tools: 50,
      buildS: 0.02,
      loadS: 1.5,
      rssMiB: 120,
      peakRssMiB: 140,
      bm25P50Ms: 0.01,
      bm25P99Ms: 0.05,
      selectP50Ms: 0.04,
      httpReqPerS: 900,
      httpP50Ms: 4.2,
    })
    expect(json.ceiling).toEqual({ httpReqPerS: 3000 })
  })

  it('writes ceiling null without --ceiling', () => {
    expect(perfJson([row]).ceiling).toBeNull()
    expect(perfJson([]).rows).toEqual([])
  })
})
