/**
 * Load with wrk (Debian package `wrk`) when it is installed: a C load generator uses a fraction of
 * the CPU autocannon needs, which matters on a 2-core machine where the generator and the server
 * share the cores. The request bodies rotate through a generated Lua script.
 * @module
 */
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface LoadResult {
  generator: string
  p50: number
  p99: number
  requestsPerSecond: number
  requests: number
  errors: number
  non2xx: number
}

export async function hasWrk(): Promise<boolean> {
  try {
    await run('wrk', ['--version']).catch((error: { stdout?: string }) => {
      // wrk --version prints its banner and exits 1.
      if (!String(error.stdout ?? '').includes('wrk')) throw error
    })
    return true
  } catch {
    return false
  }
}

function luaScript(bodies: string[]): string {
  const literals = bodies.map((body) => `[==[${body}]==]`).join(',\n')
  return `bodies = {\n${literals}\n}
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("POST", nil, {["content-type"] = "application/json"}, bodies[(counter % #bodies) + 1])
end
`
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** wrk prints latencies as `5.22ms`, `812.00us`, `1.02s` (or `1.50m`, `1.00h`). */
function milliseconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text)
  return match ? Number(match[1]) * UNIT_MS[match[2]] : Number.NaN
}

export interface WrkOptions {
  url: string
  bodies: string[]
  connections: number
  durationSeconds: number
  scriptDir: string
  /** Run 2 s of load first, not counted (JIT, caches). Default true. */
  warmUp?: boolean
  /**
   * Repeat the 2 s warm-up until it has sent this many requests (at most 10 times): a server
   * derives its candidates' data over the first passes of the instructions, which at 100k tools
   * take 3 passes, and its CPU per request falls over the first 4-6 (JIT; bench/warm-up-curve.ts):
   * more than 2 s on a loaded machine. Default 0 (one warm-up).
   */
  warmUpRequests?: number
}

export async function runWrk(options: WrkOptions): Promise<LoadResult> {
  const args = await wrkArgs(options)
  if (options.warmUp !== false) await wrkWarmUp(args, options.warmUpRequests ?? 0)
  const { stdout } = await run('wrk', args(options.durationSeconds), { maxBuffer: 1 << 20 })
  return parseWrkOutput(stdout)
}

/** runWrk's warm-up alone (e.g. before reading the server's CPU time for the measured run). */
export async function warmUpWrk(options: Omit<WrkOptions, 'warmUp'>): Promise<void> {
  await wrkWarmUp(await wrkArgs(options), options.warmUpRequests ?? 0)
}

async function wrkArgs(options: WrkOptions): Promise<(seconds: number) => string[]> {
  const script = join(options.scriptDir, 'wrk-bodies.lua')
  await writeFile(script, luaScript(options.bodies))
  return (seconds: number) => [
    '-t1',
    `-c${options.connections}`,
    `-d${seconds}s`,
    '--latency',
    '-s',
    script,
    options.url,
  ]
}

/** Warm-up: JIT, caches. */
async function wrkWarmUp(args: (seconds: number) => string[], wanted: number): Promise<void> {
  await warmUpUntil(async () => parseWrkOutput((await run('wrk', args(2))).stdout).requests, wanted)
}

/** Most warm-up runs of `warmUpUntil` and `warmUpTogether`. */
export const MOST_WARM_UP_RUNS = 10

/**
 * Most warm-up runs of `bench:perf --repeats` (2 s each, all servers at once): at load average
 * 15-17 (round 51) a server answered 40-120 req/s, so MOST_WARM_UP_RUNS runs sent it a quarter of
 * WARM_UP_PASSES passes and its CPU per request still fell 4.5 → 0.9 ms over the measured rounds.
 */
export const MOST_REPEATS_WARM_UP_RUNS = 90

/**
 * Passes of the instructions sent to a fresh server before a measure, by every bench script that
 * loads one (bench:perf, bench/perf-ratio.ts with or without `--paired`, bench/request-ab.ts,
 * bench/size-profile.ts): its CPU per request kept falling over its first 4-6 passes at 10k and
 * 100k tools (JIT and per-library caches; bench/warm-up-curve.ts, bench/README.md "Round 41"),
 * where 3 (bench:perf) or 4 (the others) were sent before.
 */
export const WARM_UP_PASSES = 6

/**
 * The warm-up of a load generator (JIT, caches): `warmUpRun` (one run of load, answering the
 * requests it sent) once, then again until `wanted` requests are sent in all, at most
 * MOST_WARM_UP_RUNS runs. Answers the requests sent. wrk's and autocannon's warm-ups both use it,
 * so that a 100k server on a loaded machine is past its first passes of the instructions whichever
 * generator drives it (bench/README.md, rounds 17 and 41).
 */
export async function warmUpUntil(
  warmUpRun: () => Promise<number>,
  wanted: number,
): Promise<number> {
  const [sent] = await warmUpTogether(async () => [await warmUpRun()], wanted)
  return sent
}

