/**
 * How N requests' sliced work in flight at once holds the event loop (bench/README "Round 56: one
 * slice a loop iteration for every resumed slicer (perf19)"): a server in this process (the built
 * `dist/` of this checkout and of `--before DIR`, a fresh process per side and round, sides
 * alternating) over the sample tools; for each N of `--concurrent` (1,4,16), N
 * `POST /v1/rewards/planner` sent at once, each of `--completions` (1,024) plans of 8 distinct
 * steps (scored one completion at a time in slices, `createTimeSlicer`), while a probe sends
 * `GET /healthz` one after another, `--every` (5) ms apart. Per N: the time until the last POST
 * is answered, this process's CPU meanwhile, the probe's latency p50 / p99 / max, the longest
 * event-loop delay (`monitorEventLoopDelay`, 1 ms resolution) and the most main-thread CPU
 * between two turns of a 1 ms timer (`/proc/thread-self/schedstat`: what the code held, without
 * the waits for a core of a loaded machine). Run `npm run build` first.
 *
 * `--steps`: no server; N `runStepsSliced` at once in one process over `--items` (40,000) items
 * of a fixed CPU loop in all (split among them): their wall ms, CPU ms and the loop iterations
 * they took (the slicer's own cost, and how many slices an iteration ran).
 *
 *   node --import tsx bench/sliced-fairness.ts [--before /work/ci-base] [--rounds 3]
 *     [--concurrent 1,4,16] [--completions 1024] [--every 5] [--steps] [--items 40000]
 * @module
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import {
  checkoutSides,
  cpuMs,
  loadAverage,
  markdownTable,
  medianAndEach,
  percentile,
  runSidesInChildren,
  sendJson,
} from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    concurrent: { type: 'string', default: '1,4,16' },
    completions: { type: 'string', default: '1024' },
    every: { type: 'string', default: '5' },
    steps: { type: 'boolean', default: false },
    items: { type: 'string', default: '40000' },
    side: { type: 'string' },
  },
})
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const completionCount = wholeNumber(import.meta.url, '--completions', values.completions)
const every = wholeNumber(import.meta.url, '--every', values.every, 0)
const items = wholeNumber(import.meta.url, '--items', values.items)
const concurrent = values.concurrent.split(',').map((value) => Number(value))
if (concurrent.some((value) => !Number.isInteger(value) || value < 1 || value > 256))
  usageError(
    import.meta.url,
    `--concurrent takes whole numbers 1 to 256, not "${values.concurrent}"`,
  )

/** One N's measures (ms); the probe's and the loop's are NaN with `--steps`. */
interface Row {
  concurrent: number
  ms: number
  /** This process's CPU meanwhile (all threads). */
  cpu: number
  probes: number
  p50: number
  p99: number
  max: number
  loopMax: number
  /** The most main-thread CPU between two turns of a 1 ms timer (what the code held). */
  cpuMax: number
  /** Loop iterations meanwhile (`--steps` only). */
  iterations: number
}

const threadCpuNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])

/** `--steps`: N runStepsSliced of `items` fixed CPU items in all, in this process. */
async function stepsRow(root: string, n: number): Promise<Row> {
  const { runStepsSliced } = (await import(
    pathToFileURL(join(root, 'dist', 'time-slicer.js')).href
  )) as typeof import('../src/time-slicer.ts')
  function* work(count: number): Generator<void, number, void> {
    let hash = 0
    for (let item = 0; item < count; item++) {
      for (let at = 0; at < 20_000; at++) hash = (hash * 31 + at) | 0
      yield
    }
    return hash
  }
  let iterations = 0
  let stopped = false
  const tick = () => {
    if (stopped) return
    iterations++
    setImmediate(tick)
  }
  setImmediate(tick)
  const [started, cpuBefore] = [performance.now(), cpuMs()]
  await Promise.all(Array.from({ length: n }, () => runStepsSliced(work(Math.round(items / n)))))
  stopped = true
  const [ms, cpu] = [performance.now() - started, cpuMs() - cpuBefore]
  const none = Number.NaN
  return {
    concurrent: n,
    ms,
    cpu,
    probes: 0,
    p50: none,
    p99: none,
    max: none,
    loopMax: none,
    cpuMax: none,
    iterations,
  }
}

