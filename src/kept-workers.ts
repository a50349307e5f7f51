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
import { abortError } from './errors.ts'
import { startWorkerThread } from './worker-thread.ts'
import { workerSlotsInUse } from './worker-slots.ts'

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
  const kind = kindOf(module, resourceLimits)
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

/**
 * Starts a worker of `module` with `resourceLimits` for a task on its way (an upload's import,
 * while its body is read), unless one of that kind waits already: its start (every module
 * loaded, ~0.4 s of CPU from dist/, more wall time at load) then overlaps the read instead of
 * following it. Only while no task runs on a thread or waits for one (worker-slots.ts), so the
 * threads stay within the bound; other kinds' idle workers are ended, as `takeWorker` would. It
 * waits as a kept one does (`keepWorker`: at most `limit` wait), `waitMs` at most.
 */
export function readyWorker(
  module: URL,
  workerData: Record<string, unknown>,
  resourceLimits: ResourceLimits,
  limit: number,
  waitMs: number,
): void {
  const kind = kindOf(module, resourceLimits)
  if (idle.some((entry) => entry.kind === kind)) return
  // With a task on a thread or waiting for one, a thread more could pass the bound.
  const slots = workerSlotsInUse()
  if (slots.running > 0 || slots.waiting > 0) return
  for (const entry of [...idle]) endWorker(entry)
  keepWorker(new KeptWorker<never>(kind, module, workerData, resourceLimits), limit, waitMs)
}

function kindOf(module: URL, resourceLimits: ResourceLimits): string {
  return `${module.href} ${JSON.stringify(resourceLimits)}`
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

/**
 * How a task's end is answered: its value or its error, and `keep` when the worker stayed sound
 * (it then waits for the next task; else it is ended).
 */
export type TaskOutcome<T> = ({ value: T } | { error: unknown }) & { keep?: boolean }

/**
 * Runs one task on `entry` (from `takeWorker`): `send` posts it; the worker's reply, error or exit
 * settles it as `on` says (an error or an exit: the error to reject with, the worker ended), and
 * so does `signal`'s abort (its reason; the worker ended). Settled once; then the worker is kept
 * (`keepWorker` with `limit`, `idleMs`) or ended.
 */
export function runOnWorker<Message, T>(
  entry: KeptWorker<Message>,
  send: () => void,
  on: {
    message: (message: Message) => TaskOutcome<T>
    error: (error: Error & { code?: string }) => unknown
    exit: (code: number) => unknown
  },
  { signal, limit, idleMs }: { signal?: AbortSignal; limit: number; idleMs?: number },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false
    const settle = (outcome: TaskOutcome<T>) => {
      if (settled) return
      settled = true
      signal?.removeEventListener('abort', onAbort)
      entry.task = undefined
      if ('error' in outcome) reject(outcome.error)
      else resolve(outcome.value)
      if (outcome.keep) keepWorker(entry, limit, idleMs)
      else endWorker(entry)
    }
    const onAbort = () => settle({ error: abortError(signal!) })
    signal?.addEventListener('abort', onAbort, { once: true })
    entry.task = {
      message: (message) => settle(on.message(message)),
      error: (error) => settle({ error: on.error(error) }),
      exit: (code) => settle({ error: on.exit(code) }),
    }
    send()
  })
}