/**
 * `warmUpUntil` for servers loaded together (each its own generator, at the same time, so that
 * all share whatever else the machine runs): `warmUpRun` loads them all once, answering the
 * requests each was sent; again until each has been sent `wanted`, at most `mostRuns` runs
 * (MOST_WARM_UP_RUNS unless given). Answers the requests each was sent. (`warmUpUntil` is this
 * with one server.)
 */
export async function warmUpTogether(
  warmUpRun: () => Promise<number[]>,
  wanted: number,
  mostRuns = MOST_WARM_UP_RUNS,
): Promise<number[]> {
  let sent = await warmUpRun()
  for (let runs = 1; sent.some((count) => count < wanted) && runs < mostRuns; runs += 1) {
    const more = await warmUpRun()
    sent = sent.map((count, at) => count + more[at])
  }
  return sent
}

/**
 * Two successive warm-up runs of a server agree when their CPU per request differs by at most this
 * fraction of the larger: `bench:perf --repeats` warms its servers until each has met it once.
 */
export const STEADY_CPU_TOLERANCE = 0.1

/** One server's share of one warm-up run: the requests it was sent and its CPU time per request. */
export interface WarmUpShare {
  requests: number
  cpuMsPerRequest: number
}

/** What `warmUpUntilSteady` took, per server. */
export interface SteadyWarmUp {
  /** Requests each server was to be sent before its CPU per request counted. */
  wanted: number
  /** Warm-up runs (each loads every server once). */
  runs: number
  /** Requests each server was sent. */
  sent: number[]
  /** Each server's CPU ms per request, run by run. */
  cpuMsPerRequest: number[][]
  /** The run (1-based) at whose end each server was steady, or null when it never was. */
  steadyAtRun: Array<number | null>
}

/**
 * `warmUpTogether` until the servers are steady, not only sent a count: `warmUpRun` loads every
 * server once (at the same time) and answers each one's requests and CPU per request; again until
 * every server has been sent `wanted` requests and, after that, has had two successive runs whose
 * CPU per request agree within `tolerance` (STEADY_CPU_TOLERANCE) — at most `mostRuns` runs
 * (MOST_REPEATS_WARM_UP_RUNS). A server once steady stays counted so; the others go on being loaded
 * with it, so that all share the machine alike. Round 51 found a count of passes was not enough at
 * load 15-17: CPU per request still fell about 3x over the measured rounds.
 */
export async function warmUpUntilSteady(
  warmUpRun: () => Promise<WarmUpShare[]>,
  wanted: number,
  tolerance = STEADY_CPU_TOLERANCE,
  mostRuns = MOST_REPEATS_WARM_UP_RUNS,
): Promise<SteadyWarmUp> {
  const sent: number[] = []
  const cpuMsPerRequest: number[][] = []
  const steadyAtRun: Array<number | null> = []
  for (let runs = 1; runs <= mostRuns; runs += 1) {
    const shares = await warmUpRun()
    shares.forEach((share, at) => {
      sent[at] = (sent[at] ?? 0) + share.requests
      const seen = (cpuMsPerRequest[at] ??= [])
      seen.push(share.cpuMsPerRequest)
      steadyAtRun[at] ??= null
      if (steadyAtRun[at] !== null || sent[at] < wanted || seen.length < 2) return
      if (agree(seen[seen.length - 2], seen[seen.length - 1], tolerance)) steadyAtRun[at] = runs
    })
    if (steadyAtRun.every((run) => run !== null))
      return { wanted, runs, sent, cpuMsPerRequest, steadyAtRun }
  }
  return { wanted, runs: mostRuns, sent, cpuMsPerRequest, steadyAtRun }
}

/** Two CPU-per-request figures within `tolerance` of the larger (never when one is not a number). */
function agree(a: number, b: number, tolerance: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b) || a <= 0 || b <= 0) return false
  return Math.abs(a - b) <= tolerance * Math.max(a, b)
}

/**
 * The figures of `wrk --latency`'s report. A percentile is read from its own line of the latency
 * distribution only: the thread stats' `+/- Stdev` column also ends in `%` (`95.50%`), which an
 * unanchored `50%` would match.
 */
export function parseWrkOutput(stdout: string): LoadResult {
  const line = (pattern: RegExp) => pattern.exec(stdout)?.[1] ?? ''
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    stdout,
  )
  return {
    generator: 'wrk',
    p50: milliseconds(line(/^\s*50%\s+(\S+)/m)),
    p99: milliseconds(line(/^\s*99%\s+(\S+)/m)),
    requestsPerSecond: Number(line(/Requests\/sec:\s+([\d.]+)/)),
    requests: Number(line(/(\d+) requests in/)),
    errors: socketErrors ? socketErrors.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0,
    non2xx: Number(line(/Non-2xx or 3xx responses:\s+(\d+)/) || 0),
  }
}
