/**
 * Gives every request an AbortSignal that fires after `timeoutMs` (or when the client goes away),
 * and answers 504 TIMEOUT when the handler has not finished by then. Handlers pass the signal down
 * so that the work itself stops, not only the response.
 * @module
 */
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../../errors.ts'
import { errorResponse } from '../error-response.ts'

export interface RequestTimeoutOptions {
  /** Milliseconds before the request is abandoned. */
  timeoutMs: number
  /** Per-path overrides, e.g. longer limits for library uploads. */
  timeoutFor?: (method: string, path: string) => number | undefined
}

export type TimeoutEnv = { Variables: { signal: AbortSignal } }

export function requestTimeout(options: RequestTimeoutOptions): MiddlewareHandler<TimeoutEnv> {
  return async (c, next) => {
    const timeoutMs = options.timeoutFor?.(c.req.method, c.req.path) ?? options.timeoutMs
    const controller = new AbortController()
    const timeoutError = new ToolselError(
      'TIMEOUT',
      `The request took longer than its ${timeoutMs} ms limit.`,
    )
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(timeoutError)
        resolve('timeout')
      }, timeoutMs)
    })
    const clientSignal = c.req.raw.signal
    const onClientAbort = () =>
      controller.abort(new ToolselError('ABORTED', 'The client closed the request.'))
    clientSignal?.addEventListener('abort', onClientAbort, { once: true })
    c.set('signal', controller.signal)
    try {
      const outcome = await Promise.race([next().then(() => 'done' as const), timedOut])
      if (outcome === 'timeout') c.res = errorResponse(c, controller.signal.reason as ToolselError)
    } finally {
      clearTimeout(timer)
      clientSignal?.removeEventListener('abort', onClientAbort)
    }
  }
}
