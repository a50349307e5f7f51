/**
 * Timers that end early, as a Node timer may by up to about a millisecond by performance.now()
 * (libuv counts whole milliseconds from the loop's cached time: round 43 saw 5 of 400 timers of
 * 20 ms end early). Here every `setTimeout` ends at `fraction` of its time, so that a wait which
 * trusts one timer to mean "at least X ms" ends early on every run, not one in a hundred: a test
 * of such a promise fails without its fix and never flakes with it (it checks recorded times).
 */
import { vi } from 'vitest'

/** Makes the global setTimeout end at `fraction` of each delay until the returned undo is called. */
export function earlyTimers(fraction = 0.5): () => void {
  const original = globalThis.setTimeout
  const spy = vi
    .spyOn(globalThis, 'setTimeout')
    .mockImplementation(((
      callback: (...args: unknown[]) => void,
      ms?: number,
      ...args: unknown[]
    ) => original(callback, Math.floor((ms ?? 0) * fraction), ...args)) as typeof setTimeout)
  return () => spy.mockRestore()
}
