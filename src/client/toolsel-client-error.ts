/**
 * The errors a `ToolselClient` throws: one class, with the server's error code (the `{error:
 * {code, message}}` body of every 4xx/5xx) or a client-side one for what never reached an answer.
 * @module
 */
import type { ErrorCode } from '../errors.ts'

/** Codes for failures on the client's side of the wire. */
export type ClientErrorCode = 'CLIENT_TIMEOUT' | 'CLIENT_ABORTED' | 'NETWORK' | 'BAD_RESPONSE'

export class ToolselClientError extends Error {
  /** The server's error code (`UNKNOWN_LIBRARY`, `INVALID_INPUT`…) or a client-side one. */
  readonly code: ErrorCode | ClientErrorCode
  /** The HTTP status; absent when no response came (timeout, abort, network). */
  readonly status?: number

  constructor(
    code: ErrorCode | ClientErrorCode,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ToolselClientError'
    this.code = code
    if (options.status !== undefined) this.status = options.status
  }
}
