/**
 * The shape of every toolsel MCP tool result: the payload as compact JSON text (what a model
 * reads) plus the same object as `structuredContent` (what a program reads, checked against the
 * tool's `outputSchema`). Failures are tool results with `isError: true`, so the model sees the
 * error code and the fix-it message instead of a protocol error.
 * @module
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { isToolselError, ToolselError } from '../errors.ts'
import type { Logger } from '../log.ts'

export function jsonResult(payload: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload }
}

/**
 * `{error: {code, message, details?}}` as text, the same body the HTTP API returns. No
 * `structuredContent`: it would have to match the success `outputSchema`.
 */
export function errorResult(error: ToolselError): CallToolResult {
  const { code, message, details } = error
  const body = Object.keys(details).length > 0 ? { code, message, details } : { code, message }
  return { content: [{ type: 'text', text: JSON.stringify({ error: body }) }], isError: true }
}

/** Runs a tool handler; our errors become error results, anything else is logged as INTERNAL. */
export async function guardTool(
  logger: Logger,
  tool: string,
  run: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    return await run()
  } catch (error) {
    if (isToolselError(error)) return errorResult(error)
    const reason = error instanceof Error ? error.message : String(error)
    logger.error(`MCP tool ${tool} failed: ${error instanceof Error ? error.stack : reason}`)
    return errorResult(new ToolselError('INTERNAL', `${tool} failed: ${reason}`))
  }
}
