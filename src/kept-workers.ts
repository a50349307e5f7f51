/**
 * Worker threads kept for the next task of their kind: library uploads' imports
 * (store/upload-import.ts) and large usage-example bodies (server/examples-body.ts). A fresh
 * thread per task loaded every module again (1-2 s under tsx, ~0.4 s of CPU from dist/) and never
 * ran optimised code (bench/README round 49, imp23). One idle list for both kinds: a task takes
 * the last idle thread of its kind (same module, same resource limits); with none, every idle
 * thread is ended before a new one starts, and at most `limit` (`server.importWorkers`) wait, so
 * with the task slots (worker-slots.ts) at most that many threads exist at once. An idle thread
 * is unref'd (it keeps no process alive) and ended after `idleMs`; one that crashed, ran out of
 * memory or whose task was aborted is ended by its caller, never kept.
 * @module
 */
import type { ResourceLimits, Worker } from 'node:worker_threads'
import { startWorkerThread } from './worker-thread.ts'

/** How long a kept worker waits for its next task before it is ended, in ms. */
export const KEPT_WORKER_IDLE_MS = 10_000

export interface WorkerTask<Message> {
  message: (message: Message) => void
  error: (error: Error & { code?: string }) => void
  exit: (code: number) => void
}

/** A worker thread and what its current task does with its events (none while idle). */
export class KeptWorker<Message = unknown> {
  readonly worker: Worker
  task?: WorkerTask<Message>
  idleTimer?: NodeJS.Timeout

  constructor(
    readonly kind: string,
    module: URL,
    workerData: Record<string, unknown>,
    resourceLimits: ResourceLimits,
  ) {
    this.worker = startWorkerThread(module, { workerData, resourceLimits })
    // Listened to for its whole life: an error while idle (no task to answer) is no crash here.
    this.worker.on('message', (message: Message) => this.task?.message(message))
    this.worker.on('error', (error: Error) => this.task?.error(error))
    this.worker.on('exit', (code) => {
      dropIdle(this)
      this.task?.exit(code)
    })
  }
}

/** Workers waiting for a task, the last done last. */
const idle: Array<KeptWorker<never>> = []

function dropIdle(entry: KeptWorker<never>): void {
  const at = idle.indexOf(entry)
  if (at >= 0) idle.splice(at, 1)
  clearTimeout(entry.idleTimer)
}

/** The thread ids of the workers of `module` waiting for a task, the last done last. */
export function idleWorkerThreads(module: URL): number[] {
  return idle
    .filter((entry) => entry.kind.startsWith(`${module.href} `))
    .map((entry) => entry.worker.threadId)
}

/**
 * A worker of `module` with `resourceLimits` for a task: the last idle one of that kind, else a
 * new one (started with `workerData`; every idle worker is ended first).
 */
export function takeWorker<Message>(
  module: URL,
  workerData: Record<string, unknown>,
  resourceLimits: ResourceLimits,
): KeptWorker<Message> {
  const kind = `${module.href} ${JSON.stringify(resourceLimits)}`
  const at = idle.findLastIndex((entry) => entry.kind === kind)
  if (at >= 0) {
    const entry = idle[at]
    dropIdle(entry)
    entry.worker.ref()
    return entry as KeptWorker<Message>
  }
  for (const entry of [...idle]) endWorker(entry)
  return new KeptWorker<Message>(kind, module, workerData, resourceLimits)
}

/** A worker done with a sound task waits for the next (at most `limit` wait, the oldest ended). */
export function keepWorker<Message>(
  entry: KeptWorker<Message>,
  limit: number,
  idleMs = KEPT_WORKER_IDLE_MS,
): void {
  entry.task = undefined
  entry.worker.unref()
  const kept = entry as KeptWorker<never>
  kept.idleTimer = setTimeout(() => endWorker(kept), idleMs).unref()
  idle.push(kept)
  while (idle.length > limit) endWorker(idle[0])
}

/** Ends `entry`'s thread (idle or not). */
export function endWorker<Message>(entry: KeptWorker<Message>): void {
  entry.task = undefined
  dropIdle(entry as KeptWorker<never>)
  void entry.worker.terminate()
}
