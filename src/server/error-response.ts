/**
 * The one table from error codes to HTTP statuses, and the error body every route returns:
 * `{ error: { code, message } }`.
 * @module
 */
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { boundedMessage, ToolselError, type ErrorCode } from '../errors.ts'
import type { Logger } from '../log.ts'

export const STATUS_BY_CODE: Record<ErrorCode, ContentfulStatusCode> = {
  INVALID_INPUT: 400,
  INVALID_CONFIG: 400,
  IMPORT_FAILED: 400,
  DUPLICATE_TOOL_ID: 400,
  UNKNOWN_FORMAT: 400,
  UNKNOWN_COMPONENT: 400,
  UNKNOWN_LIBRARY: 404,
  UNKNOWN_TOOL: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  PAYLOAD_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  RATE_LIMITED: 429,
  INDEX_MISMATCH: 500,
  INDEX_CORRUPT: 500,
  INDEX_WRITE_FAILED: 500,
  INSUFFICIENT_STORAGE: 507,
  NOT_READY: 503,
  LIBRARY_REPLACED: 503,
  LIBRARY_BUSY: 503,
  UPSTREAM_UNAVAILABLE: 502,
  TIMEOUT: 504,
  ABORTED: 499 as ContentfulStatusCode,
  PLAN_UNPARSABLE: 502,
  SELECTION_OUTSIDE_CANDIDATES: 502,
  RERANK_OUTSIDE_CANDIDATES: 502,
  MODEL_LOAD_FAILED: 500,
  MODEL_CALL_FAILED: 502,
  INTERNAL: 500,
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string }
}

export function errorResponse(c: Context, error: ToolselError): Response {
  // For the access log line (see request-log.ts).
  c.set('errorCode', error.code)
  // RFC 9110 section 15.5.6: a 405 names the methods the path takes.
  const allow = error.details.allow
  if (error.code === 'METHOD_NOT_ALLOWED' && Array.isArray(allow))
    c.header('Allow', allow.join(', '))
  // Every 429 says when to ask again (/openapi.json): the seconds its error carries.
  const retryAfter = error.details.retryAfterSeconds
  if (error.code === 'RATE_LIMITED' && typeof retryAfter === 'number')
    c.header('Retry-After', String(retryAfter))
  const body: ErrorBody = { error: { code: error.code, message: boundedMessage(error.message) } }
  return c.json(body, STATUS_BY_CODE[error.code])
}

/**
 * Node's error for a request body cut off by its client closing the connection (`Error: aborted`,
 * ECONNRESET, from the body reading): a client that goes away mid-upload.
 */
function isClientGone(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code === 'ECONNRESET' && error.message === 'aborted'
}

/**
 * `app.onError`: our errors keep their code (an INTERNAL one is logged as an ERROR too); anything
 * else is logged and reported as a generic 500 (a client gone mid-body: ABORTED, logged at debug).
 */
export function createErrorHandler(logger: Logger) {
  return (error: Error, c: Context): Response => {
    if (error instanceof ToolselError) {
      // INTERNAL: the server's own fault (a body read before the route, a worker that failed),
      // logged with its stack as an unhandled error is; the answer says what it was.
      if (error.code === 'INTERNAL') logServerError(logger, 'Internal error', error, c)
      return errorResponse(c, error)
    }
    if (error instanceof HTTPException && error.status < 500) {
      const code: ErrorCode =
        error.status === 413
          ? 'PAYLOAD_TOO_LARGE'
          : error.status === 404
            ? 'NOT_FOUND'
            : 'INVALID_INPUT'
      return errorResponse(c, new ToolselError(code, error.message || 'Bad request.'))
    }
    const requestId = c.get('requestId') as string | undefined
    if (isClientGone(error)) {
      // Not the server's error, and any client can cause one per request: no ERROR and stack.
      logger.debug(
        `${c.req.method} ${c.req.path}: the client closed the connection before its request body was read`,
        requestId ? { requestId } : undefined,
      )
      return errorResponse(c, new ToolselError('ABORTED', 'The client closed the request.'))
    }
    logServerError(logger, 'Unhandled error', error, c)
    return errorResponse(c, new ToolselError('INTERNAL', 'Internal server error.'))
  }
}

/** `what` on the request's method and path, with `error`'s stack and the request id: an ERROR. */
function logServerError(logger: Logger, what: string, error: Error, c: Context): void {
  const requestId = c.get('requestId') as string | undefined
  logger.error(
    `${what} on ${c.req.method} ${c.req.path}: ${error.stack ?? error.message}`,
    requestId ? { requestId } : undefined,
  )
}
