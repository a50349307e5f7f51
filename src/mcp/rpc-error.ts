/**
 * The JSON-RPC error answers of `/mcp` that carry no id (mcp-routes.ts, mcp-post.ts).
 * @module
 */
import type { Context } from 'hono'

/** A JSON-RPC error response without an id, as the transport itself answers. */
export function rpcError(
  c: Context,
  status: 400 | 405 | 413 | 500 | 503,
  message: string,
  code = -32000,
): Response {
  const body = { jsonrpc: '2.0', error: { code, message }, id: null }
  return c.json(body, status, status === 405 ? { Allow: 'POST' } : {})
}
