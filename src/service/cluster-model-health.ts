/**
 * `/readyz` `degraded` and `toolsel_model_degraded` under `serve --workers N`: node:cluster hands
 * each request to one worker, so each worker's ModelHealth saw only its own selections, and a
 * probe told what the worker it reached saw (a component failing in one worker and never used by
 * the one answering was not listed; the start-up check's findings were in none). So the primary
 * keeps the one ModelHealth: it starts with the start-up check's findings, every worker sends it
 * each report that changes something (a fallback, a degraded component that worked:
 * `ModelHealth.onReport`, nothing while all is well) and takes its list back, which every worker
 * then answers with. The worker that served a request applies its report at once too, so its
 * own next answer shows it; the others have it after the primary's next send (REPLACE_DELAY_MS
 * at most, one send for the reports that came meanwhile).
 * A message that cannot be sent (a process gone) is dropped, never an `error` event.
 * @module
 */
import cluster, { type Worker } from 'node:cluster'
import type { DegradedModel, HealthReport, ModelHealth } from './model-health.ts'

/** How long the primary gathers reports before it sends the list to every worker. */
export const REPLACE_DELAY_MS = 50

/** A worker's report (empty: a worker that starts asks for the list): worker → primary. */
const REPORT = 'toolsel-model-health-report'
/** The degraded components: primary → workers. */
const DEGRADED = 'toolsel-model-health'

interface Message {
  toolsel?: string
  report?: HealthReport
  degraded?: DegradedModel[]
}

function sendQuietly(send: ((message: Message) => boolean) | undefined, message: Message): void {
  try {
    send?.(message)
  } catch {
    // The process is gone: it needs the list no more.
  }
}

/**
 * The primary's part: keeps `health` from every worker's reports and sends its list to every
 * worker after a change (and at once to a worker that starts). Returns the function that stops it.
 */
export function relayModelHealth(health: ModelHealth): () => void {
  let timer: NodeJS.Timeout | undefined
  const sendTo = (worker: Worker | undefined) => {
    if (worker?.isConnected())
      sendQuietly(worker.send.bind(worker), { toolsel: DEGRADED, degraded: health.degraded() })
  }
  const sendAll = () => {
    timer = undefined
    for (const worker of Object.values(cluster.workers ?? {})) sendTo(worker)
  }
  const onMessage = (worker: Worker, message: Message) => {
    if (message?.toolsel !== REPORT) return
    const { failed, worked } = message.report ?? {}
    if (!Array.isArray(failed) || !Array.isArray(worked)) return
    if (failed.length === 0 && worked.length === 0) return sendTo(worker)
    health.apply({ failed, worked })
    timer ??= setTimeout(sendAll, REPLACE_DELAY_MS)
  }
  cluster.on('message', onMessage)
  return () => {
    cluster.off('message', onMessage)
    clearTimeout(timer)
  }
}

/**
 * A worker's part: sends `health`'s reports to the primary and takes the primary's list as its
 * own; asks for it at once. Returns the function that stops it.
 */
export function shareModelHealth(health: ModelHealth): () => void {
  const toPrimary = process.send?.bind(process) as ((message: Message) => boolean) | undefined
  const onMessage = (message: Message) => {
    if (message?.toolsel === DEGRADED && Array.isArray(message.degraded))
      health.replace(message.degraded)
  }
  process.on('message', onMessage)
  health.onReport = (report) => sendQuietly(toPrimary, { toolsel: REPORT, report })
  sendQuietly(toPrimary, { toolsel: REPORT, report: { failed: [], worked: [] } })
  return () => {
    process.off('message', onMessage)
    health.onReport = undefined
  }
}
