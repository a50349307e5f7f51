/**
 * Gateway start-up (not a test): spawns `toolsel serve --config <file>` with N stdio upstreams
 * (test/mcp/fixtures/tiny-upstream.sh: a bash MCP server, ~3 MiB, a few tools each; with
 * `--node-work S`, test/mcp/fixtures/node-upstream.mjs: a node one, ~40 MiB, that burns S seconds
 * of its own CPU time before it reads stdin, a herd when started together), before them
 * `--hung H` that never answer initialize (`sleep`), and,
 * with `--slow-pages`, one more upstream that lists its tools one page (2 tools) every
 * `--slow-delay` seconds, `--slow-pages` pages (endless with `--slow-endless`). Polls `/readyz` every 50 ms and prints per run the seconds from spawn to the first
 * ready answer, the server's CPU seconds then, its peak RSS (VmHWM), the most upstream processes
 * seen alive at once and their summed RSS then (sampled every 100 ms), and how many upstreams
 * `/readyz` reported connected and failed; then the medians per variant and N. It goes on polling
 * after ready until every upstream but the hung ones is connected ("listed", seconds from spawn),
 * and counts the upstreams `/readyz` ever showed with a `spawnTimeoutMs` error ("missed spawn").
 *
 *   node --import tsx bench/gateway-start.ts [--sizes 10,100,500] [--runs 1] [--tools 3]
 *     [--work 0] [--node-work 0] [--hung 0] [--slow-pages 0 --slow-delay 0.9 [--slow-endless]] [--gateway '{"connectConcurrency":16}']...
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

const { values } = benchArgs(import.meta.url, {
  options: {
    sizes: { type: 'string', default: '10,100,500' },
    runs: { type: 'string', default: '1' },
    tools: { type: 'string', default: '3' },
    work: { type: 'string', default: '0' },
    'node-work': { type: 'string', default: '0' },
    hung: { type: 'string', default: '0' },
    'slow-pages': { type: 'string', default: '0' },
    'slow-delay': { type: 'string', default: '0.9' },
    'slow-endless': { type: 'boolean', default: false },
    gateway: { type: 'string', multiple: true },
    before: { type: 'string' },
    timeout: { type: 'string', default: '600' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { freePort, processRssMiB } = await import('./perf/http-load.ts')
const { cpuSeconds, loadAverage: load, median } = await import('./lib/measure.ts')

const FIXTURE = fileURLToPath(new URL('../test/mcp/fixtures/tiny-upstream.sh', import.meta.url))
const NODE_UPSTREAM = fileURLToPath(
  new URL('../test/mcp/fixtures/node-upstream.mjs', import.meta.url),
)
const nodeWork = Number(values['node-work'])
const hung = Number(values.hung)
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
 * The upstream processes (`bash`, `node`, `sleep`) whose parent is `pid`, and their summed RSS in
 * MiB (not tsx's esbuild service, which a checkout without a fresh dist/ runs too).
 */
const UPSTREAM_COMMANDS = new Set(['bash', 'node', 'sleep'])

async function children(pid: number): Promise<{ count: number; rssMiB: number }> {
  let count = 0
  let rssMiB = 0
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const process = await stat(Number(entry))
    if (process?.fields[1] !== String(pid) || !UPSTREAM_COMMANDS.has(process.name)) continue
    count += 1
    const rss = await processRssMiB(Number(entry)).catch(() => 0)
    // A process that just exited (a zombie) has no VmRSS.
    if (Number.isFinite(rss)) rssMiB += rss
  }
  return { count, rssMiB }
}

