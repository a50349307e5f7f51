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
import { errorMessage } from '../errors.ts'

/** What answers a POST: mcp-post.ts, which imports the MCP SDK. */
export type McpPostModule = Pick<typeof import('./mcp-post.ts'), 'answerPost'>

/**
 * @param loadPost Imports mcp-post.ts (and so the MCP SDK); a test gives one that fails, as a
 *   broken or half-upgraded install's import does.
 */
export function mcpRoutes(
  context: McpContext,
  loadPost: () => Promise<McpPostModule> = () => import('./mcp-post.ts'),
): Hono {
  // The MCP SDK (mcp-post.ts) loads on the first POST, not at start; concurrent first requests
  // wait on the one import, and an import that failed is tried again by the next request.
  let post: Promise<McpPostModule> | undefined
  // Each failed load is logged once, however many POSTs waited on it: the first with its stack;
  // while the load keeps failing with the same message, each further one in one short line with
  // the count (a new message logs its stack again). Was: the full stack at every POST, tens of
  // lines each under a client's retries.
  let failing: { message: string; count: number } | undefined
  const logFailedLoad = (error: unknown) => {
    const message = errorMessage(error)
    if (failing?.message === message) {
      failing.count += 1
      context.service.logger.error(
        `POST /mcp: the MCP server module still fails to load (${failing.count} failed loads in a row, the stack was logged at the first): ${message}`,
      )
      return
    }
    failing = { message, count: 1 }
    context.service.logger.error(
      `POST /mcp: the MCP server module (@modelcontextprotocol/sdk) failed to load, the next request tries again: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    )
  }
  return new Hono()
    .post('/', async (c) => {
      if (!context.service.ready) {
        return rpcError(c, 503, 'The service is still loading its libraries; retry shortly.')
      }
      post ??= loadPost().catch((error: unknown) => {
        post = undefined
        logFailedLoad(error)
        throw error
      })
      let module: McpPostModule
      try {
        module = await post
      } catch {
        // Was the app's plain 500 {error:{code:'INTERNAL'}}, which an MCP client does not read
        // as a JSON-RPC answer, and a log line about an unhandled error: a JSON-RPC internal
        // error (-32603); the load's failure is logged once, above.
        return rpcError(
          c,
          500,
          'Internal error: the MCP server failed to load; the next request tries again.',
          -32603,
        )
      }
      return module.answerPost(context, c)
    })
    .on(['GET', 'DELETE'], '/', (c) =>
      rpcError(c, 405, 'Method not allowed: this endpoint is stateless, use POST.'),
    )
}
