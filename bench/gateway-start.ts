/**
 * Gateway start-up (not a test): spawns `toolsel serve --config <file>` with N stdio upstreams
 * (test/mcp/fixtures/tiny-upstream.sh: a bash MCP server, ~3 MiB, a few tools each) and,
 * with `--slow-pages`, one more upstream that lists its tools one page (2 tools) every
 * `--slow-delay` seconds, `--slow-pages` pages (endless with `--slow-endless`). Polls `/readyz` every 50 ms and prints per run the seconds from spawn to the first
 * ready answer, the server's CPU seconds then, its peak RSS (VmHWM), the most upstream processes
 * seen alive at once and their summed RSS then (sampled every 100 ms), and how many upstreams
 * `/readyz` reported connected and failed; then the medians per variant and N.
 *
 *   node --import tsx bench/gateway-start.ts [--sizes 10,100,500] [--runs 1] [--tools 3]
 *     [--work 0] [--slow-pages 0 --slow-delay 0.9 [--slow-endless]] [--gateway '{"connectConcurrency":16}']...
 *     [--before /work/ci-base]
 *
 * `--gateway` (JSON, merged into the `gateway` section; given more than once, one variant each)
 * and `--before <checkout>` (that checkout's `bin/toolsel.mjs`, default gateway settings) make
 * variants; the runs alternate between them. `--work` gives each upstream that much CPU work at
 * start-up (bash loop iterations, ~1 s per 1,000,000 on an idle core), as node loading its
 * modules or `npx` resolving a package. `--timeout` (seconds, default 600) ends a run that is
 * not ready by then (printed as such).
 * @module
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs } from './bench-args.ts'
import { freePort, processRssMiB } from './perf/http-load.ts'
import { cpuSeconds, loadAverage as load, median } from './perf/process-stats.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    sizes: { type: 'string', default: '10,100,500' },
    runs: { type: 'string', default: '1' },
    tools: { type: 'string', default: '3' },
    work: { type: 'string', default: '0' },
    'slow-pages': { type: 'string', default: '0' },
    'slow-delay': { type: 'string', default: '0.9' },
    'slow-endless': { type: 'boolean', default: false },
    gateway: { type: 'string', multiple: true },
    before: { type: 'string' },
    timeout: { type: 'string', default: '600' },
  },
})

const FIXTURE = fileURLToPath(new URL('../test/mcp/fixtures/tiny-upstream.sh', import.meta.url))
const HERE = fileURLToPath(new URL('..', import.meta.url))
const sizes = values.sizes.split(',').map(Number)
const runs = Number(values.runs)
const slowPages = Number(values['slow-pages'])
const timeoutMs = Number(values.timeout) * 1000

interface Variant {
  label: string
  checkout: string
  gateway: Record<string, unknown>
}
const variants: Variant[] = (values.gateway?.length ? values.gateway : ['{}']).map((json) => ({
  label: json === '{}' ? 'now' : `now ${json}`,
  checkout: HERE,
  gateway: JSON.parse(json) as Record<string, unknown>,
}))
if (values.before) variants.push({ label: 'before', checkout: resolve(values.before), gateway: {} })

/** The command name and the fields after it of /proc/<pid>/stat (the name may hold spaces). */
async function stat(pid: number): Promise<{ name: string; fields: string[] } | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'))
  return { name, fields: text.slice(text.lastIndexOf(')') + 2).split(' ') }
}

/**
 * The upstream processes (`bash`) whose parent is `pid`, and their summed RSS in MiB (not tsx's
 * esbuild service, which a checkout without a fresh dist/ runs too).
 */
async function children(pid: number): Promise<{ count: number; rssMiB: number }> {
  let count = 0
  let rssMiB = 0
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const process = await stat(Number(entry))
    if (process?.fields[1] !== String(pid) || process.name !== 'bash') continue
    count += 1
    rssMiB += await processRssMiB(Number(entry)).catch(() => 0)
  }
  return { count, rssMiB }
}

interface Run {
  readySeconds: number | undefined
  cpuSeconds: number
  peakMiB: number
  upstreamsAlive: number
  upstreamsMiB: number
  connected: number
  failed: number
}

function servers(size: number): Record<string, unknown> {
  const upstream = (env: Record<string, string>) => ({ command: 'bash', args: [FIXTURE], env })
  const listed: Record<string, unknown> = {}
  for (let i = 0; i < size; i += 1)
    listed[`tiny${i}`] = upstream({ TINY_TOOLS: values.tools, TINY_START_WORK: values.work })
  if (slowPages > 0) {
    listed.slow = upstream({
      TINY_TOOLS: String(slowPages * 2),
      TINY_PAGE_SIZE: '2',
      TINY_LIST_DELAY: values['slow-delay'],
      TINY_ENDLESS: values['slow-endless'] ? '1' : '0',
    })
  }
  return listed
}

