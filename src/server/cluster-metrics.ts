/**
 * `GET /metrics` under `serve --workers N`: node:cluster hands a scrape to one worker, whose own
 * registry counts only the requests it served (half of them with two workers, and from 0 again
 * after a restart). So the worker that takes a scrape asks the primary, the primary asks every
 * live worker for its metrics as JSON (prom-client's `getMetricsAsJSON`) and answers their
 * aggregate (`AggregatorRegistry.aggregate`: counters and histograms summed, gauges by their
 * `aggregator`; see metrics.ts), with the primary's own series: `toolsel_workers` (live now),
 * `toolsel_worker_restarts_total` (workers that died and were replaced) and
 * `toolsel_workers_scraped` (workers whose metrics this scrape holds: one busy past
 * WORKER_METRICS_TIMEOUT_MS is left out).
 * @module
 */
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client'

/** One registry's metrics as `getMetricsAsJSON` gives them (what `aggregate` takes). */
type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>

/** How long the primary waits for a worker's metrics before answering without them. */
export const WORKER_METRICS_TIMEOUT_MS = 2000
/** How long a worker waits for the primary's aggregate: its collection plus a margin. */
const PRIMARY_TIMEOUT_MS = WORKER_METRICS_TIMEOUT_MS + 3000

/** A scrape that a worker asked for: worker → primary. */
const ASK = 'toolsel-metrics-ask'
/** Collect your metrics: primary → every worker. */
const COLLECT = 'toolsel-metrics-collect'
/** A worker's metrics as JSON: worker → primary. */
const COLLECTED = 'toolsel-metrics-collected'
/** The aggregate, as Prometheus text: primary → the worker that asked. */
const ANSWER = 'toolsel-metrics-answer'

interface Message {
  toolsel?: string
  id?: number
  metrics?: MetricsJson
  text?: string
}

/**
 * The primary's part: answers every worker's ASK. `restarts()` counts the workers replaced so far.
 * Returns the function that stops it.
 */
export function relayClusterMetrics(restarts: () => number): () => void {
  const own = new Registry()
  new Gauge({
    name: 'toolsel_workers',
    help: 'Worker processes of serve --workers N alive now (the primary replaces one that dies).',
    registers: [own],
    collect() {
      this.set(Object.keys(cluster.workers ?? {}).length)
    },
  })
  new Counter({
    name: 'toolsel_worker_restarts_total',
    help: 'Workers of serve --workers N that exited after the start (killed, crashed) and were replaced.',
    registers: [own],
    collect() {
      this.reset()
      this.inc(restarts())
    },
  })
  const scraped = new Gauge({
    name: 'toolsel_workers_scraped',
    help: `Workers whose metrics this scrape sums (one that does not answer within ${WORKER_METRICS_TIMEOUT_MS} ms is left out).`,
    registers: [own],
  })
  let next = 0
  const pending = new Map<number, { left: number; answers: MetricsJson[]; done: () => void }>()
  const onMessage = (worker: Worker, message: Message) => {
    if (message?.toolsel === COLLECTED && typeof message.id === 'number') {
      const request = pending.get(message.id)
      if (!request) return
      request.answers.push(message.metrics ?? [])
      request.left -= 1
      if (request.left === 0) request.done()
      return
    }
    if (message?.toolsel !== ASK || typeof message.id !== 'number') return
    const asked = message.id
    const workers = Object.values(cluster.workers ?? {}).filter(
      (each): each is Worker => each !== undefined && each.isConnected(),
    )
    const id = (next += 1)
    const answers: MetricsJson[] = []
    const done = () => {
      clearTimeout(timer)
      if (!pending.delete(id)) return
      scraped.set(answers.length)
      void (async () => {
        const mine = await own.getMetricsAsJSON()
        const text = await AggregatorRegistry.aggregate([...answers, mine]).metrics()
        if (worker.isConnected()) worker.send({ toolsel: ANSWER, id: asked, text })
      })()
    }
    const timer = setTimeout(done, WORKER_METRICS_TIMEOUT_MS)
    pending.set(id, { left: workers.length, answers, done })
    for (const each of workers) each.send({ toolsel: COLLECT, id })
  }
  cluster.on('message', onMessage)
  return () => void cluster.off('message', onMessage)
}

/**
 * A worker's part: answers the primary's COLLECT with `registries`' metrics, and gives the scrape
 * that `GET /metrics` answers with: every worker's, through the primary.
 */
export function workerClusterMetrics(registries: readonly Registry[]): {
  scrape(): Promise<{ text: string; contentType: string }>
  close(): void
} {
  let next = 0
  const waiting = new Map<number, (text: string | Error) => void>()
  const onMessage = (message: Message) => {
    if (message?.toolsel === COLLECT) {
      void Promise.all(registries.map((registry) => registry.getMetricsAsJSON())).then((all) =>
        process.send?.({ toolsel: COLLECTED, id: message.id, metrics: all.flat() }),
      )
    } else if (message?.toolsel === ANSWER && typeof message.id === 'number') {
      waiting.get(message.id)?.(message.text ?? '')
    }
  }
  process.on('message', onMessage)
  return {
    scrape() {
      const id = (next += 1)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => answer(new Error('the primary process did not answer with the metrics')),
          PRIMARY_TIMEOUT_MS,
        )
        const answer = (text: string | Error) => {
          clearTimeout(timer)
          waiting.delete(id)
          if (text instanceof Error) reject(text)
          else resolve({ text, contentType: Registry.PROMETHEUS_CONTENT_TYPE })
        }
        waiting.set(id, answer)
        process.send!({ toolsel: ASK, id })
      })
    },
    close() {
      process.off('message', onMessage)
      for (const answer of waiting.values()) answer(new Error('stopping'))
    },
  }
}
