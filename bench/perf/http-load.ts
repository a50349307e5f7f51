/**
 * The HTTP half of bench/perf.ts: `toolsel serve` in a child process on a built index, driven by
 * autocannon over loopback with the benchmark instructions in rotation.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import autocannon from 'autocannon'
import { hasWrk, runWrk, type LoadResult } from './wrk-load.ts'

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
  serverRssMiB: number
  serverLoadSeconds: number
}

async function freePort(): Promise<number> {
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

async function waitUntilReady(
  url: string,
  child: ChildProcess,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/readyz`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('server did not become ready')
}

async function processRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN)
  return kib / 1024
}

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)))
  })
}

export async function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  const server = spawn(
    process.execPath,
    [
      'bin/toolsel.mjs',
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--library',
      options.library,
      '--index-dir',
      options.indexDir,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, TOOLSEL_LIBRARY: '' } },
  )
  try {
    await waitUntilReady(url, server)
    const serverLoadSeconds = (performance.now() - started) / 1000
    const bodies = options.instructions.map((instruction) =>
      JSON.stringify({ instruction, includeSchemas: true }),
    )
    const target = `${url}/v1/select-tools`
    const load =
      options.generator !== 'autocannon' && (await hasWrk())
        ? await runWrk({
            url: target,
            bodies,
            connections: options.connections,
            durationSeconds: options.durationSeconds,
            scriptDir: tmpdir(),
          })
        : await runAutocannon(target, bodies, options)
    return {
      ...load,
      serverRssMiB: await processRssMiB(server.pid!),
      serverLoadSeconds,
    }
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
  }
}

async function runAutocannon(
  url: string,
  bodies: string[],
  options: HttpLoadOptions,
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
  await run({ ...load, duration: 2 }) // warm-up: JIT, caches
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
