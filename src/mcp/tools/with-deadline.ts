/** Runs a tool handler under the request's signal and `server.requestTimeoutMs`. */
import { ToolselError } from '../../errors.ts'
import { timerAtLeast } from '../../timer-at-least.ts'

export async function withDeadline<T>(
  signal: AbortSignal,
  timeoutMs: number,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController()
  // At least timeoutMs by performance.now(): a plain timer may end up to a millisecond early.
  const timer = timerAtLeast(timeoutMs, () =>
    deadline.abort(
      new ToolselError(
        'TIMEOUT',
        `The request took longer than ${timeoutMs} ms (server.requestTimeoutMs); try a shorter instruction or raise the limit.`,
      ),
    ),
  )
  try {
    return await run(AbortSignal.any([signal, deadline.signal]))
  } finally {
    timer.clear()
  }
}
