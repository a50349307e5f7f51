/**
 * MCP's Streamable HTTP endpoint over plain `fetch` (no SDK client): for tests and benches that
 * look at the HTTP answer itself (status, auth, timing) rather than the SDK's view of it.
 * @module
 */

/** The headers a stateless Streamable HTTP POST to `/mcp` needs. */
export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-03-26',
} as const

/** One POST of `body` (a JSON-RPC message or a batch of them) to `endpoint` (`…/mcp[?query]`). */
export function postMcp(
  endpoint: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify(body),
  })
}

/** One `tools/call` of tool `name` with `args` to `endpoint` (`…/mcp[?query]`). */
export function callMcpTool(
  endpoint: string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return postMcp(
    endpoint,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    headers,
  )
}
