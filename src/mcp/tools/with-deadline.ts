/** Runs a tool handler under the request's signal and `server.requestTimeoutMs`. */
import { ToolselError } from '../../errors.ts'

export async function withDeadline<T>(
  signal: AbortSignal,
  timeoutMs: number,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController()
  const timer = setTimeout(
    () =>
      deadline.abort(
        new ToolselError(
          'TIMEOUT',
          `The request took longer than ${timeoutMs} ms (server.requestTimeoutMs); try a shorter instruction or raise the limit.`,
        ),
      ),
    timeoutMs,
  )
  try {
    return await run(AbortSignal.any([signal, deadline.signal]))
  } finally {
    clearTimeout(timer)
  }
}
