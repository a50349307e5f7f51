/**
 * Cooperative time slicing for long CPU work on the event loop (scoring a batch of reward
 * completions): call `next()` between items; it yields to the event loop once `sliceMs` of work
 * have passed, so health checks, other requests and deadlines keep running, and throws the
 * signal's reason once the request is aborted or timed out.
 * @module
 */
import { throwIfAborted } from './errors.ts'

/** Work time between two yields, in ms. */
export const DEFAULT_SLICE_MS = 10

/**
 * `abort`: an AbortSignal, or anything with its `aborted` and `reason` (a request's LazyAbort,
 * which then never has to make its AbortSignal).
 */
export function createTimeSlicer(
  abort?: Pick<AbortSignal, 'aborted' | 'reason'>,
  sliceMs = DEFAULT_SLICE_MS,
): { next(): Promise<void> } {
  let sliceStart = performance.now()
  return {
    async next() {
      if (performance.now() - sliceStart >= sliceMs) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = performance.now()
      }
      throwIfAborted(abort)
    },
  }
}
