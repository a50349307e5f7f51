/**
 * The HTTP half of bench/perf.ts: `toolsel serve` in a child process on a built index, driven by
 * wrk (or autocannon) over loopback with the benchmark instructions in rotation; and the
 * `--ceiling` server (bench/perf/ceiling-server.ts) driven the same way.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { cpuMillis } from './serve-process.ts'
import {
  hasWrk,
  MOST_REPEATS_WARM_UP_RUNS,
  runWrk,
  STEADY_CPU_TOLERANCE,
  warmUpWrk,
  WARM_UP_PASSES,
  warmUpUntil,
  warmUpUntilSteady,
  type LoadResult,
  type SteadyWarmUp,
  type WrkOptions,
} from './wrk-load.ts'

export interface HttpLoadOptions {
  indexDir: string
  library: string
  instructions: string[]
  connections: number
  durationSeconds: number
  /** `wrk` when installed (default), else `autocannon`. */
  generator?: 'wrk' | 'autocannon'
}

export interface HttpLoadResult extends LoadResult {
  /** Server RSS after the load test. */
  serverRssMiB: number
  /** Server RSS when it first answered /readyz. */
  serverReadyRssMiB: number
  /** Server peak RSS (VmHWM) after the load test. */
  serverPeakRssMiB: number
  /** Spawn to the first ready /readyz. */
  serverLoadSeconds: number
  /** Mean size of the responses to the first 50 instructions (before the load). */
  meanResponseBytes: number
  /** The one of those responses closest to the mean size. */
  responseSample: string
  /** The server's CPU time (user + system, /proc) over the measured run ÷ its requests. */
  serverCpuMsPerRequest: number
  /** The machine's 1-minute load average when the measured run started. */
  loadAverage: number
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      )
    })
  })
}

