/**
 * Refuses request targets with `.` or `..` segments (also percent-encoded, `%2e`). The URL
 * parser resolves them, so `PUT /v1/libraries/./demo` would silently write `demo` and
 * `/v1/libraries/x/../y` would act on `y`: a client (or a proxy's path rule) that means one
 * resource must not reach another. Answered 400 INVALID_INPUT. Reads the raw target of the Node
 * request; requests without one (`app.request` in tests) pass.
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../../errors.ts'

const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i

/** True when the path part of a raw request target has a `.` or `..` segment. */
export function hasDotSegment(target: string): boolean {
  const query = target.indexOf('?')
  return DOT_SEGMENT.test(query >= 0 ? target.slice(0, query) : target)
}

export function rejectDotSegments(): MiddlewareHandler {
  return async (c, next) => {
    const target = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.url
    if (target !== undefined && hasDotSegment(target)) {
      throw new ToolselError(
        'INVALID_INPUT',
        `The request path "${target.slice(0, 200)}" has "." or ".." segments; send the path without them (e.g. /v1/libraries/demo).`,
      )
    }
    await next()
  }
}
