/**
 * Timers that keep a promise of "at least `ms`". A Node timer can end up to about a millisecond
 * before its time by `performance.now()`: libuv counts whole milliseconds from the loop's cached
 * time (`node /tmp/coord/early2.mjs`, round 43: 400 timers of 20 ms, 5 ended early, the shortest
 * after 19.233 ms). Where a wait promises a minimum (the gateway's gap between listings and its
 * reconnect backoff, its watch of an upstream's unread stdin that names a stall of `callTimeoutMs`,
 * a `Retry-After`, a request deadline that says the request "took longer than" its limit), the
 * timer is armed again for what is left until `performance.now()` has passed it. The global
 * `setTimeout` is read at each arming (a test can make timers end early).
 * @module
 */
import { abortError } from './errors.ts'

/**
 * The longest wait one Node timer keeps (2^31 - 1 ms, ~24.8 days): a longer one fires after 1 ms
 * (with a TimeoutOverflowWarning). A TimerAtLeast waits longer in turns of at most this; armed
 * with more, it fired, found its time not passed and armed again: a 1 ms loop, one warning each,
 * for as long as the wait (round 44, hard41: 156 turns in 200 ms for 3e9 ms).
 */
const MAX_TIMER_MS = 2_147_483_647

/**
 * A timer that calls back once at least its time has passed by `performance.now()`
 * (`timerAtLeast`). A class, its check a function taking it as the timer's argument: closures
 * made per timer cost a request's deadline ~3.6 µs to arm and clear against setTimeout's ~0.9 µs
 * (this: ~1.1 µs; round 44, 200,000 of each, median of 7).
 */
export class TimerAtLeast {
  readonly until: number
  readonly callback: () => void
  readonly unref: boolean
  timer: ReturnType<typeof setTimeout> | undefined

  constructor(ms: number, callback: () => void, unref: boolean) {
    this.until = performance.now() + ms
    this.callback = callback
    this.unref = unref
    this.arm(ms)
  }

  /** Stops it: the callback is not called (calling it again, or after the callback, does nothing). */
  clear(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  arm(wait: number): void {
    const ms = wait < 1 ? 1 : wait > MAX_TIMER_MS ? MAX_TIMER_MS : Math.ceil(wait)
    this.timer = setTimeout(checkTimer, ms, this)
    if (this.unref) this.timer.unref?.()
  }
}

/** A TimerAtLeast's timer ended: armed again for what is left, or its callback called. */
function checkTimer(timer: TimerAtLeast): void {
  const left = timer.until - performance.now()
  if (left > 0) timer.arm(left)
  else {
    timer.timer = undefined
    timer.callback()
  }
}

/**
 * Calls `callback` once at least `ms` milliseconds have passed by `performance.now()` (0 or less:
 * on the next timer turn). `unref`: the timer keeps no process alive.
 */
export function timerAtLeast(ms: number, callback: () => void, unref = false): TimerAtLeast {
  return new TimerAtLeast(ms, callback, unref)
}

/**
 * Resolves once at least `ms` milliseconds have passed by `performance.now()` (`timerAtLeast`), or
 * rejects as `throwIfAborted(signal)` throws as soon as it is aborted (at once when it already is).
 * `unref`: the wait keeps no process alive.
 */
export function sleepAtLeast(
  ms: number,
  { signal, unref = false }: { signal?: AbortSignal; unref?: boolean } = {},
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal))
      return
    }
    const onAbort = () => {
      timer.clear()
      reject(abortError(signal!))
    }
    const timer = timerAtLeast(
      ms,
      () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      },
      unref,
    )
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
