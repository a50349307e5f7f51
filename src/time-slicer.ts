/**
 * Cooperative time slicing for long CPU work on the event loop (scoring a batch of reward
 * completions): call `next()` between items; it yields to the event loop once `sliceMs` of work
 * have passed, so health checks, other requests and deadlines keep running, and throws the
 * signal's reason once the request is aborted or timed out. The slice is the loop iteration's:
 * slicers chained in one turn share it, and those resumed in one check phase share one (the
 * others wait, first come first resumed, for the next iteration).
 * @module
 */
import { abortError, throwIfAborted } from './errors.ts'

/** Work time between two yields, in ms. */
export const DEFAULT_SLICE_MS = 10

/**
 * The start of the slice the current turn's sliced work runs in, shared by every slicer: a
 * slicer started in a turn where another one already ran (stages chained by `await` in one
 * microtask drain: an examples write's normalising, known-tool check, expansions and postings)
 * counts that work against its first slice, instead of starting a fresh `sliceMs` of its own
 * (round 55, perf17: four chained stages held one turn 56 ms under the profiler at a
 * 10,000-example write). Cleared by an immediate, once the loop has turned.
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
 * A slicer waiting for its next slice: resumed with the slice's start, or rejected with its
 * abort's error once that is aborted while it waits.
 */
interface Waiter {
  resume(sliceStart: number): void
  reject(error: unknown): void
  abort: Pick<AbortSignal, 'aborted' | 'reason'> | undefined
  sliceMs: number
}

/**
 * The slicers that yielded, first come first resumed (round 56, perf19). A slicer resumed after
 * its own yield used to open a fresh slice in its own immediate, so N requests' sliced work ran
 * N slices back to back in one check phase (N x 10 ms without polling I/O). Now the budget is
 * the loop iteration's: the resumed slicers of one check phase share one slice, and the ones it
 * has no time left for wait, in order, for the next iteration.
 */
const waiting: Waiter[] = []
/** Immediates armed to resume a waiter (`resumeNext`) that have not run yet. */
let armed = 0
/** How many `resumeNext` immediates were ever armed: the sequence number of the last one. */
let armedCount = 0
/**
 * The slice of the check phase resuming waiters now: its start, the sequence number of the last
 * immediate armed before it opened (the later ones run in a later loop iteration: an immediate
 * armed in a check phase runs in the next), and how many waiters it resumed.
 */
let phase: { start: number; through: number; resumed: number } | undefined

function arm(): void {
  armed++
  setImmediate(resumeNext, ++armedCount)
}

/**
 * One armed immediate: in a new check phase it opens the phase's slice and rejects the waiters
 * aborted meanwhile (without waiting for their turn); then it resumes the first waiter, if this
 * phase resumed none yet or its slice has time left (a resumed waiter does at least one item
 * before it checks the time, so none starves); else it arms again for the next iteration.
 */
function resumeNext(sequence: number): void {
  armed--
  const now = performance.now()
  if (phase === undefined || sequence > phase.through) {
    phase = { start: openSlice(now), through: armedCount, resumed: 0 }
    rejectAborted()
  }
  const first = waiting[0]
  if (first === undefined) return
  if (phase.resumed > 0 && now - phase.start >= first.sliceMs) {
    if (armed < waiting.length) arm()
    return
  }
  waiting.shift()
  phase.resumed++
  first.resume(phase.start)
}

function rejectAborted(): void {
  let kept = 0
  for (const waiter of waiting) {
    if (waiter.abort?.aborted) waiter.reject(abortError(waiter.abort))
    else waiting[kept++] = waiter
  }
  waiting.length = kept
}

/** Waits for the caller's turn in a later check phase; resolves to that slice's start. */
function nextSlice(
  abort: Pick<AbortSignal, 'aborted' | 'reason'> | undefined,
  sliceMs: number,
): Promise<number> {
  return new Promise((resume, reject) => {
    waiting.push({ resume, reject, abort, sliceMs })
    if (armed < waiting.length) arm()
  })
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
      if (performance.now() - sliceStart >= sliceMs) sliceStart = await nextSlice(abort, sliceMs)
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
      sliceStart = await nextSlice(abort, sliceMs)
      throwIfAborted(abort)
    }
  }
}
