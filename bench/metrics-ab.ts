/**
 * The per-request metrics' CPU, old against new in one process: prom-client's Counter and
 * Histograms (`inc` / `observe` with a label object, as `src/server/metrics.ts` did up to round
 * 15) against the SeriesHistogram series (src/server/metric-series.ts), each doing one request's
 * observations (request count and latency, and a selection's 5 stage timings) over a mix of 6
 * label tuples. Turns interleaved, each turn's µs per request; prints the medians and new ÷ old.
 * First checks both registries scrape the same text.
 *
 *   node --import tsx bench/metrics-ab.ts [--requests 200000] [--rounds 9]
 * @module
 */
import { parseArgs } from 'node:util'
import { Counter, Histogram, Registry } from 'prom-client'
import { SeriesHistogram } from '../src/server/metric-series.ts'

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '9' },
  },
})
const requests = Number(values.requests)
const rounds = Number(values.rounds)
if (!Number.isInteger(requests) || requests < 1 || !Number.isInteger(rounds) || rounds < 1) {
  throw new Error('--requests and --rounds take positive whole numbers.')
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const STAGES = ['plan', 'retrieve', 'rerank', 'select', 'total'] as const
const TUPLES = [
  ['POST', '/v1/select-tools', 200],
  ['POST', '/v1/select-tools', 200],
  ['POST', '/v1/select-tools', 200],
  ['POST', '/v1/select-tools', 400],
  ['GET', '/v1/libraries/:library', 200],
  ['GET', 'unmatched', 404],
] as const

type Observe = (method: string, route: string, status: number, seconds: number) => void

function old(): { registry: Registry; observe: Observe } {
  const registry = new Registry()
  const labelNames = ['method', 'route', 'status']
  const requests = new Counter({ name: 'r_total', help: 'r', labelNames, registers: [registry] })
  const latency = new Histogram({
    ...{ name: 'r_seconds', help: 'l', labelNames, buckets: BUCKETS, registers: [registry] },
  })
  const stages = new Histogram({
    ...{ name: 's_seconds', help: 's', labelNames: ['stage'], buckets: BUCKETS },
    registers: [registry],
  })
  return {
    registry,
    observe(method, route, status, seconds) {
      const labels = { method, route, status: String(status) }
      requests.inc(labels)
      latency.observe(labels, seconds)
      for (const stage of STAGES) stages.observe({ stage }, seconds / 5)
    },
  }
}

function series(): { registry: Registry; observe: Observe } {
  const registry = new Registry()
  const latency = new SeriesHistogram('r_seconds', 'l', BUCKETS, registry, {
    name: 'r_total',
    help: 'r',
  })
  const stages = new SeriesHistogram('s_seconds', 's', BUCKETS, registry)
  return {
    registry,
    observe(method, route, status, seconds) {
      const found = latency.seriesOf(`${method} ${route} ${status}`, () => ({
        method,
        route,
        status: String(status),
      }))
      latency.observe(found, seconds)
      for (const stage of STAGES)
        stages.observe(
          stages.seriesOf(stage, () => ({ stage })),
          seconds / 5,
        )
    },
  }
}

function load(observe: Observe, count: number): number {
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    const [method, route, status] = TUPLES[i % TUPLES.length]!
    observe(method, route, status, 0.0004 + (i % 97) * 0.00003)
  }
  return ((performance.now() - started) * 1000) / count
}

const before = old()
const after = series()
load(before.observe, 5000)
load(after.observe, 5000)
const [beforeText, afterText] = [await before.registry.metrics(), await after.registry.metrics()]
if (beforeText !== afterText) throw new Error('The two scrapes differ.')
console.log(`scrapes equal (${beforeText.length} characters)`)
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!
const times = { before: [] as number[], after: [] as number[], ratio: [] as number[] }
for (let round = 0; round < rounds; round++) {
  const a = load(before.observe, requests)
  const b = load(after.observe, requests)
  times.before.push(a)
  times.after.push(b)
  times.ratio.push(b / a)
  console.log(`round ${round + 1}: prom-client ${a.toFixed(3)} µs, series ${b.toFixed(3)} µs`)
}
console.log(
  `median: prom-client ${median(times.before).toFixed(3)} µs, series ${median(times.after).toFixed(3)} µs per request, ` +
    `series ÷ prom-client ${median(times.ratio).toFixed(3)} (${Math.min(...times.ratio).toFixed(3)}-${Math.max(...times.ratio).toFixed(3)})`,
)
