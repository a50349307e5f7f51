import { afterEach, describe, expect, it } from 'vitest'
import { withDeadline } from '../../src/mcp/tools/with-deadline.ts'
import { earlyTimers } from '../helpers/early-timers.ts'

let undo: (() => void) | undefined
afterEach(() => undo?.())

describe('withDeadline (the MCP tools under server.requestTimeoutMs)', () => {
  it('aborts the work no earlier than the limit, though timers end early', async () => {
    // Every timer ends at half its time (a Node timer may end up to ~1 ms early).
    undo = earlyTimers(0.5)
    const started = performance.now()
    let abortedAt = 0
    const outcome = await withDeadline(
      new AbortController().signal,
      40,
      (signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            abortedAt = performance.now()
            reject(signal.reason)
          }),
        ),
    ).catch((error: unknown) => error)
    expect(outcome).toMatchObject({ code: 'TIMEOUT' })
    expect(abortedAt - started).toBeGreaterThanOrEqual(40)
  })

  it('answers what the work answers in time', async () => {
    await expect(withDeadline(new AbortController().signal, 10_000, async () => 7)).resolves.toBe(7)
  })
})
