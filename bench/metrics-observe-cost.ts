/**
 * What `GET /metrics`' per-request bookkeeping costs (src/server/metrics.ts): every HTTP request
 * counts once and observes its latency once (`toolsel_http_requests_total`,
 * `toolsel_http_request_duration_seconds`, by method, route and status), every selection observes
 * its five stages (`toolsel_pipeline_stage_duration_seconds`). prom-client's two ways of doing it,
 * each on its own metrics (same names, help and buckets, own registry), the same observations in
 * the same order:
 *
 * - a labels object per call, passed to `inc` and `observe` (`{ method, route, status:
 *   String(status) }`; `{ stage }` per stage): what metrics.ts does;
 * - labelled children (`labels()`), made once per label set and kept: for a request by route,
 *   then method and status (a map and a short scan); for a stage, five made once. prom-client's
 *   child checks and hashes its labels on every call as `inc`/`observe` do (round 56, perf21:
 *   no faster, so metrics.ts keeps the first way; bench/README.md "Round 56 … (perf21)").
 *
 * Nanoseconds per request (count and latency) and per selection (five stages), the least of
 * `--passes` passes of `--calls` calls, the ways alternating; then both registries' text must be
 * the same (what `/metrics` shows).
 *
 *   node --import tsx bench/metrics-observe-cost.ts [--calls 200000] [--passes 9]
 * @module
 */
import { benchArgs, usageError } from './bench-args.ts'
import { loadAverage } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    calls: { type: 'string', default: '200000' },
    passes: { type: 'string', default: '9' },
  },
})
const calls = Number(values.calls)
const passes = Number(values.passes)
if (!Number.isInteger(calls) || calls < 1 || !Number.isInteger(passes) || passes < 1) {
  usageError(import.meta.url, '--calls and --passes take positive whole numbers.')
}
const { Counter, Histogram, Registry } = await import('prom-client')
type Observation = import('../src/server/metrics.ts').RequestObservation
type Registry = import('prom-client').Registry

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const STAGES = ['plan', 'retrieve', 'rerank', 'select', 'total'] as const

function metrics() {
  const registry = new Registry()
  const labelNames = ['method', 'route', 'status'] as const
  const requests = new Counter({ name: 'requests', help: 'r', labelNames, registers: [registry] })
  const latency = new Histogram({
    name: 'latency',
    help: 'l',
    labelNames,
    buckets: BUCKETS,
    registers: [registry],
  })
  const stages = new Histogram({
    name: 'stages',
    help: 's',
    labelNames: ['stage'],
    buckets: BUCKETS,
    registers: [registry],
  })
  return { registry, requests, latency, stages }
}

type Way = {
  name: string
  registry: Registry
  request: (observation: Observation) => void
  selection: (seconds: readonly number[]) => void
}

function labelsObjects(): Way {
  const { registry, requests, latency, stages } = metrics()
  return {
    name: 'a labels object per call',
    registry,
    request({ method, route, status, seconds }) {
      const labels = { method, route, status: String(status) }
      requests.inc(labels)
      latency.observe(labels, seconds)
    },
    selection(seconds) {
      for (let index = 0; index < STAGES.length; index++) {
        stages.observe({ stage: STAGES[index]! }, seconds[index]!)
      }
    },
  }
}

interface Children {
  readonly method: string
  readonly status: number
  readonly inc: () => void
  readonly observe: (seconds: number) => void
}

function children(): Way {
  const { registry, requests, latency, stages } = metrics()
  const byRoute = new Map<string, Children[]>()
  const stageChildren = STAGES.map((stage) => stages.labels({ stage }))
  return {
    name: 'labelled children kept',
    registry,
    request({ method, route, status, seconds }) {
      let list = byRoute.get(route)
      let kept = list?.find((entry) => entry.status === status && entry.method === method)
      if (kept === undefined) {
        const labels = { method, route, status: String(status) }
        kept = {
          method,
          status,
          inc: requests.labels(labels).inc,
          observe: latency.labels(labels).observe,
        }
        if (list === undefined) byRoute.set(route, (list = []))
        list.push(kept)
      }
      kept.inc()
      kept.observe(seconds)
    },
    selection(seconds) {
      for (let index = 0; index < STAGES.length; index++) {
        stageChildren[index]!.observe(seconds[index]!)
      }
    },
  }
}

// A server's mix: mostly selections, some reads, a few refusals, latencies over the buckets.
const ROUTES: Array<[string, string, number]> = [
  ['POST', '/v1/select-tools', 200],
  ['POST', '/v1/select-tools', 200],
  ['POST', '/v1/select-tools', 200],
  ['POST', '/v1/select-tools', 200],
  ['GET', '/v1/libraries/:library/tools/:id', 200],
  ['GET', '/healthz', 200],
  ['POST', '/v1/select-tools', 400],
  ['GET', 'unmatched', 404],
]
const observations: Observation[] = Array.from({ length: 1024 }, (_, index) => {
  const [method, route, status] = ROUTES[index % ROUTES.length]!
  return { method, route, status, seconds: ((index * 7919) % 5000) / 1e5 }
})
const stageSeconds = Array.from({ length: 1024 }, (_, index) =>
  STAGES.map((_, stage) => ((index * 31 + stage * 977) % 3000) / 1e5),
)

const ways = [labelsObjects(), children()]
const least = new Map(ways.map((way) => [way.name, [Infinity, Infinity]]))
for (let pass = 0; pass < passes; pass += 1) {
  for (let turn = 0; turn < ways.length; turn += 1) {
    const way = ways[pass % 2 === 0 ? turn : ways.length - 1 - turn]!
    let started = process.hrtime.bigint()
    for (let call = 0; call < calls; call += 1) way.request(observations[call & 1023]!)
    const request = Number(process.hrtime.bigint() - started) / calls
    started = process.hrtime.bigint()
    for (let call = 0; call < calls; call += 1) way.selection(stageSeconds[call & 1023]!)
    const selection = Number(process.hrtime.bigint() - started) / calls
    const kept = least.get(way.name)!
    least.set(way.name, [Math.min(kept[0]!, request), Math.min(kept[1]!, selection)])
  }
}
const [one, other] = await Promise.all(ways.map((way) => way.registry.metrics()))
if (one !== other) throw new Error('The two ways recorded different metrics.')
console.log(`ns per call, least of ${passes} passes of ${calls}; load average ${loadAverage()}`)
console.log(`(both ways' metrics text the same: ${one.length} characters)\n`)
console.log(`| way | a request (count, latency) | a selection (5 stages) |`)
console.log(`| :-- | --: | --: |`)
for (const way of ways) {
  const [request, selection] = least.get(way.name)!
  console.log(`| ${way.name} | ${request!.toFixed(0)} | ${selection!.toFixed(0)} |`)
}
