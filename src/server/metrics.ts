/**
 * `GET /metrics` (Prometheus text format, prom-client): HTTP requests and latency per route
 * template and status, pipeline stage timings, library sizes and versions, gateway upstream
 * states, model load state, start-up readiness, and prom-client's process metrics (event-loop
 * lag, heap, GC, CPU). Each app has its own registry, so several apps in one process (tests)
 * don't share counters; the process metrics, which describe the process, are one registry per
 * process that every app's scrape includes (see processRegistry). Labels are bounded: routes are
 * templates from ROUTE_ACCESS, never raw paths; libraries and upstreams are the loaded and
 * configured ones. Under `serve --workers N` a scrape is every worker's metrics summed
 * (cluster-metrics.ts): counters and histograms add up, each gauge here is the highest of the
 * workers' (`aggregator: 'max'`: a library's tools, version and readiness as the most advanced
 * worker has them), prom-client's process metrics by their own aggregators.
 * @module
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { McpGateway } from '../mcp/gateway/mcp-gateway.ts'
import type { StageTimings } from '../pipeline.ts'
import type { ToolselService } from '../service/toolsel-service.ts'
import { UPSTREAM_STATUSES } from '../mcp/gateway/upstream-state.ts'
import type { RateClass } from './rate-limit.ts'

/** Latency buckets in seconds: 1 ms to 30 s (the default request deadline). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const STAGES = ['plan', 'retrieve', 'rerank', 'select', 'total'] as const

export interface RequestObservation {
  method: string
  /** Route template (`/v1/libraries/:library`), `unmatched` for paths of no route. */
  route: string
  status: number
  seconds: number
}

export interface Metrics {
  /** This app's metrics; a scrape also has the process's (processRegistry). */
  readonly registry: Registry
  observeRequest(observation: RequestObservation): void
  /** A request refused by the request-rate limit (server/rate-limit.ts), by route class. */
  observeRateLimited(routeClass: RateClass): void
  /** The text `GET /metrics` answers, and its content type. */
  scrape(): Promise<{ text: string; contentType: string }>
  /** Stops observing the service's selections (the app that made these metrics closes them). */
  close(): void
}

let processMetrics: Registry | undefined

/**
 * prom-client's default metrics (CPU, memory, handles, event-loop lag, GC), made once per process.
 * Collecting them starts an event-loop-delay monitor and a GC PerformanceObserver that prom-client
 * never stops, so per app they would pile up with every app made in the process; and what they
 * measure is the process, shared by all its apps.
 */
export function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry()
    collectDefaultMetrics({ register: processMetrics })
  }
  return processMetrics
}