export async function waitUntilReady(
  url: string,
  child: ChildProcess,
  timeoutMs = 120_000,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/readyz`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
  throw new Error('server did not become ready')
}

export async function processRssMiB(
  pid: number,
  field: 'VmRSS' | 'VmHWM' = 'VmRSS',
): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN)
  return kib / 1024
}

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)))
  })
}

export async function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const port = await freePort()
  const args = ['bin/toolsel.mjs', 'serve', '--host', '127.0.0.1', '--port', String(port)]
  args.push('--library', options.library, '--index-dir', options.indexDir, '--log-level', 'warn')
  return runServerLoad(args, port, options, true)
}

/** Load on the bare hono app of ceiling-server.ts answering `response` to every request. */
export async function runCeilingLoad(
  response: string,
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'>,
): Promise<HttpLoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'toolsel-ceiling-'))
  try {
    const file = join(dir, 'response.json')
    await writeFile(file, response)
    const port = await freePort()
    const args = ['--import', 'tsx', 'bench/perf/ceiling-server.ts', file, String(port)]
    return await runServerLoad(args, port, options, false)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

async function runServerLoad(
  args: string[],
  port: number,
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'>,
  checkResponses: boolean,
): Promise<HttpLoadResult> {
  const served = await startLoadedServer(args, port, options, checkResponses)
  try {
    return await measureServed(served, options, true)
  } finally {
    await stopServed(served)
  }
}

/** A server started and ready, with its bodies and the responses sampled before any load. */
interface ServedForLoad {
  server: ChildProcess
  target: string
  bodies: string[]
  serverLoadSeconds: number
  serverReadyRssMiB: number
  meanResponseBytes: number
  responseSample: string
}

async function startLoadedServer(
  args: string[],
  port: number,
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'>,
  checkResponses: boolean,
): Promise<ServedForLoad> {
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  const server = spawn(process.execPath, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, TOOLSEL_LIBRARY: '' },
  })
  try {
    await waitUntilReady(url, server)
    const serverLoadSeconds = (performance.now() - started) / 1000
    const serverReadyRssMiB = await processRssMiB(server.pid!)
    const bodies = options.instructions.map((instruction) =>
      JSON.stringify({ instruction, includeSchemas: true }),
    )
    const target = `${url}/v1/select-tools`
    const responses = await sampleResponses(target, bodies.slice(0, 50), checkResponses)
    const meanResponseBytes =
      responses.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / responses.length
    const responseSample = responses.reduce((best, text) =>
      Math.abs(Buffer.byteLength(text) - meanResponseBytes) <
      Math.abs(Buffer.byteLength(best) - meanResponseBytes)
        ? text
        : best,
    )
    return {
      server,
      target,
      bodies,
      serverLoadSeconds,
      serverReadyRssMiB,
      meanResponseBytes,
      responseSample,
    }
  } catch (error) {
    await stopServed({ server })
    throw error
  }
}

/**
 * One measured load on a started server, after WARM_UP_PASSES passes of warm-up when `warmUp`;
 * with the server's CPU per request (from /proc) and the 1-minute load average at its start.
 */
async function measureServed(
  served: ServedForLoad,
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'> & { scriptDir?: string },
  warmUp: boolean,
): Promise<HttpLoadResult> {
  const { server, target, bodies } = served
  const warmUpRequests = WARM_UP_PASSES * bodies.length
  const useWrk = options.generator !== 'autocannon' && (await hasWrk())
  if (warmUp) {
    // The warm-up on its own, so that the CPU read below covers the measured run only.
    if (useWrk) {
      await warmUpWrk({ ...wrkOptions(served, options), warmUpRequests })
    } else {
      await autocannonWarmUp(target, bodies, options, warmUpRequests)
    }
  }
  const loadAverage = loadavg()[0]
  const cpuBefore = await cpuMillis(server.pid!)
  const load = useWrk
    ? await runWrk({ ...wrkOptions(served, options), warmUp: false })
    : await runAutocannon(target, bodies, options)
  const cpuMs = (await cpuMillis(server.pid!)) - cpuBefore
  return {
    ...load,
    serverRssMiB: await processRssMiB(server.pid!),
    serverReadyRssMiB: served.serverReadyRssMiB,
    serverPeakRssMiB: await processRssMiB(server.pid!, 'VmHWM'),
    serverLoadSeconds: served.serverLoadSeconds,
    meanResponseBytes: served.meanResponseBytes,
    responseSample: served.responseSample,
    serverCpuMsPerRequest: load.requests > 0 ? cpuMs / load.requests : Number.NaN,
    loadAverage,
  }
}

function wrkOptions(
  served: ServedForLoad,
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'> & { scriptDir?: string },
): WrkOptions {
  return {
    url: served.target,
    bodies: served.bodies,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    scriptDir: options.scriptDir ?? tmpdir(),
  }
}

async function stopServed(served: Pick<ServedForLoad, 'server'>): Promise<void> {
  const { server } = served
  if (server.exitCode !== null || server.signalCode !== null) return
  const exited = new Promise((resolve) => server.once('exit', resolve))
  server.kill('SIGTERM')
  await exited
}

/** One measured run of `--repeats`: which round, and the size's place in it. */
export interface RepeatedRun {
  round: number
  tools: number
  result: HttpLoadResult
}

/**
 * `--repeats N` of bench/perf.ts: one `toolsel serve` per library, all started and warmed up
 * first (WARM_UP_PASSES passes each, then until steady: warmUpUntilSteady), then N rounds of one measured load per library, the
 * order reversed every round (small, large; large, small; …) so that a load that rises or falls
 * over the run weighs on both sizes alike. The servers stay up between rounds: a round compares
 * the same two warm processes, not a fresh start's JIT and cache state. `afterStart` runs once
 * every server is warm (bench/perf.ts loads the `--ceiling` app there). With `together`, a
 * round loads every server at the same time instead (each its own generator), so that bursts of
 * other work on a shared machine fall on all sizes alike.
 */
export async function runHttpLoadsInterleaved(
  libraries: ReadonlyArray<{ tools: number; indexDir: string; library: string }>,
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'> & { repeats: number; together: boolean },
  afterStart?: (first: HttpLoadResult) => Promise<void>,
): Promise<{ runs: RepeatedRun[]; warmUp: SteadyWarmUp }> {
  const served: ServedForLoad[] = []
  // One wrk script folder per server: the warm-up loads them all at once.
  const scriptDirs: string[] = []
  try {
    const warm: HttpLoadResult[] = []
    for (const _ of libraries) scriptDirs.push(await mkdtemp(join(tmpdir(), 'toolsel-warm-')))
    for (const entry of libraries) {
      const port = await freePort()
      const args = ['bin/toolsel.mjs', 'serve', '--host', '127.0.0.1', '--port', String(port)]
      args.push('--library', entry.library, '--index-dir', entry.indexDir, '--log-level', 'warn')
      served.push(await startLoadedServer(args, port, options, true))
    }
    // Warm-up of all the servers at once (each its own wrk or autocannon, 2 s runs), until each
    // has been sent WARM_UP_PASSES passes of the instructions and then two successive runs' CPU
    // per request agree within STEADY_CPU_TOLERANCE (at most MOST_REPEATS_WARM_UP_RUNS runs): a
    // count of passes alone left the servers getting faster over the measured rounds (round 51).
    const wanted = WARM_UP_PASSES * served[0].bodies.length
    const useWrk = options.generator !== 'autocannon' && (await hasWrk())
    const warmUp = await warmUpUntilSteady(
      () =>
        Promise.all(
          served.map(async (one, at) => {
            const short = { ...options, durationSeconds: 2 }
            const cpuBefore = await cpuMillis(one.server.pid!)
            let requests: number
            if (!useWrk) {
              requests = (await runAutocannon(one.target, one.bodies, short)).requests
            } else {
              const wrk = { ...wrkOptions(one, short), scriptDir: scriptDirs[at], warmUp: false }
              requests = (await runWrk(wrk)).requests
            }
            const cpuMs = (await cpuMillis(one.server.pid!)) - cpuBefore
            return { requests, cpuMsPerRequest: requests > 0 ? cpuMs / requests : Number.NaN }
          }),
        ),
      wanted,
    )
    process.stderr.write(formatWarmUp(warmUp, libraries))
    for (const one of served) {
      // One short unreported run each: the first size's response sample for --ceiling.
      warm.push(await measureServed(one, { ...options, durationSeconds: 2 }, false))
    }
    await afterStart?.(warm[0])
    const runs: RepeatedRun[] = []
    for (let round = 1; round <= options.repeats; round += 1) {
      if (options.together) {
        // Every server loaded at once, each by its own generator: the same bursts of other work.
        process.stderr.write(
          `== round ${round}/${options.repeats}: all sizes together (load ${loadavg()[0].toFixed(2)})\n`,
        )
        const results = await Promise.all(
          served.map((one, at) =>
            measureServed(one, { ...options, scriptDir: scriptDirs[at] }, false),
          ),
        )
        results.forEach((result, at) => runs.push({ round, tools: libraries[at].tools, result }))
        continue
      }
      const order = libraries.map((_, at) => at)
      if (round % 2 === 0) order.reverse()
      for (const at of order) {
        process.stderr.write(
          `== round ${round}/${options.repeats}: ${libraries[at].tools} tools (load ${loadavg()[0].toFixed(2)})\n`,
        )
        const result = await measureServed(served[at], options, false)
        runs.push({ round, tools: libraries[at].tools, result })
      }
    }
    return { runs, warmUp }
  } finally {
    await Promise.all(served.map(stopServed))
    await Promise.all(scriptDirs.map((dir) => rm(dir, { recursive: true, force: true })))
  }
}

/** The warm-up `--repeats` took: runs, requests and each server's CPU per request run by run. */
export function formatWarmUp(
  warmUp: SteadyWarmUp,
  libraries: ReadonlyArray<{ tools: number }>,
): string {
  const { wanted } = warmUp
  const within = `${Math.round(STEADY_CPU_TOLERANCE * 100)}%`
  const lines = [
    `== warm-up: ${warmUp.runs} runs of 2 s (at most ${MOST_REPEATS_WARM_UP_RUNS}), until ${wanted} requests each and then two successive runs' CPU per request within ${within}`,
  ]
  libraries.forEach((library, at) => {
    const steady = warmUp.steadyAtRun[at]
    const cpu = (warmUp.cpuMsPerRequest[at] ?? []).map((ms) => ms.toFixed(2)).join(' ')
    lines.push(
      `   ${library.tools} tools: ${warmUp.sent[at] ?? 0} requests, ${steady === null ? 'NOT steady' : `steady at run ${steady}`}; CPU ms per request by run: ${cpu}`,
    )
  })
  return `${lines.join('\n')}\n`
}

