/**
 * The bound on the request work that runs on worker threads at once (`server.importWorkers`):
 * library uploads' imports (store/upload-import.ts) and large usage-example bodies
 * (server/examples-body.ts) share it, so N concurrent 32 MiB bodies start at most that many
 * threads (each with a heap of up to hundreds of MiB); later ones wait in arrival order, and one
 * whose request is aborted (its client gone, its timeout) while waiting leaves the queue.
 * @module
 */
import { abortError, throwIfAborted } from './errors.ts'

let running = 0
const waiting: Array<() => void> = []

/** Waits for one of `limit` slots (in arrival order); the returned function frees it. */
export async function workerSlot(
  limit: number,
  signal: AbortSignal | undefined,
): Promise<() => void> {
  throwIfAborted(signal)
  if (running >= limit || waiting.length > 0) {
    await new Promise<void>((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = () => {
        const at = waiting.indexOf(start)
        if (at >= 0) waiting.splice(at, 1)
        reject(abortError(signal!))
      }
      waiting.push(start)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  } else running += 1
  let freed = false
  return () => {
    if (freed) return
    freed = true
    const next = waiting.shift()
    // The slot passes straight to the next task waiting, else it is free.
    if (next) next()
    else running -= 1
  }
}

/** Slots taken and tasks waiting now (tests, metrics). */
export function workerSlotsInUse(): { running: number; waiting: number } {
  return { running, waiting: waiting.length }
}
