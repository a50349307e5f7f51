/**
 * Sorts a failed upstream request into what the gateway does about it: a timeout marks the
 * server slow, a broken connection marks it down (and reconnects), an answer with a JSON-RPC
 * error means the server is fine and the request was wrong.
 * @module
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { ToolselError } from '../../errors.ts'
import { UpstreamInputBacklog } from './bounded-read-buffer.ts'
import { formatDuration, type UpstreamState } from './upstream-state.ts'

export type UpstreamFailure = 'timeout' | 'connection' | 'rejected'

export function classifyUpstreamError(error: unknown): UpstreamFailure {
  // Its stdin holds a backlog: slow (or hung), not gone.
  if (error instanceof UpstreamInputBacklog) return 'timeout'
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return 'timeout'
    if (error.code === ErrorCode.ConnectionClosed) return 'connection'
    return 'rejected'
  }
  // fetch failures (ECONNREFUSED, DNS), HTTP 4xx/5xx from the transport, a dead process.
  return 'connection'
}

/** One line for status and messages: the error's message and, for fetch failures, the cause. */
export function describeUpstreamError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? error.cause.message : undefined
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message
}

/**
 * The server answered a call with a JSON-RPC error: bad arguments or an unknown tool are the
 * caller's to fix (INVALID_INPUT); anything else is the server failing (UPSTREAM_UNAVAILABLE).
 */
export function rejectedCallError(server: string, tool: string, error: unknown): ToolselError {
  const code = error instanceof McpError ? error.code : undefined
  const callerFault = code === ErrorCode.InvalidParams || code === ErrorCode.MethodNotFound
  return new ToolselError(
    callerFault ? 'INVALID_INPUT' : 'UPSTREAM_UNAVAILABLE',
    `Upstream "${server}" rejected the call to "${tool}": ${describeUpstreamError(error)}${callerFault ? ' Check the arguments against get_tool_schemas.' : ''}`,
    { cause: error, details: { server, tool } },
  )
}

/** UPSTREAM_UNAVAILABLE naming the server, how long it has been down, why, and what to do. */
export function unavailableError(state: UpstreamState, cause?: unknown): ToolselError {
  const details = {
    server: state.name,
    status: state.status,
    attempt: state.attempt,
    downForMs: state.downForMs,
    lastError: state.lastError,
  }
  const retry = state.nextRetryAt
    ? ` Next reconnect attempt in ${formatDuration(Date.parse(state.nextRetryAt) - Date.now())}.`
    : ''
  let what: string
  if (state.status === 'down' || state.status === 'reconnecting') {
    what = `is down (for ${formatDuration(state.downForMs ?? 0)}; last error: ${state.lastError ?? 'unknown'}).`
    if (state.status === 'reconnecting') what += ` Reconnect attempt ${state.attempt} is running.`
  } else if (state.status === 'connecting') {
    what = 'is still connecting; retry in a few seconds.'
  } else {
    what = `did not answer in time (${cause === undefined ? state.lastError : describeUpstreamError(cause)}); it is marked slow. Retry later or raise gateway.callTimeoutMs.`
  }
  return new ToolselError(
    'UPSTREAM_UNAVAILABLE',
    `Upstream server "${state.name}" ${what}${retry} Its tools stay searchable; see list_servers for its status.`,
    { cause, details },
  )
}
