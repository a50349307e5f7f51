/**
 * The one error class of the service and the table of its codes. Every failure that a user can
 * cause or fix carries one of these codes; `server/` maps codes to HTTP statuses.
 * @module
 */
import type { z } from 'zod'
import { escapedControls } from './terminal-text.ts'

/** Every error code, with what it means. Codes are stable: clients and tests match on them. */
export const ERROR_CODES = {
  INVALID_INPUT: 'The request or command input is invalid.',
  INVALID_CONFIG: 'A configuration value is invalid.',
  IMPORT_FAILED: 'A tool file could not be imported.',
  DUPLICATE_TOOL_ID: 'Two tools share one id.',
  UNKNOWN_FORMAT: 'The format of a tool file could not be detected or is not supported.',
  UNKNOWN_LIBRARY: 'No library of that name is loaded.',
  UNKNOWN_TOOL: 'No tool of that id is in the library.',
  NOT_FOUND: 'No such route.',
  METHOD_NOT_ALLOWED:
    'The path is served, but not with that method (the `Allow` header lists its methods).',
  UNAUTHORIZED: 'The request carries no valid API key.',
  FORBIDDEN: 'The API key (or the Host or Origin) does not allow this request.',
  UNKNOWN_COMPONENT: 'No planner, retriever, selector or model of that id exists.',
  INDEX_MISMATCH: 'A built index does not match the code or the configuration.',
  INDEX_CORRUPT: 'A built index could not be read.',
  LIBRARY_REPLACED:
    'The library version a request was reading was replaced and unloaded; retrying uses the current one.',
  LIBRARY_BUSY:
    'Another process is saving the library and did not finish in time; retrying is safe.',
  INDEX_WRITE_FAILED:
    'Writing an index to the index directory failed (the disk or file system refused it); nothing was changed.',
  INSUFFICIENT_STORAGE:
    'The index directory has no space left (or the quota is used up) for an index; nothing was changed.',
  PAYLOAD_TOO_LARGE: 'The request body is larger than the configured limit.',
  NOT_IMPLEMENTED:
    'The request uses an HTTP feature the server does not implement (a transfer coding other than chunked).',
  NOT_READY: 'The service is still loading.',
  RATE_LIMITED:
    'The API key asked for more new work of one kind than a minute allows; retry later.',
  TIMEOUT: 'The request took longer than its time limit.',
  ABORTED: 'The operation was aborted.',
  PLAN_UNPARSABLE: 'The planner model answered something that is not a list of steps.',
  SELECTION_OUTSIDE_CANDIDATES: 'The selector named a tool that is not one of its candidates.',
  RERANK_OUTSIDE_CANDIDATES: 'The reranker returned a tool that is not one of its candidates.',
  MODEL_LOAD_FAILED: 'A model could not be loaded.',
  MODEL_CALL_FAILED: 'A model call failed.',
  UPSTREAM_UNAVAILABLE: 'An upstream server is unavailable.',
  INTERNAL: 'Something went wrong inside the service.',
} as const

export type ErrorCode = keyof typeof ERROR_CODES

/**
 * Longest error message answered (HTTP bodies, MCP tool errors): messages quote request values
 * (ids, names), which can be long.
 */
export const MAX_ERROR_MESSAGE_CHARS = 4000

/**
 * `message` as answered: controls, bidi and zero-width characters of a quoted header, path or key
 * written as `\u` text (`escapedControls`, as `shownName` does for ids), cut at
 * MAX_ERROR_MESSAGE_CHARS with a note of how much was left out.
 */
export function boundedMessage(text: string): string {
  const message = escapedControls(text)
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message
  return `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}… (${message.length - MAX_ERROR_MESSAGE_CHARS} more characters)`
}

export interface ToolselErrorOptions {
  /** The lower-level error this one wraps (file IO, ONNX Runtime, JSON parsing…). */
  cause?: unknown
  /** Structured facts a program can read (the file, the record, the field, the raw model text…). */
  details?: Record<string, unknown>
}

/** The error every module throws. `message` names the bad value and, where possible, the fix. */
export class ToolselError extends Error {
  readonly code: ErrorCode
  readonly details: Record<string, unknown>

  constructor(code: ErrorCode, message: string, options: ToolselErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ToolselError'
    this.code = code
    this.details = options.details ?? {}
  }
}

export function isToolselError(error: unknown, code?: ErrorCode): error is ToolselError {
  return error instanceof ToolselError && (code === undefined || error.code === code)
}

/** The message of a thrown value: `error.message` for an Error, `String(error)` for anything else. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * The first line of `errorMessage(error)`, for a reason quoted inside a one-line message (native
 * and model-runtime errors often append a stack or a code frame after the first line). A line
 * ends at LF, CRLF or a lone CR, so no carriage return is left in the message.
 */
export function errorFirstLine(error: unknown): string {
  return errorMessage(error).split(/\r\n|\r|\n/, 1)[0]
}

/**
 * Throws ABORTED (or the signal's own TIMEOUT reason) when the signal has fired. Takes anything
 * with a signal's `aborted` and `reason` (also a LazyAbort, without making its signal).
 */
export function throwIfAborted(signal: Pick<AbortSignal, 'aborted' | 'reason'> | undefined): void {
  if (signal?.aborted) throw abortError(signal)
}

/** What `throwIfAborted` throws for an aborted signal: its reason, or ABORTED wrapping it. */
export function abortError(signal: Pick<AbortSignal, 'reason'>): ToolselError {
  const reason: unknown = signal.reason
  if (reason instanceof ToolselError) return reason
  return new ToolselError('ABORTED', 'The operation was aborted.', { cause: reason })
}

/** Turns zod issues into one readable sentence (HTTP bodies, MCP tool arguments): `"k": Too big: expected number to be <=100`. */
export function describeIssues(error: { issues: z.core.$ZodIssue[] }): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.join('.')
      return path ? `"${path}": ${issue.message}` : issue.message
    })
    .join('; ')
}