async function measure(variant: Variant, size: number, dir: string): Promise<Run> {
  const config = join(dir, `gateway-${size}.json`)
  const gateway = { servers: servers(size), syncIntervalMs: 0, ...variant.gateway }
  await writeFile(config, JSON.stringify({ gateway }))
  const port = await freePort()
  const args = [join(variant.checkout, 'bin/toolsel.mjs'), 'serve', '--host', '127.0.0.1']
  args.push('--port', String(port), '--log-level', 'error', '--config', config)
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLSEL_LIBRARY: '' }
  const started = performance.now()
  const server = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], env })
  const exited = new Promise((done) => server.once('exit', done))
  let alive = { count: 0, rssMiB: 0 }
  let sampling = true
  const sampler = (async () => {
    while (sampling && server.exitCode === null) {
      const seen = await children(server.pid!)
      if (seen.count > alive.count || seen.rssMiB > alive.rssMiB)
        alive = {
          count: Math.max(seen.count, alive.count),
          rssMiB: Math.max(seen.rssMiB, alive.rssMiB),
        }
      await new Promise((done) => setTimeout(done, 100))
    }
  })()
  try {
    let readySeconds: number | undefined
    let report: { upstreams?: Array<{ status: string; lastSyncAt: string | null }> } = {}
    while (performance.now() - started < timeoutMs && server.exitCode === null) {
      const answer = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
      if (answer?.ok) {
        readySeconds = (performance.now() - started) / 1000
        report = (await answer.json()) as typeof report
        break
      }
      await new Promise((done) => setTimeout(done, 50))
    }
    const cpu = await cpuSeconds(server.pid!)
    const peakMiB = await processRssMiB(server.pid!, 'VmHWM')
    sampling = false
    await sampler
    const upstreams = report.upstreams ?? []
    const ok = (status: string) => status === 'connected' || status === 'slow'
    return {
      readySeconds,
      cpuSeconds: cpu,
      peakMiB,
      upstreamsAlive: alive.count,
      upstreamsMiB: alive.rssMiB,
      connected: upstreams.filter((upstream) => ok(upstream.status)).length,
      failed: upstreams.filter((upstream) => !ok(upstream.status)).length,
    }
  } finally {
    sampling = false
    server.kill('SIGTERM')
    await exited
  }
}

const dir = await mkdtemp(join(tmpdir(), 'gateway-start-'))
const results = new Map<string, Run[]>()
const key = (variant: Variant, size: number) => `${variant.label}\t${size}`
process.stdout.write(`load average at start: ${load()}\n`)
try {
  for (const size of sizes) {
    for (let run = 1; run <= runs; run += 1) {
      // Alternate which variant goes first from run to run.
      const order = run % 2 === 1 ? variants : [...variants].reverse()
      for (const variant of order) {
        const measured = await measure(variant, size, dir)
        const all = results.get(key(variant, size)) ?? []
        all.push(measured)
        results.set(key(variant, size), all)
        const ready =
          measured.readySeconds === undefined
            ? `not ready in ${values.timeout} s`
            : `${measured.readySeconds.toFixed(2)} s`
        process.stdout.write(
          `${variant.label}, N=${size}${slowPages > 0 ? ' + slow' : ''}, run ${run}: ready ${ready}, CPU ${measured.cpuSeconds.toFixed(2)} s, peak ${measured.peakMiB.toFixed(0)} MiB, upstreams alive ${measured.upstreamsAlive} (${measured.upstreamsMiB.toFixed(0)} MiB), connected ${measured.connected}, failed ${measured.failed}; load ${load()}\n`,
        )
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}

process.stdout.write(
  `\n| variant | N | ready (s) | server CPU (s) | server peak RSS (MiB) | upstreams alive at once | their RSS (MiB) | connected | failed |\n|---|---|---|---|---|---|---|---|---|\n`,
)
for (const [name, measured] of results) {
  const [label, size] = name.split('\t')
  const ready = measured.map((run) => run.readySeconds ?? Number.POSITIVE_INFINITY)
  const cell = (pick: (run: Run) => number, digits = 0) =>
    median(measured.map(pick)).toFixed(digits)
  process.stdout.write(
    `| ${label} | ${size}${slowPages > 0 ? ' + slow' : ''} | ${median(ready).toFixed(2)} | ${cell((run) => run.cpuSeconds, 2)} | ${cell((run) => run.peakMiB)} | ${cell((run) => run.upstreamsAlive)} | ${cell((run) => run.upstreamsMiB)} | ${cell((run) => run.connected)} | ${cell((run) => run.failed)} |\n`,
  )
}
process.stdout.write(`\nmedians over ${runs} run(s); load average at end: ${load()}\n`)
