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
 *
 * A scrape always ends, and nothing of it can stop a process: a worker whose metrics fail or never
 * come, or whose answer cannot be summed, is left out (200, `toolsel_workers_scraped` counting the
 * others); only when the primary cannot sum even its own series, or does not answer the worker
 * within PRIMARY_TIMEOUT_MS, is the scrape a 500 INTERNAL (`{error:{code,message}}`; Prometheus
 * records a failed scrape, not made-up values). A message that cannot be sent (a process gone) is
 * an answer missing, never an `error` event.
 * @module
 */
import cluster, { type Worker } from 'node:cluster'
import { readFileSync } from 'node:fs'
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client'
import { testSwitch } from '../config/env-vars.ts'
import { errorMessage, ToolselError } from '../errors.ts'

/** One registry's metrics as `getMetricsAsJSON` gives them (what `aggregate` takes). */
type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>

/** How long the primary waits for a worker's metrics before answering without them. */
export const WORKER_METRICS_TIMEOUT_MS = 2000
/** How long a worker waits for the primary's aggregate: its collection plus a margin. */
export const PRIMARY_TIMEOUT_MS = WORKER_METRICS_TIMEOUT_MS + 3000

/** A scrape that a worker asked for: worker → primary. */
const ASK = 'toolsel-metrics-ask'
/** Collect your metrics: primary → every worker. */
const COLLECT = 'toolsel-metrics-collect'
/** A worker's metrics as JSON, or `failed`: worker → primary. */
const COLLECTED = 'toolsel-metrics-collected'
/** The aggregate as Prometheus text, or `failed`: primary → the worker that asked. */
const ANSWER = 'toolsel-metrics-answer'

interface Message {
  toolsel?: string
  id?: number
  metrics?: unknown
  text?: string
  /** Why there are no metrics (COLLECTED) or no aggregate (ANSWER). */
  failed?: string
}

/** Sends `message` over an IPC channel; one that is closed (the process gone) is ignored. */
function sendQuietly(
  send: ((message: Message, callback: (error: Error | null) => void) => boolean) | undefined,
  message: Message,
  onFailed: () => void = () => {},
): void {
  try {
    if (send === undefined) return onFailed()
    send(message, (error) => {
      if (error) onFailed()
    })
  } catch {
    onFailed()
  }
}

/**
 * For tests of scrapes that go wrong, off unless set: `TOOLSEL_TEST_METRICS_FAULT_FILE=<file>`
 * names a file read at each scrape; `reject` (worker 2's metrics fail), `hang` (worker 2 never
 * answers), `malformed` (worker 2 answers metrics that cannot be summed) or `primary-silent`
 * (the primary answers no worker).
 */
function testFault(): string | undefined {
  const file = testSwitch('TOOLSEL_TEST_METRICS_FAULT_FILE')
  if (file === undefined) return undefined
  try {
    return readFileSync(file, 'utf8').trim()
  } catch {
    return undefined
  }
}

/**
 * The primary's own series for one scrape, in a registry made for it: `toolsel_workers` (live now),
 * `toolsel_worker_restarts_total` (`restarts`) and `toolsel_workers_scraped` (`scraped`). Made
 * afresh for each scrape, so two scrapes summed at once each say their own count.
 */
function primarySeries(scraped: number, restarts: number): Registry {
  const own = new Registry()
  new Gauge({
    name: 'toolsel_workers',
    help: 'Worker processes of serve --workers N alive now (the primary replaces one that dies).',
    registers: [own],
  }).set(Object.keys(cluster.workers ?? {}).length)
  new Counter({
    name: 'toolsel_worker_restarts_total',
    help: 'Workers of serve --workers N that exited after the start (killed, crashed) and were replaced.',
    registers: [own],
  }).inc(restarts)
  new Gauge({
    name: 'toolsel_workers_scraped',
    help: `Workers whose metrics this scrape sums (one that does not answer within ${WORKER_METRICS_TIMEOUT_MS} ms, or whose metrics fail, is left out).`,
    registers: [own],
  }).set(scraped)
  return own
}

/**
 * The aggregate of `answers` (one per worker) and the primary's own series (primarySeries, with
 * `restarts` so far), as Prometheus text. When they cannot be summed together, every answer that
 * can be summed with the ones before it (an answer that makes `aggregate` or its text throw is left
 * out); `toolsel_workers_scraped` counts those kept. Exported for its test.
 */
export async function aggregateAnswers(
  answers: readonly MetricsJson[],
  restarts: number,
): Promise<string> {
  const render = async (kept: readonly MetricsJson[]) => {
    const mine = await primarySeries(kept.length, restarts).getMetricsAsJSON()
    return AggregatorRegistry.aggregate([...kept, mine]).metrics()
  }
  try {
    return await render(answers)
  } catch {
    const kept: MetricsJson[] = []
    for (const answer of answers) {
      try {
        await AggregatorRegistry.aggregate([...kept, answer]).metrics()
        kept.push(answer)
      } catch {
        // Left out: toolsel_workers_scraped says so.
      }
    }
    return render(kept)
  }
}