/** N planner reward requests at once on `server`, `/healthz` probed meanwhile. */
async function serverRow(url: string, n: number): Promise<Row> {
  const words = ['send', 'email', 'weather', 'forecast', 'book', 'flight', 'hotel', 'stock']
  // Distinct plans (no step repeats across completions or requests, so each step is retrieved):
  // a JSON list of 8 steps of 12 words and a number.
  const bodies = Array.from({ length: n }, (_, request) =>
    Buffer.from(
      JSON.stringify({
        instruction: 'send the forecast by email',
        gold: ['mail.send_email', 'weather.get_forecast'],
        completions: Array.from({ length: completionCount }, (_, completion) =>
          JSON.stringify(
            Array.from({ length: 8 }, (_, step) =>
              Array.from({ length: 12 }, (_, word) => words[(completion + step * 3 + word) % 8])
                .concat(`${request}-${completion}-${step}`)
                .join(' '),
            ),
          ),
        ),
      }),
    ),
  )
  await new Promise((resolve) => setTimeout(resolve, 200))
  const latencies: number[] = []
  let done = false
  const probe = (async () => {
    while (!done) {
      const started = performance.now()
      await (await fetch(`${url}/healthz`)).arrayBuffer()
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, every))
    }
  })()
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  let [lastCpu, cpuMax] = [threadCpuNs(), 0]
  const ticker = setInterval(() => {
    const cpu = threadCpuNs()
    cpuMax = Math.max(cpuMax, cpu - lastCpu)
    lastCpu = cpu
  }, 1)
  const [started, cpuBefore] = [performance.now(), cpuMs()]
  const answers = await Promise.all(
    bodies.map((body) => sendJson(`${url}/v1/rewards/planner`, 'POST', body)),
  )
  const [ms, cpu] = [performance.now() - started, cpuMs() - cpuBefore]
  delay.disable()
  clearInterval(ticker)
  done = true
  await probe
  for (const answer of answers) {
    if ((answer as { rewards?: unknown[] }).rewards?.length !== completionCount)
      throw new Error(`unexpected answer ${JSON.stringify(answer).slice(0, 300)}`)
  }
  const sorted = latencies.sort((a, b) => a - b)
  return {
    concurrent: n,
    ms,
    cpu,
    probes: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    loopMax: delay.max / 1e6,
    cpuMax: cpuMax / 1e6,
    iterations: Number.NaN,
  }
}

if (values.side !== undefined) {
  const rows: Row[] = []
  if (values.steps) {
    for (const n of concurrent) rows.push(await stepsRow(values.side, n))
  } else {
    const { serveSampleFromDist } = await import('./lib/serve-dist.ts')
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-sliced-fairness-'))
    try {
      const server = await serveSampleFromDist(values.side, indexDir)
      for (const n of concurrent) rows.push(await serverRow(server.url, n))
      await server.close()
    } finally {
      await rm(indexDir, { recursive: true, force: true })
    }
  }
  console.log(JSON.stringify(rows))
  process.exit(0)
}

const loads = [loadAverage(1)]
const results = await runSidesInChildren<Row[]>(
  import.meta.url,
  checkoutSides(import.meta.url, values.before),
  rounds,
  [
    ...['--concurrent', values.concurrent, '--completions', `${completionCount}`],
    ...['--every', `${every}`, '--items', `${items}`, ...(values.steps ? ['--steps'] : [])],
  ],
)
loads.push(loadAverage(1))
const what = values.steps
  ? `N runStepsSliced at once over ${items} items in all`
  : `N concurrent POST /v1/rewards/planner of ${completionCount} completions each, /healthz probed every ${every} ms`
console.log(
  `${what}; ${rounds} rounds (a fresh process each, sides alternating), load ${loads.join(' -> ')}; ms, median (each)`,
)
const columns: Array<[string, (row: Row) => number]> = values.steps
  ? [
      ['wall ms', (row) => row.ms],
      ['CPU ms', (row) => row.cpu],
      ['loop iterations', (row) => row.iterations],
    ]
  : [
      ['all answered', (row) => row.ms],
      ['CPU ms', (row) => row.cpu],
      ['probes', (row) => row.probes],
      ['probe p50', (row) => row.p50],
      ['probe p99', (row) => row.p99],
      ['probe max', (row) => row.max],
      ['longest loop delay', (row) => row.loopMax],
      ['most CPU between turns', (row) => row.cpuMax],
    ]
const rows = concurrent.flatMap((n) =>
  [...results].map(([side, runs]) => [
    n,
    side,
    ...columns.map(([, pick]) =>
      medianAndEach(runs.map((run) => pick(run.find((row) => row.concurrent === n)!))),
    ),
  ]),
)
console.log(markdownTable(['N', 'side', ...columns.map(([name]) => name)], rows, '---').join('\n'))
