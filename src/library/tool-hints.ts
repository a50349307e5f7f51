/**
 * The behaviour hints of an MCP tool (MCP ToolAnnotations) that answers with schemas pass on to
 * the agent: `get_tool_schemas` and `select_tools` over MCP, `POST /v1/select-tools` with its
 * schemas. Only the four boolean hints MCP defines, as the tool's server declared them:
 *
 * - they are hints from that server, which toolsel does not check (MCP: "clients should never
 *   make tool use decisions based on ToolAnnotations received from untrusted servers"), so they
 *   are passed as its claims, under `annotations` as MCP names them, never as toolsel's own;
 * - no text: `title` (a display name; the agent has the tool's name) and keys MCP does not define
 *   (kept whole in the tool's `source`, up to 65,536 characters) could carry an upstream's words
 *   into a field beside toolsel's, read with more trust than its description; booleans cannot;
 * - bounded: at most four booleans a tool, whatever the server listed.
 * @module
 */
import type { Tool } from './tool.ts'

/** The hints passed on, in MCP's order. */
export const TOOL_HINTS = [
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
] as const

export type ToolHints = Partial<Record<(typeof TOOL_HINTS)[number], boolean>>

/**
 * `tool`'s hints as its MCP server (or MCP tools file) declared them in `annotations` (kept in
 * `source.annotations` by the MCP importer and the gateway): each of TOOL_HINTS that is a
 * boolean, in that order; undefined when there is none (most tools: no `annotations` key).
 */
export function toolHints(tool: Tool): ToolHints | undefined {
  const annotations: unknown = tool.source?.annotations
  if (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations))
    return undefined
  let hints: ToolHints | undefined
  for (const hint of TOOL_HINTS) {
    const value: unknown = (annotations as Record<string, unknown>)[hint]
    if (typeof value === 'boolean') (hints ??= {})[hint] = value
  }
  return hints
}
