/**
 * Flags of bench/perf.ts and the shape of its `--json` file, apart from the measuring code so that
 * a unit test can check them.
 * @module
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'

/** Most measured rounds `--repeats` accepts. */
export const MAX_PERF_REPEATS = 50

/** Largest library `--sizes` accepts. */
export const MAX_PERF_SIZE = 1_000_000

export interface PerfOptions {
  sizes: number[]
  durationSeconds: number
  connections: number
  /**
   * Measured HTTP loads per size (1: one fresh server per size, measured once, as before). Above
   * 1 the sizes' servers all stay up and are loaded in interleaved rounds; the table gives each
   * size's median and the median of the rounds' ratios.
   */
  repeats: number
  /** With `repeats`: each round loads every size's server at the same time. */
  together: boolean
  generator: 'wrk' | 'autocannon'
  dataDir: string
  /** Also measure a bare hono app returning a precomputed response of toolsel's size. */
  ceiling: boolean
  /** Where to write the machine-readable results, if anywhere. */
  json?: string
  dense: boolean
  denseOnly: boolean
  denseEmbedder: string
  denseText: 'full' | 'short'
  denseCache: string
  denseCold: boolean
  /** Internal: run one size in process (child mode). */
  child?: number
  childDense?: number
  out?: string
}

/** bench/perf.ts's flags, with their defaults. */
export const PERF_OPTIONS = {
  sizes: { type: 'string', default: '10000,50000' },
  duration: { type: 'string', default: '10' },
  connections: { type: 'string', default: '16' },
  repeats: { type: 'string', default: '1' },
  together: { type: 'boolean', default: false },
  generator: { type: 'string', default: 'wrk' },
  data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  ceiling: { type: 'boolean', default: false },
  json: { type: 'string' },
  child: { type: 'string' },
  out: { type: 'string' },
  dense: { type: 'boolean', default: false },
  'dense-only': { type: 'boolean', default: false },
  'dense-embedder': { type: 'string', default: 'use-lite' },
  'dense-text': { type: 'string', default: 'full' },
  'dense-cache': { type: 'string', default: 'bench/out/perf-dense-cache' },
  'dense-cold': { type: 'boolean', default: false },
  'child-dense': { type: 'string' },
} satisfies NonNullable<ParseArgsConfig['options']>

/** Parses bench/perf.ts's arguments; throws an Error naming the bad value and the fix. */
export function parsePerfArgs(args: readonly string[]): PerfOptions {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: PERF_OPTIONS,
  })
  if (positionals.length > 0) {
    throw new Error(`Unexpected argument "${positionals[0]}"; options start with --.`)
  }
  const sizes = values.sizes.split(',').map((text) => parseSize(text.trim()))
  const generator = values.generator
  if (generator !== 'wrk' && generator !== 'autocannon') {
    throw new Error(`--generator must be wrk or autocannon, got "${generator}".`)
  }
  const text = values['dense-text']
  if (text !== 'full' && text !== 'short') {
    throw new Error(`--dense-text must be full or short, got "${text}".`)
  }
  if (values.together && values.repeats === '1') {
    throw new Error('--together loads the sizes in rounds: give --repeats N (N > 1) with it.')
  }
  if (values.json === '')
    throw new Error('--json needs a file name, e.g. --json bench/out/perf.json')
  return {
    sizes,
    durationSeconds: positiveInteger('--duration', values.duration, 3600),
    connections: positiveInteger('--connections', values.connections, 10_000),
    repeats: positiveInteger('--repeats', values.repeats, MAX_PERF_REPEATS),
    together: values.together,
    generator,
    dataDir: values.data,
    ceiling: values.ceiling,
    json: values.json,
    dense: values.dense,
    denseOnly: values['dense-only'],
    denseEmbedder: values['dense-embedder'],
    denseText: text,
    denseCache: values['dense-cache'],
    denseCold: values['dense-cold'],
    child: values.child === undefined ? undefined : parseSize(values.child),
    childDense: values['child-dense'] === undefined ? undefined : parseSize(values['child-dense']),
    out: values.out,
  }
}

function parseSize(text: string): number {
  const size = Number(text.replace(/_/g, ''))
  if (!/^\d[\d_]*$/.test(text) || !Number.isSafeInteger(size) || size < 1 || size > MAX_PERF_SIZE) {
    throw new Error(
      `--sizes takes whole numbers of tools from 1 to ${MAX_PERF_SIZE}, comma-separated (e.g. 10000,100000,1000000); got "${text}".`,
    )
  }
  return size
}

function positiveInteger(flag: string, text: string, max: number): number {
  const value = Number(text)
  if (!/^\d+$/.test(text) || value < 1 || value > max) {
    throw new Error(`${flag} takes a whole number from 1 to ${max}, got "${text}".`)
  }
  return value
}

/** One row of the `--json` file. Times in seconds (S) or milliseconds (Ms), memory in MiB. */
export interface PerfJsonRow {
  tools: number
  /** In-process index build. */
  buildS: number
  /** `toolsel serve` on the saved index: spawn to the first ready `/readyz`. */
  loadS: number
  /** Server RSS when ready. */
  rssMiB: number
  /** Server peak RSS (VmHWM) after the load test. */
  peakRssMiB: number
  bm25P50Ms: number
  bm25P99Ms: number
  selectP50Ms: number
  httpReqPerS: number
  httpP50Ms: number
}

/** The `--json` file: `ceiling` is null when `--ceiling` was not given. */
export interface PerfJson {
  rows: PerfJsonRow[]
  ceiling: { httpReqPerS: number } | null
}

export interface PerfRowInput {
  tools: number
  buildSeconds: number
  bm25: { p50: number; p99: number }
  selectTools: { p50: number }
  http: {
    serverLoadSeconds: number
    serverReadyRssMiB: number
    serverPeakRssMiB: number
    requestsPerSecond: number
    p50: number
  }
}

export function perfJson(
  rows: readonly PerfRowInput[],
  ceiling?: { requestsPerSecond: number },
): PerfJson {
  return {
    rows: rows.map((row) => ({
      tools: row.tools,
      buildS: row.buildSeconds,
      loadS: row.http.serverLoadSeconds,
      rssMiB: row.http.serverReadyRssMiB,
      peakRssMiB: row.http.serverPeakRssMiB,
      bm25P50Ms: row.bm25.p50,
      bm25P99Ms: row.bm25.p99,
      selectP50Ms: row.selectTools.p50,
      httpReqPerS: row.http.requestsPerSecond,
      httpP50Ms: row.http.p50,
    })),
    ceiling: ceiling ? { httpReqPerS: ceiling.requestsPerSecond } : null,
  }
}