/**
 * The primary's part: answers every worker's ASK. `restarts()` counts the workers replaced so far.
 * Returns the function that stops it.
 */
export function relayClusterMetrics(restarts: () => number): () => void {
  let next = 0
  const pending = new Map<
    number,
    { left: number; answers: MetricsJson[]; missing: () => void; done: () => void }
  >()
  const onMessage = (worker: Worker, message: Message) => {
    if (message?.toolsel === COLLECTED && typeof message.id === 'number') {
      const request = pending.get(message.id)
      if (!request) return
      // A worker whose metrics failed, or came in another shape, is left out of this scrape.
      if (Array.isArray(message.metrics)) request.answers.push(message.metrics as MetricsJson)
      request.missing()
      return
    }
    if (message?.toolsel !== ASK || typeof message.id !== 'number') return
    if (testFault() === 'primary-silent') return
    const asked = message.id
    const workers = Object.values(cluster.workers ?? {}).filter(
      (each): each is Worker => each !== undefined && each.isConnected(),
    )
    const id = (next += 1)
    const answers: MetricsJson[] = []
    const answer = (reply: Message) => {
      if (worker.isConnected()) sendQuietly(worker.send.bind(worker), { ...reply, id: asked })
    }
    const done = () => {
      clearTimeout(timer)
      if (!pending.delete(id)) return
      aggregateAnswers(answers, restarts()).then(
        (text) => answer({ toolsel: ANSWER, text }),
        (error: unknown) =>
          answer({
            toolsel: ANSWER,
            failed: errorMessage(error),
          }),
      )
    }
    const request = {
      left: workers.length,
      answers,
      missing: () => {
        request.left -= 1
        if (request.left <= 0) done()
      },
      done,
    }
    const timer = setTimeout(done, WORKER_METRICS_TIMEOUT_MS)
    pending.set(id, request)
    if (workers.length === 0) return done()
    for (const each of workers)
      sendQuietly(each.send.bind(each), { toolsel: COLLECT, id }, request.missing)
  }
  cluster.on('message', onMessage)
  return () => {
    cluster.off('message', onMessage)
    for (const request of pending.values()) request.done()
  }
}

/** This worker's metrics as JSON, or why they failed (`COLLECTED`'s payload). */
async function collect(registries: readonly Registry[]): Promise<Message> {
  const fault = cluster.worker?.id === 2 ? testFault() : undefined
  if (fault === 'hang') return new Promise<Message>(() => {})
  if (fault === 'malformed')
    return { metrics: [{ name: 'toolsel_ready', type: 'gauge', aggregator: 'nonesuch' }] }
  try {
    if (fault === 'reject') throw new Error('test fault: the metrics failed')
    const all = await Promise.all(registries.map((registry) => registry.getMetricsAsJSON()))
    return { metrics: all.flat() }
  } catch (error) {
    return { failed: errorMessage(error) }
  }
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
  const toPrimary = process.send?.bind(process) as
    ((message: Message, callback: (error: Error | null) => void) => boolean) | undefined
  const onMessage = (message: Message) => {
    if (message?.toolsel === COLLECT) {
      void collect(registries).then((payload) =>
        sendQuietly(toPrimary, { toolsel: COLLECTED, id: message.id, ...payload }),
      )
    } else if (message?.toolsel === ANSWER && typeof message.id === 'number') {
      waiting.get(message.id)?.(
        typeof message.failed === 'string'
          ? new ToolselError(
              'INTERNAL',
              `The primary process could not sum the workers' metrics (${message.failed}); the next scrape tries again.`,
            )
          : (message.text ?? ''),
      )
    }
  }
  process.on('message', onMessage)
  return {
    scrape() {
      const id = (next += 1)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            answer(
              new ToolselError(
                'INTERNAL',
                `The primary process did not answer with the workers' metrics within ${PRIMARY_TIMEOUT_MS / 1000} s; the next scrape tries again.`,
              ),
            ),
          PRIMARY_TIMEOUT_MS,
        )
        const answer = (text: string | Error) => {
          clearTimeout(timer)
          waiting.delete(id)
          if (text instanceof Error) reject(text)
          else resolve({ text, contentType: Registry.PROMETHEUS_CONTENT_TYPE })
        }
        waiting.set(id, answer)
        sendQuietly(toPrimary, { toolsel: ASK, id }, () =>
          answer(
            new ToolselError(
              'INTERNAL',
              "The workers' metrics could not be asked for: this worker has lost its primary process.",
            ),
          ),
        )
      })
    },
    close() {
      process.off('message', onMessage)
      for (const answer of waiting.values()) answer(new Error('stopping'))
    },
  }
}
