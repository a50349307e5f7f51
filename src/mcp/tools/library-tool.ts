/** The frame shared by the tools that answer over one library: `search_tools`, `select_tools`. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { IndexedLibrary } from '../../store/indexed-library.ts'
import { awaitGatewaySync, resolveView, type McpContext, type McpSession } from '../mcp-context.ts'
import { guardTool, jsonResult } from '../tool-result.ts'
import { withDeadline } from './with-deadline.ts'

/**
 * A tool handler that answers over one library: in the session's turn, with our errors as error
 * results (`guardTool`); the arguments checked by `args.parse`; under the request's signal and
 * `server.requestTimeoutMs`; after the gateway's first sync (`awaitGatewaySync`) on the session's
 * view of the library the call names. `answer` builds the payload from the other arguments; the
 * gateway's `syncing` note, then the payload's token savings, are added after its fields.
 */
export function libraryToolHandler<Args extends { library?: string }>(
  context: McpContext,
  session: McpSession,
  tool: string,
  args: { parse(raw: unknown): Args },
  answer: (
    args: Omit<Args, 'library'>,
    view: IndexedLibrary,
    signal: AbortSignal,
  ) => Promise<Record<string, unknown>>,
): (raw: unknown, extra: { signal: AbortSignal }) => Promise<CallToolResult> {
  const { config, logger } = context.service
  return (raw, extra) =>
    guardTool(
      logger,
      tool,
      async () => {
        const { library, ...rest } = args.parse(raw)
        return withDeadline(extra.signal, config.server.requestTimeoutMs, async (signal) => {
          const syncing = await awaitGatewaySync(context, session, library, signal)
          const view = await resolveView(context, session, library)
          const payload = { ...(await answer(rest, view, signal)), ...(syncing && { syncing }) }
          const tokens = await context.tokens.savings(view.library, payload)
          return jsonResult({ ...payload, tokens })
        })
      },
      session.turns,
    )
}
