/**
 * What the HTTP layer alone costs per `/v1/select-tools` request: the selection is taken out by
 * answering every request with its real result, computed once before the load (the 535
 * benchmark instructions on the `--size` library, learned default), so what remains is
 * @hono/node-server, hono, every middleware (request id and access log, metrics, Host check,
 * auth, body limit, readiness, timeout), the zod validation and the JSON answer. Side by side, in
 * turns, with two bare hono apps answering the same results: `c.json` of the same object (JSON
 * encoding included) and the precomputed text (`bench:perf`'s `--ceiling`). Prints req/s and the
 * server's CPU per request (this process; wrk runs apart) per turn and the medians.
 *
 *   node --import tsx bench/http-overhead.ts [--size 10000] [--rounds 3] [--duration 5]
 *     [--before DIR]
 *
 * `--before DIR` adds another checkout's app (DIR with `src/`, e.g. /work/ci-r11), its selection
 * precomputed the same way, to the turns, and prints this app's CPU per request ÷ that one's,
 * round by round and their median: the HTTP layer's change, side by side in one process.
 *
 * Needs wrk (Debian package).
 * @module
 */
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { median } from './lib/measure.ts'
import type { ServerType } from '@hono/node-server'
import type { SelectToolsResult } from '../src/pipeline.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    before: { type: 'string' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { serve } = await import('@hono/node-server')
const { Hono } = await import('hono')
type Hono = import('hono').Hono
const { buildSelectLoad } = await import('./perf/serve-process.ts')
const { runWrk } = await import('./perf/wrk-load.ts')
const { loadCheckoutApp } = await import('./perf/checkout-app.ts')
const size = wholeNumber(import.meta.url, '--size', values.size)
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const seconds = Number(values.duration)
if (!(seconds > 0)) usageError(import.meta.url, '--duration takes seconds (> 0).')

/** The route's answer for a result (`includeSchemas: true`, as the load asks). */
function answer(result: SelectToolsResult) {
  return {
    ...result,
    tools: result.tools.map(({ id, name, description, parameters, namespace }) => ({
      id,
      name,
      description,
      parameters,
      namespace,
    })),
  }
}

async function listen(fetch: (request: Request, env: unknown) => Response | Promise<Response>) {
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }) as ServerType
  await new Promise((resolve) => server.once('listening', resolve))
  return { server, port: (server.address() as AddressInfo).port }
}

/**
 * The toolsel app of the checkout at `root` (its own modules) on the saved library, every
 * request answered with its precomputed selection: the selection, taken out.
 */
async function precomputedApp(
  root: string,
  library: string,
  indexDir: string,
  instructions: string[],
) {
  const { service, app } = await loadCheckoutApp(root, {
    configure: (config) => {
      config.library.default = library
      config.library.indexDir = indexDir
    },
    start: true,
  })
  const results = new Map<string, SelectToolsResult>()
  for (const instruction of instructions) {
    results.set(instruction, await service.select({ instruction }))
  }
  service.select = async (request: { instruction: string }) => results.get(request.instruction)!
  return { app, results }
}

const work = await mkdtemp(join(tmpdir(), 'toolsel-http-'))
const servers: ServerType[] = []
try {
  const built = await buildSelectLoad(values.data, size, work)
  const instructions = built.bodies.map(
    (body) => (JSON.parse(body) as { instruction: string }).instruction,
  )
  const own = await precomputedApp('.', built.library, work, instructions)
  const results = own.results

  const texts = new Map([...results].map(([key, result]) => [key, JSON.stringify(answer(result))]))
  const bare = (precomputed: boolean) =>
    new Hono().post('/v1/select-tools', async (c) => {
      const { instruction } = await c.req.json<{ instruction: string }>()
      return precomputed
        ? c.body(texts.get(instruction)!, 200, { 'content-type': 'application/json' })
        : c.json(answer(results.get(instruction)!))
    })
  const before =
    values.before === undefined
      ? []
      : [
          {
            name: `before (${values.before}): toolsel app, selection precomputed`,
            app: (await precomputedApp(values.before, built.library, work, instructions)).app,
          },
        ]
  const sides = [
    ...before,
    { name: 'toolsel app, selection precomputed', app: own.app },
    { name: 'bare hono, c.json of the same answer', app: bare(false) },
    { name: 'bare hono, precomputed text (--ceiling)', app: bare(true) },
  ]
  const running: Array<{ name: string; url: string; reqPerS: number[]; cpuMs: number[] }> = []
  for (const side of sides) {
    const { server, port } = await listen(side.app.fetch)
    servers.push(server)
    running.push({
      name: side.name,
      url: `http://127.0.0.1:${port}/v1/select-tools`,
      reqPerS: [] as number[],
      cpuMs: [] as number[],
    })
  }
  const load = { bodies: built.bodies, connections: 16, scriptDir: work }
  for (const side of running) await runWrk({ ...load, url: side.url, durationSeconds: 2 })
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? running : [...running].reverse()
    for (const side of order) {
      const before = process.cpuUsage()
      const result = await runWrk({
        ...load,
        url: side.url,
        durationSeconds: seconds,
        warmUp: false,
      })
      const cpu = process.cpuUsage(before)
      const cpuMs = (cpu.user + cpu.system) / 1000 / result.requests
      side.reqPerS.push(result.requestsPerSecond)
      side.cpuMs.push(cpuMs)
      const loadAverage = (await readFile('/proc/loadavg', 'utf8')).split(' ')[0]
      process.stdout.write(
        `round ${round + 1} ${side.name}: ${result.requestsPerSecond.toFixed(0)} req/s, ` +
          `CPU ${cpuMs.toFixed(3)} ms per request (non-2xx ${result.non2xx}), load ${loadAverage}\n`,
      )
    }
  }
  for (const side of running) {
    process.stdout.write(
      `${size} tools, ${side.name}: median ${median(side.reqPerS).toFixed(0)} req/s, ` +
        `CPU ${median(side.cpuMs).toFixed(3)} ms per request\n`,
    )
  }
  if (before.length > 0) {
    const ratios = running[1].cpuMs.map((cpu, round) => cpu / running[0].cpuMs[round])
    process.stdout.write(
      `toolsel app CPU per request, this ÷ before: median ${median(ratios).toFixed(3)} ` +
        `(rounds: ${ratios.map((ratio) => ratio.toFixed(3)).join(', ')})\n`,
    )
  }
} finally {
  for (const server of servers) server.close()
  await rm(work, { recursive: true, force: true })
}
process.exit(0)
