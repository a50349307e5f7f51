/**
 * The measures and table lines the bench scripts share: medians and percentiles, this process's
 * CPU milliseconds, another process's CPU seconds from /proc, timers, memory, the load average and
 * Markdown table lines. It imports node's modules only, so an entry script may import it before
 * its flags are parsed (test/bench/bench-scripts-args.test.ts).
 * @module
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The middle value of `numbers` (the upper one of an even count); NaN when there are none. */
export function median(numbers: readonly number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]
}

/** The middle value of `numbers`, the mean of the two middle ones of an even count. */
export function evenMedian(numbers: readonly number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** `median 12.3 ms (12.1, 12.3, 14.0)`: the median and each value, in milliseconds. */
export const medianAndEachMs = (values: readonly number[]) =>
  `median ${median(values).toFixed(1)} ms (${values.map((value) => value.toFixed(1)).join(', ')})`

/** `12 (14, 12, 9)`: the median and each value, rounded. */
export const medianAndEach = (values: readonly number[]) =>
  `${Math.round(median(values))} (${values.map((value) => Math.round(value)).join(', ')})`

/** The nearest-rank `p`th percentile (0 to 100) of `sorted` (ascending); NaN when empty. */
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

/** User + system CPU milliseconds this process has used so far (all its threads). */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100

/** User + system CPU seconds of process `pid` so far, all its threads. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name (which may hold spaces) in parentheses: utime is the 14th field.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
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

/** The 1, 5 and 15 minute load averages, as `8.05 7.41 4.59` (`digits` after the point). */
export const loadAverage = (digits = 2) =>
  loadavg()
    .map((value) => value.toFixed(digits))
    .join(' ')

/** One Markdown table line: `| a | b |`. */
export const markdownRow = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`

/**
 * A Markdown table's lines: the header, its rule (`align`: `---:` right-aligns a column, `---`
 * leaves it; one for every column or one a column) and a line a row.
 */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  align: string | readonly string[] = '---:',
): string[] {
  const rule = header.map((_, at) => (typeof align === 'string' ? align : align[at]))
  return [markdownRow(header), markdownRow(rule), ...rows.map(markdownRow)]
}

/**
 * The sides of a `--before DIR` comparison for `runSidesInChildren`: this checkout (the root above
 * `scriptUrl`'s folder), then `before` where given.
 */
export function checkoutSides(
  scriptUrl: string,
  before: string | undefined,
): Array<[string, string]> {
  const here = fileURLToPath(new URL('..', scriptUrl))
  return before === undefined
    ? [['this checkout', here]]
    : [
        ['this checkout', here],
        [before, before],
      ]
}

/**
 * Runs the entry script `scriptUrl` again with `--side ROOT` plus `args` in a fresh process for
 * each of `sides` ([name, root]) and round, sides alternating each round; each run prints its
 * result as JSON on its last line. The results per side's name, in round order.
 */
export async function runSidesInChildren<T>(
  scriptUrl: string,
  sides: ReadonlyArray<readonly [string, string]>,
  rounds: number,
  args: readonly string[],
): Promise<Map<string, T[]>> {
  const { execFile } = await import('node:child_process')
  const { promisify } = await import('node:util')
  const run = promisify(execFile)
  const results = new Map<string, T[]>(sides.map(([name]) => [name, []]))
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, root] of round % 2 === 0 ? sides : [...sides].reverse()) {
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(scriptUrl), '--side', root, ...args],
        { cwd: fileURLToPath(new URL('..', scriptUrl)), maxBuffer: 1 << 20 },
      )
      results.get(name)!.push(JSON.parse(stdout.trim().split('\n').at(-1)!) as T)
    }
  }
  return results
}

/** What a 1 ms timer saw while some work ran (`turnsWhile`), ms. */
export interface TurnGaps {
  /** The work, start to end. */
  ms: number
  /** The longest gap between two turns of the timer, wall, and when it began (ms in). */
  turn: number
  turnAt: number
  /** The most main-thread CPU in one such gap (`/proc/thread-self/schedstat`). */
  turnCpu: number
  /** Gaps over 100 ms. */
  over100: number
}

/** The calling thread's CPU time so far, ns (Linux). */
const threadCpuNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])

/**
 * `work`'s value and the gaps between the turns of a 1 ms timer while it ran (round 51, ex55's
 * examples-post-turn; library-put-turn): the longest, the most of this thread's own CPU in one
 * (the part the code holds, not the wait for a core). `TOOLSEL_BENCH_GAPS` set: the 8 gaps of
 * most CPU on stderr, each with `endUs`, its end in µs of `process.hrtime` (the clock of a
 * `--cpu-prof` profile's sample times: bench/README round 54, lib59).
 */
export async function turnsWhile<T>(work: () => Promise<T>): Promise<{ value: T } & TurnGaps> {
  const gaps: Array<{ wall: number; cpu: number; at: number; endUs: number }> = []
  let [lastWall, lastCpu] = [performance.now(), threadCpuNs()]
  const started = lastWall
  const ticker = setInterval(() => {
    const [wall, cpu] = [performance.now(), threadCpuNs()]
    // endUs: the gap's end on the clock of `node --cpu-prof`'s sample times (cut a profile to it).
    const endUs = Number(process.hrtime.bigint() / 1000n)
    gaps.push({ wall: wall - lastWall, cpu: (cpu - lastCpu) / 1e6, at: lastWall - started, endUs })
    ;[lastWall, lastCpu] = [wall, cpu]
  }, 1)
  let value: T
  try {
    value = await work()
  } finally {
    clearInterval(ticker)
  }
  const ms = performance.now() - started
  const longest = gaps.reduce((one, other) => (other.wall > one.wall ? other : one))
  if (process.env.TOOLSEL_BENCH_GAPS)
    for (const gap of [...gaps].sort((one, other) => other.cpu - one.cpu).slice(0, 8))
      console.error(JSON.stringify(gap))
  return {
    value,
    ms,
    turn: longest.wall,
    turnAt: longest.at,
    turnCpu: Math.max(...gaps.map((gap) => gap.cpu)),
    over100: gaps.filter((gap) => gap.wall > 100).length,
  }
}

/**
 * The JSON answer to `method` `url` with the JSON `body`, sent with node:http as it is (fetch
 * copied it: for a 32 MB body, a turn of the client's own in the measured process).
 */
export function sendJson(url: string, method: string, body: Buffer): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method,
      headers: { 'content-type': 'application/json', 'content-length': body.length },
    })
    request.on('error', reject)
    request.on('response', async (response) => {
      const parts: Buffer[] = []
      for await (const part of response) parts.push(part as Buffer)
      resolve(JSON.parse(Buffer.concat(parts).toString()))
    })
    request.end(body)
  })
}

/** The table of `TurnGaps` rows by side (`runSidesInChildren`'s), `what` the work's column. */
export function turnGapsTable(what: string, results: Map<string, TurnGaps[]>): string {
  return markdownTable(
    ['side', what, 'longest turn', 'its start, ms in', 'most CPU in one turn', 'turns > 100 ms'],
    [...results].map(([name, rows]) => [
      name,
      medianAndEach(rows.map((row) => row.ms)),
      medianAndEach(rows.map((row) => row.turn)),
      medianAndEach(rows.map((row) => row.turnAt)),
      medianAndEach(rows.map((row) => row.turnCpu)),
      medianAndEach(rows.map((row) => row.over100)),
    ]),
  ).join('\n')
}

/** The one request a turn bench measures (`runTurnBench`). */
/**
 * `count` distinct tools `<prefix>.tool_<n>` with `chars`-character descriptions and one
 * parameter (library-put-turn's upload, examples-post-turn's `--tools`: `TurnRequest.moreTools`).
 */
export function bulkTools(prefix: string, count: number, chars: number): object[] {
  const words = 'sends the weekly report to the team by friday and files it '
  return Array.from({ length: count }, (_, at) => ({
    id: `${prefix}.tool_${at}`,
    name: `tool_${at}`,
    description: `${at} ${words.repeat(Math.ceil(chars / words.length))}`.slice(0, chars).trim(),
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: `the query of tool ${at}` } },
      required: ['query'],
    },
  }))
}

export interface TurnRequest {
  method: 'POST' | 'PUT'
  /** Under the server's URL. */
  path: string
  /** The JSON body, built before the server starts. */
  body: Buffer
  /** `server` settings of the side's service (`serveSampleFromDist`). */
  server?: Record<string, unknown>
  /**
   * `bulkTools` (600-character descriptions) added to the sample's, served loaded from their
   * saved index (`serveSampleFromDist`).
   */
  moreTools?: number
  /** Whether the answer is the expected one (else the run fails). */
  expected(answer: Record<string, unknown>): boolean
}

/**
 * The frame of the side-by-side turn benches (examples-post-turn, library-put-turn). As a side's
 * child (`flags.side`: a checkout's root): in a fresh index directory, that checkout's dist/
 * service over the sample tools (lib/serve-dist.ts), `request()`'s body sent while `turnsWhile`
 * records the turns, its answer checked, the gaps printed as one JSON line, then exit. Else:
 * `flags.rounds` children per side of the `--before` comparison with `childArgs` (sides
 * alternating), then `title(loads)` and the table (`column`: the work's).
 */
export async function runTurnBench(
  scriptUrl: string,
  flags: { side?: string; before?: string; rounds: number },
  bench: {
    request: () => TurnRequest
    childArgs: readonly string[]
    title: (loads: string) => string
    column: string
  },
): Promise<void> {
  if (flags.side !== undefined) {
    const { serveSampleFromDist } = await import('./serve-dist.ts')
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-turn-'))
    try {
      const { method, path, body, server: settings, moreTools, expected } = bench.request()
      const server = await serveSampleFromDist(
        flags.side,
        indexDir,
        settings,
        bulkTools('bulk', moreTools ?? 0, 600),
      )
      await new Promise((resolve) => setTimeout(resolve, 200))
      const { value: answer, ...row } = await turnsWhile(() =>
        sendJson(`${server.url}${path}`, method, body),
      )
      await server.close()
      if (!expected(answer as Record<string, unknown>))
        throw new Error(`unexpected answer ${JSON.stringify(answer)}`)
      console.log(JSON.stringify(row))
    } finally {
      await rm(indexDir, { recursive: true, force: true })
    }
    process.exit(0)
  }
  const sides = checkoutSides(scriptUrl, flags.before)
  const loads = [loadAverage(1)]
  const results = await runSidesInChildren<TurnGaps>(
    scriptUrl,
    sides,
    flags.rounds,
    bench.childArgs,
  )
  loads.push(loadAverage(1))
  console.log(bench.title(loads.join(' -> ')))
  console.log(turnGapsTable(bench.column, results))
}
