import { afterEach, describe, expect, it } from 'vitest'
import { ToolselError } from '../src/errors.ts'
import { sleepAtLeast, timerAtLeast } from '../src/timer-at-least.ts'
import { earlyTimers } from './helpers/early-timers.ts'

const realTimeout = globalThis.setTimeout

let undo: (() => void) | undefined
afterEach(() => undo?.())

describe('timerAtLeast and sleepAtLeast: at least their time by performance.now()', () => {
  it('calls back no earlier than its time though every timer ends at half of its own', async () => {
    undo = earlyTimers(0.5)
    const waits = [1, 7, 20, 40]
    const ended = await Promise.all(
      waits.map(
        (ms) =>
          new Promise<number>((resolve) => {
            const started = performance.now()
            timerAtLeast(ms, () => resolve(performance.now() - started))
          }),
      ),
    )
    ended.forEach((elapsed, index) => expect(elapsed).toBeGreaterThanOrEqual(waits[index]))
  })

  it('sleeps at least its time, and stops at once on an abort with the reason', async () => {
    undo = earlyTimers(0.5)
    const started = performance.now()
    await sleepAtLeast(30)
    expect(performance.now() - started).toBeGreaterThanOrEqual(30)

    const controller = new AbortController()
    const reason = new ToolselError('TIMEOUT', 'deadline')
    const sleeping = sleepAtLeast(60_000, { signal: controller.signal, unref: true })
    controller.abort(reason)
    await expect(sleeping).rejects.toBe(reason)
    await expect(sleepAtLeast(10, { signal: controller.signal })).rejects.toBe(reason)
    // An abort that is no toolsel error is ABORTED, as throwIfAborted says it.
    const other = new AbortController()
    other.abort(new Error('gone'))
    await expect(sleepAtLeast(10, { signal: other.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    })
  })

  it('never calls back once cleared, also between two armings', async () => {
    undo = earlyTimers(0.5)
    let called = 0
    const started = performance.now()
    const timer = timerAtLeast(100, () => (called += 1))
    // Past its first (early) arming at ~50 ms, before its time (a starved host may be later).
    await new Promise((resolve) => realTimeout(resolve, 65))
    const clearedAt = performance.now() - started
    timer.clear()
    await new Promise((resolve) => realTimeout(resolve, 120))
    expect(called).toBe(clearedAt < 100 ? 0 : 1)
  })

  it('waits past the longest Node timer in turns of it, not a 1 ms loop (hard41)', async () => {
    // A Node timer of more than 2^31 - 1 ms fires after 1 ms: armed with 3e9 ms, the timer found
    // its time not passed and armed again, ~1,000 times a second, a TimeoutOverflowWarning each.
    const armed: unknown[] = []
    const spied = ((callback: () => void, ms?: number, ...args: unknown[]) => {
      armed.push(ms)
      return realTimeout(callback, ms, ...args)
    }) as typeof setTimeout
    globalThis.setTimeout = spied
    undo = () => (globalThis.setTimeout = realTimeout)
    let called = 0
    const timer = timerAtLeast(3e9, () => (called += 1), true)
    await new Promise((resolve) => realTimeout(resolve, 100))
    timer.clear()
    expect(called).toBe(0)
    expect(armed).toEqual([2_147_483_647])
  })
})