interface Run {
  readySeconds: number | undefined
  listedSeconds: number | undefined
  missedSpawn: number
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
  // First in line: they take the first connect slots.
  for (let i = 0; i < hung; i += 1) listed[`hung${i}`] = { command: 'sleep', args: ['600'] }
  for (let i = 0; i < size; i += 1) {
    listed[`tiny${i}`] =
      nodeWork > 0
        ? {
            command: process.execPath,
            args: [NODE_UPSTREAM],
            env: { UPSTREAM_CPU_SECONDS: String(nodeWork) },
          }
        : upstream({ TINY_TOOLS: values.tools, TINY_START_WORK: values.work })
  }
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
    let listedSeconds: number | undefined
    type Upstream = { name: string; status: string; lastError: string | null }
    let report: { upstreams?: Upstream[] } = {}
    const missed = new Set<string>()
    let cpu = 0
    const ok = (status: string) => status === 'connected' || status === 'slow'
    while (performance.now() - started < timeoutMs && server.exitCode === null) {
      const answer = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
      const seen = answer
        ? ((await answer.json().catch(() => ({}))) as { upstreams?: Upstream[] })
        : {}
      for (const upstream of seen.upstreams ?? [])
        if (upstream.lastError?.includes('spawnTimeoutMs')) missed.add(upstream.name)
      const now = (performance.now() - started) / 1000
      if (answer?.ok && readySeconds === undefined) {
        readySeconds = now
        report = seen
        cpu = await cpuSeconds(server.pid!)
      }
      const healthy = (seen.upstreams ?? []).filter((upstream) => !upstream.name.startsWith('hung'))
      if (listedSeconds === undefined && healthy.length > 0 && healthy.every((u) => ok(u.status)))
        listedSeconds = now
      if (readySeconds !== undefined && listedSeconds !== undefined) break
      await new Promise((done) => setTimeout(done, 50))
    }
    if (readySeconds === undefined) cpu = await cpuSeconds(server.pid!)
    const peakMiB = await processRssMiB(server.pid!, 'VmHWM')
    sampling = false
    await sampler
    const upstreams = report.upstreams ?? []
    return {
      readySeconds,
      listedSeconds,
      missedSpawn: missed.size,
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
/** What the N upstreams are, after N in the output. */
const label = [
  nodeWork > 0 ? ` node (${nodeWork} s CPU each)` : '',
  hung > 0 ? ` + ${hung} hung` : '',
  slowPages > 0 ? ' + slow' : '',
].join('')
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
        const seconds = (value: number | undefined, what: string) =>
          value === undefined ? `not ${what} in ${values.timeout} s` : `${value.toFixed(2)} s`
        const ready = seconds(measured.readySeconds, 'ready')
        const listed = seconds(measured.listedSeconds, 'listed')
        process.stdout.write(
          `${variant.label}, N=${size}${label}, run ${run}: ready ${ready}, listed ${listed}, missed spawn ${measured.missedSpawn}, CPU ${measured.cpuSeconds.toFixed(2)} s, peak ${measured.peakMiB.toFixed(0)} MiB, upstreams alive ${measured.upstreamsAlive} (${measured.upstreamsMiB.toFixed(0)} MiB), connected ${measured.connected}, failed ${measured.failed}; load ${load()}\n`,
        )
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}

process.stdout.write(
  `\n| variant | N | ready (s) | listed (s) | missed spawn | server CPU at ready (s) | server peak RSS (MiB) | upstreams alive at once | their RSS (MiB) | connected | failed |\n|---|---|---|---|---|---|---|---|---|---|---|\n`,
)
for (const [name, measured] of results) {
  const [variantLabel, size] = name.split('\t')
  const ready = measured.map((run) => run.readySeconds ?? Number.POSITIVE_INFINITY)
  const listed = measured.map((run) => run.listedSeconds ?? Number.POSITIVE_INFINITY)
  const cell = (pick: (run: Run) => number, digits = 0) =>
    median(measured.map(pick)).toFixed(digits)
  process.stdout.write(
    `| ${variantLabel} | ${size}${label} | ${median(ready).toFixed(2)} | ${median(listed).toFixed(2)} | ${cell((run) => run.missedSpawn)} | ${cell((run) => run.cpuSeconds, 2)} | ${cell((run) => run.peakMiB)} | ${cell((run) => run.upstreamsAlive)} | ${cell((run) => run.upstreamsMiB)} | ${cell((run) => run.connected)} | ${cell((run) => run.failed)} |\n`,
  )
}
process.stdout.write(`\nmedians over ${runs} run(s); load average at end: ${load()}\n`)
