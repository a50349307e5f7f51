/**
 * Gives every request an abort that fires after `timeoutMs` (or when the client goes away), and
 * answers 504 TIMEOUT when the handler has not finished by then. Handlers pass it down so that
 * the work itself stops, not only the response. It is a LazyAbort: its AbortSignal is made only
 * when some code reads `c.get('abort').signal` (lazy-abort.ts).
 * @module
 */
import type { ServerResponse } from 'node:http'
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../../errors.ts'
import { LazyAbort } from '../../lazy-abort.ts'
import { timerAtLeast, type TimerAtLeast } from '../../timer-at-least.ts'
import { errorResponse } from '../error-response.ts'

export interface RequestTimeoutOptions {
  /** Milliseconds before the request is abandoned. */
  timeoutMs: number
  /** Per-path overrides, e.g. longer limits for library uploads. */
  timeoutFor?: (method: string, path: string) => number | undefined
}

export type TimeoutEnv = {
  Variables: {
    /** The request's abort; `.signal` is its AbortSignal, made on first read. */
    abort: LazyAbort
    /**
     * Claims the commit point of a write: true when the request has neither timed out nor been
     * abandoned by its client, and from then on the deadline no longer answers 504 (the handler's
     * own answer goes out). False: the request is already answered with an error, so the handler
     * must not commit.
     */
    commit: () => boolean
  }
}

export function requestTimeout(options: RequestTimeoutOptions): MiddlewareHandler<TimeoutEnv> {
  return async (c, next) => {
    const timeoutMs = options.timeoutFor?.(c.req.method, c.req.path) ?? options.timeoutMs
    const abort = new LazyAbort()
    let committing = false
    let timer: TimerAtLeast | undefined
    // A client that goes away aborts the work too. The node response's `close` event is used
    // rather than `c.req.raw.signal`, which would build a full web Request for every request.
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
    const onClose = () => {
      if (!outgoing?.writableFinished && !committing) {
        abort.abort(new ToolselError('ABORTED', 'The client closed the request.'))
      }
    }
    outgoing?.once('close', onClose)
    c.set('abort', abort)
    c.set('commit', () => {
      if (abort.aborted) return false
      committing = true
      return true
    })
    try {
      // Settled by whichever comes first, the handler or the deadline: one promise per request
      // rather than a deadline promise, a `.then` and a `Promise.race` of the two.
      const outcome = await new Promise<'done' | 'timeout'>((resolve, reject) => {
        // At least timeoutMs by performance.now() (timerAtLeast): a plain timer may end up to a
        // millisecond early, and a request within its limit was then told it took longer.
        timer = timerAtLeast(timeoutMs, () => {
          // A write past its commit point finishes and answers for itself.
          if (committing) return
          abort.abort(
            new ToolselError('TIMEOUT', `The request took longer than its ${timeoutMs} ms limit.`),
          )
          resolve('timeout')
        })
        next().then(() => resolve('done'), reject)
      })
      if (outcome === 'timeout') c.res = errorResponse(c, abort.reason as ToolselError)
    } finally {
      timer?.clear()
      outgoing?.off('close', onClose)
    }
  }
}