async function sampleResponses(url: string, bodies: string[], check: boolean): Promise<string[]> {
  const responses: string[] = []
  for (const body of bodies) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    const text = await response.text()
    if (check && !response.ok) throw new Error(`select-tools answered ${response.status}: ${text}`)
    responses.push(text)
  }
  return responses
}

function autocannonLoad(
  url: string,
  bodies: string[],
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'>,
): autocannon.Options {
  let next = 0
  return {
    url,
    connections: options.connections,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request: autocannon.Request) => ({
          ...request,
          body: bodies[next++ % bodies.length],
        }),
      },
    ],
  }
}

/** Warm-up (JIT, caches): 2 s runs until `warmUpRequests` are sent, as runWrk's. */
async function autocannonWarmUp(
  url: string,
  bodies: string[],
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'>,
  warmUpRequests: number,
): Promise<void> {
  const load = autocannonLoad(url, bodies, options)
  await warmUpUntil(
    async () => (await run({ ...load, duration: 2 })).requests.total,
    warmUpRequests,
  )
}

async function runAutocannon(
  url: string,
  bodies: string[],
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'>,
): Promise<LoadResult> {
  const load = autocannonLoad(url, bodies, options)
  const result = await run({ ...load, duration: options.durationSeconds })
  return {
    generator: 'autocannon',
    p50: result.latency.p50,
    p99: result.latency.p99,
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    errors: result.errors,
    non2xx: result.non2xx,
  }
}
