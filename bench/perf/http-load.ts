/**
 * The HTTP half of bench/perf.ts: `toolsel serve` in a child process on a built index, driven by
 * wrk (or autocannon) over loopback with the benchmark instructions in rotation; and the
 * `--ceiling` server (bench/perf/ceiling-server.ts) driven the same way.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { hasWrk, runWrk, WARM_UP_PASSES, warmUpUntil, type LoadResult } from './wrk-load.ts'

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
    const load =
      options.generator !== 'autocannon' && (await hasWrk())
        ? await runWrk({
            url: target,
            bodies,
            connections: options.connections,
            durationSeconds: options.durationSeconds,
            scriptDir: tmpdir(),
            warmUpRequests: WARM_UP_PASSES * bodies.length,
          })
        : await runAutocannon(target, bodies, options, WARM_UP_PASSES * bodies.length)
    return {
      ...load,
      serverRssMiB: await processRssMiB(server.pid!),
      serverReadyRssMiB,
      serverPeakRssMiB: await processRssMiB(server.pid!, 'VmHWM'),
      serverLoadSeconds,
      meanResponseBytes,
      responseSample,
    }
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
  }
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

async function runAutocannon(
  url: string,
  bodies: string[],
  options: Omit<HttpLoadOptions, 'indexDir' | 'library'>,
  warmUpRequests: number,
): Promise<LoadResult> {
  let next = 0
  const load = {
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
  // Warm-up (JIT, caches): 2 s runs until `warmUpRequests` are sent, as runWrk's.
  await warmUpUntil(
    async () => (await run({ ...load, duration: 2 })).requests.total,
    warmUpRequests,
  )
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
