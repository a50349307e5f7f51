/**
 * Request ids and the access log. Every request gets an id: the caller's `x-request-id` when it
 * is 1-128 characters of `[A-Za-z0-9._:@+=/-]`, else a new UUID. It is returned in the
 * `x-request-id` response header (with `x-content-type-options: nosniff`), available to
 * handlers as `c.get('requestId')`, and written in
 * the request's access-log line: one JSON object with method, route template, path, status, ms,
 * request id, library and (for errors) the error code. Keys, headers and bodies are never logged.
 * The same observation feeds the HTTP metrics. An answer whose connection closed before it could be
 * written (the client went away, or the per-address limit's hold ended) is logged and counted as
 * status 499, the line's `unsent` naming the status the app had (`connection-limits.ts`).
 * @module
 */
import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { MiddlewareHandler } from 'hono'
import type { Logger } from '../../log.ts'
import { routeTemplate } from '../auth/route-access.ts'
import type { RequestObservation } from '../metrics.ts'

export const REQUEST_ID_HEADER = 'x-request-id'
const REQUEST_ID = /^[A-Za-z0-9._:@+=/-]{1,128}$/
/** Status logged and counted for an answer whose connection closed first (nginx's, and ABORTED's). */
export const CLOSED_BEFORE_ANSWER = 499
/** Longest path written to the log; longer ones are cut (the route template is always whole). */
const MAX_LOGGED_PATH = 256

export type RequestLogEnv = {
  Variables: {
    requestId: string
    /** The library a handler worked on, for the access log (set by handlers that know it). */
    library?: string
    /** The error code of an error response (set by the error handler). */
    errorCode?: string
  }
}

export interface RequestLogOptions {
  logger: Logger
  /** Level of the access-log lines, or `off`. */
  level: 'off' | 'info' | 'debug'
  onResponse?: (observation: RequestObservation) => void
}

/** The caller's request id when it is acceptable, else a fresh one. */
export function requestIdFrom(header: string | undefined): string {
  return header !== undefined && REQUEST_ID.test(header) ? header : randomUUID()
}

export function requestLog(options: RequestLogOptions): MiddlewareHandler<RequestLogEnv> {
  const { logger, level, onResponse } = options
  return async (c, next) => {
    const started = performance.now()
    const requestId = requestIdFrom(c.req.header(REQUEST_ID_HEADER))
    c.set('requestId', requestId)
    // Under @hono/node-server the header goes on the node response, which writes it with the
    // handler's headers: setting it on `c.res` makes a full web Headers object of every answer
    // (about 3% of a /v1/select-tools request's CPU). Elsewhere (app.request in tests) on `c.res`.
    // Every answer also says nosniff: an error message echoes the client's path or input, and
    // must never be read as HTML by a browser.
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
    if (outgoing !== undefined && !outgoing.headersSent) {
      outgoing.setHeader(REQUEST_ID_HEADER, requestId)
      outgoing.setHeader('x-content-type-options', 'nosniff')
    }
    await next()
    if (outgoing === undefined) {
      c.res.headers.set(REQUEST_ID_HEADER, requestId)
      c.res.headers.set('x-content-type-options', 'nosniff')
    }
    const seconds = (performance.now() - started) / 1000
    const { method, path } = c.req
    const route = routeTemplate(method, path)
    // Under @hono/node-server the answer is written after this returns: a connection already
    // closed will never carry it.
    const unsent =
      outgoing !== undefined && (outgoing.destroyed || outgoing.socket?.destroyed === true)
        ? c.res.status
        : undefined
    const status = unsent === undefined ? c.res.status : CLOSED_BEFORE_ANSWER
    onResponse?.({ method, route, status, seconds })
    if (level === 'off' || !logger.enabled(level)) return
    const library =
      c.get('library') ??
      (route.startsWith('/v1/libraries/:library') ? path.split('/')[3] : undefined)
    logger.record(level, {
      msg: 'request',
      method,
      route,
      path: path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path,
      status,
      ...(unsent !== undefined && unsent !== status && { unsent }),
      ms: Math.round(seconds * 10_000) / 10,
      requestId,
      ...(library !== undefined && { library }),
      ...(c.get('errorCode') !== undefined && { error: c.get('errorCode') }),
    })
  }
}