export function createMetrics(service: ToolselService, gateway?: McpGateway): Metrics {
  const registry = new Registry()
  const requests = new Counter({
    name: 'toolsel_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'toolsel_http_request_duration_seconds',
    help: 'HTTP request latency (until the response is handed to the socket), by method, route template and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  })
  const stages = new Histogram({
    name: 'toolsel_pipeline_stage_duration_seconds',
    help: 'Time per pipeline stage of each selection (HTTP and MCP): plan, retrieve, rerank, select, and total.',
    labelNames: ['stage'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  })
  const fallbacks = new Counter({
    name: 'toolsel_model_fallbacks_total',
    help: 'Planner and selector calls that failed and fell back (components.fallbacks of every selection), by stage, failed component, error code and the HTTP status its endpoint answered (401/403: API key refused; empty when it did not answer, e.g. UPSTREAM_UNAVAILABLE).',
    labelNames: ['stage', 'component', 'code', 'status'],
    registers: [registry],
  })
  const rateLimited = new Counter({
    name: 'toolsel_rate_limited_total',
    help: 'Requests refused 429 RATE_LIMITED by the request-rate limit (server.readsPerMinute, server.writesPerMinute), by route class (read, write); not by client.',
    labelNames: ['class'],
    registers: [registry],
  })
  for (const routeClass of ['read', 'write']) rateLimited.inc({ class: routeClass }, 0)
  const stopObserving = service.onSelect(({ timings, components }) => {
    for (const stage of STAGES) stages.observe({ stage }, stageMs(timings, stage) / 1000)
    for (const { stage, from, code, status } of components.fallbacks) {
      fallbacks.inc({
        stage,
        component: from,
        code,
        status: status === undefined ? '' : String(status),
      })
    }
  })

  new Counter({
    name: 'toolsel_unsynced_commits_total',
    help: 'Writes (uploads, usage examples, deletes, snapshots) committed and served whose directory could not be flushed to the disk afterwards (fsync failed, e.g. EIO): they may not survive a crash of the machine. Check the disk.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(service.unsyncedCommits)
    },
  })
  new Gauge({
    name: 'toolsel_ready',
    aggregator: 'max',
    help: '1 once the libraries, models and gateway upstreams are loaded (what /readyz reports), else 0.',
    registers: [registry],
    collect() {
      this.set(service.ready && (gateway?.synced ?? true) ? 1 : 0)
    },
  })
  new Gauge({
    name: 'toolsel_library_tools',
    aggregator: 'max',
    help: 'Tools in each loaded library.',
    labelNames: ['library'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of service.listLibraries())
        this.set({ library: entry.name }, entry.toolCount)
    },
  })
  new Gauge({
    name: 'toolsel_library_info',
    aggregator: 'max',
    help: "Each loaded library's version: its content hash, default retriever, and whether it is the default (value 1).",
    labelNames: ['library', 'content_hash', 'retriever', 'default'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of service.listLibraries()) {
        this.set(
          {
            library: entry.name,
            content_hash: entry.contentHash.slice(0, 16),
            retriever: entry.defaultRetriever,
            default: String(entry.isDefault),
          },
          1,
        )
      }
    },
  })
  new Gauge({
    name: 'toolsel_library_built_timestamp_seconds',
    aggregator: 'max',
    help: "When each loaded library's index was built (Unix time).",
    labelNames: ['library'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of service.listLibraries()) {
        this.set({ library: entry.name }, Date.parse(entry.createdAt) / 1000)
      }
    },
  })
  new Gauge({
    name: 'toolsel_library_examples',
    aggregator: 'max',
    help: 'Usage examples each library holds.',
    labelNames: ['library'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of service.listLibraries()) {
        this.set({ library: entry.name }, entry.examples.count)
      }
    },
  })
  new Gauge({
    name: 'toolsel_library_examples_version',
    aggregator: 'max',
    help: "Version of each library's usage examples (+1 per change).",
    labelNames: ['library'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of service.listLibraries()) {
        this.set({ library: entry.name }, entry.examples.version)
      }
    },
  })
  new Gauge({
    name: 'toolsel_index_load_failed',
    aggregator: 'max',
    help: 'Saved indexes that failed to load, at start-up or when another process committed them (value 1; /readyz lists the errors).',
    labelNames: ['index'],
    registers: [registry],
    collect() {
      this.reset()
      for (const failed of service.reportedFailedIndexes) this.set({ index: failed.name }, 1)
    },
  })
  new Gauge({
    name: 'toolsel_model_loaded',
    aggregator: 'max',
    help: 'Planners, rerankers and selectors created so far, by the name a selection gives them (llm(openai:m)): 1 loaded, 0 still loading its model.',
    labelNames: ['kind', 'component'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of service.components.states?.() ?? []) {
        this.set({ kind: entry.kind, component: entry.name }, entry.state === 'loaded' ? 1 : 0)
      }
    },
  })
  new Gauge({
    name: 'toolsel_model_degraded',
    aggregator: 'max',
    help: 'Planners and selectors whose latest use failed and fell back, or that the start-up check found failing (value 1; /readyz lists them as degraded, with the error), until a use without a fallback; an openai: fallback whose endpoint failed also once the openai: model it stood in for answers.',
    labelNames: ['stage', 'component'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of service.modelHealth.degraded())
        this.set({ stage: entry.stage, component: entry.component }, 1)
    },
  })
  if (gateway) {
    new Gauge({
      name: 'toolsel_upstream_status',
      aggregator: 'max',
      help: "Each gateway upstream's status (value 1 on its current status: connecting, connected, slow, reconnecting, down).",
      labelNames: ['server', 'status'],
      registers: [registry],
      collect() {
        this.reset()
        for (const upstream of gateway.servers()) {
          for (const status of UPSTREAM_STATUSES) {
            this.set({ server: upstream.name, status }, upstream.status === status ? 1 : 0)
          }
        }
      },
    })
    new Gauge({
      name: 'toolsel_upstream_tools',
      aggregator: 'max',
      help: "Tools of each gateway upstream's last successful tools/list.",
      labelNames: ['server'],
      registers: [registry],
      collect() {
        this.reset()
        for (const upstream of gateway.servers()) {
          this.set({ server: upstream.name }, upstream.toolCount)
        }
      },
    })
  }
  // The same metric objects, so what either registry records is in the scrape.
  const scraped = Registry.merge([processRegistry(), registry])
  return {
    registry,
    observeRequest({ method, route, status, seconds }) {
      const labels = { method, route, status: String(status) }
      requests.inc(labels)
      latency.observe(labels, seconds)
    },
    observeRateLimited: (routeClass) => rateLimited.inc({ class: routeClass }),
    async scrape() {
      return { text: await scraped.metrics(), contentType: scraped.contentType }
    },
    close: () => void stopObserving(),
  }
}

function stageMs(timings: StageTimings, stage: (typeof STAGES)[number]): number {
  switch (stage) {
    case 'plan':
      return timings.planMs
    case 'retrieve':
      return timings.retrieveMs
    case 'rerank':
      return timings.rerankMs
    case 'select':
      return timings.selectMs
    case 'total':
      return timings.totalMs
  }
}
