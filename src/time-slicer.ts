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
 * The start of the slice the current turn's sliced work runs in, shared by every slicer: a
 * slicer started in a turn where another one already ran (stages chained by `await` in one
 * microtask drain: an examples write's normalising, known-tool check, expansions and postings)
 * counts that work against its first slice, instead of starting a fresh `sliceMs` of its own
 * (round 55, perf17: four chained stages held one turn 56 ms under the profiler at a
 * 10,000-example write). Cleared by an immediate, once the loop has turned; a slicer resumed
 * after its own yield starts a fresh slice as before (and opens it for what it starts next).
 */
let turnSlice: { start: number } | undefined

function openSlice(start: number): number {
  const slice = { start }
  turnSlice = slice
  setImmediate(() => {
    if (turnSlice === slice) turnSlice = undefined
  })
  return start
}

/** The current turn's slice start (a fresh one when none is open). */
function turnSliceStart(): number {
  return turnSlice?.start ?? openSlice(performance.now())
}

/**
 * `abort`: an AbortSignal, or anything with its `aborted` and `reason` (a request's LazyAbort,
 * which then never has to make its AbortSignal).
 */
export function createTimeSlicer(
  abort?: Pick<AbortSignal, 'aborted' | 'reason'>,
  sliceMs = DEFAULT_SLICE_MS,
): { next(): Promise<void> } {
  let sliceStart = turnSliceStart()
  return {
    async next() {
      if (performance.now() - sliceStart >= sliceMs) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = openSlice(performance.now())
      }
      throwIfAborted(abort)
    },
  }
}

/**
 * Work written once as a generator that `yield`s between items, run either to the end at once
 * (`runSteps`) or cooperatively (`runStepsSliced`: a yield to the event loop once `sliceMs` of
 * work have passed), so the synchronous and the sliced paths compute exactly the same thing.
 */
export type Steps<T> = Generator<void, T, void>

/** Runs `steps` to the end without yielding to the event loop. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/**
 * Runs `steps` to the end, yielding to the event loop between items once `sliceMs` of work have
 * passed; throws the signal's reason (between items) once `abort` is aborted.
 */
export async function runStepsSliced<T>(
  steps: Steps<T>,
  abort?: Pick<AbortSignal, 'aborted' | 'reason'>,
  sliceMs = DEFAULT_SLICE_MS,
): Promise<T> {
  throwIfAborted(abort)
  let sliceStart = turnSliceStart()
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve))
      throwIfAborted(abort)
      sliceStart = openSlice(performance.now())
    }
  }
}
