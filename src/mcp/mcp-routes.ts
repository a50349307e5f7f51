/**
 * MCP over Streamable HTTP at `/mcp`, stateless: every POST gets a fresh server and transport
 * (the SDK's web-standard transport, which hono hands the raw `Request`). Stateless needs no
 * session store and scales across processes; it can't push notifications, which toolsel doesn't
 * need because its own tool list never changes (upstream changes show up in search results).
 * Scoping per client: `/mcp?servers=github,slack&tags=dev&library=x` or the
 * `x-toolsel-servers` / `x-toolsel-tags` / `x-toolsel-library` headers.
 * @module
 */
import { Hono } from 'hono'
import type { McpContext } from './mcp-context.ts'
import { rpcError } from './rpc-error.ts'

export function mcpRoutes(context: McpContext): Hono {
  // The MCP SDK (mcp-post.ts) loads on the first POST, not at start; concurrent first requests
  // wait on the one import, and an import that failed is tried again by the next request.
  let post: Promise<typeof import('./mcp-post.ts')> | undefined
  return new Hono()
    .post('/', async (c) => {
      if (!context.service.ready) {
        return rpcError(c, 503, 'The service is still loading its libraries; retry shortly.')
      }
      post ??= import('./mcp-post.ts').catch((error: unknown) => {
        post = undefined
        throw error
      })
      const { answerPost } = await post
      return answerPost(context, c)
    })
    .on(['GET', 'DELETE'], '/', (c) =>
      rpcError(c, 405, 'Method not allowed: this endpoint is stateless, use POST.'),
    )
}
