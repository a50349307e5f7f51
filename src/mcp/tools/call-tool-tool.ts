/** `call_tool` (gateway mode): forwards a call to the upstream server that owns the tool. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { MAX_UPSTREAM_NAME_LENGTH } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'
import type { McpGateway } from '../gateway/mcp-gateway.ts'
import { awaitGatewaySync, resolveView } from '../mcp-context.ts'
import type { McpContext, McpSession } from '../mcp-context.ts'
import { describeScope, isUnscoped } from '../tool-scope.ts'
import { guardTool, toolArguments } from '../tool-result.ts'
import { MAX_TOOL_NAME_LENGTH, shownName } from '../../library/name-characters.ts'

const DESCRIPTION = `Run a tool of a connected server, by id, with its arguments. Ids come from search_tools or select_tools ("server.tool"); load the tool's schema with get_tool_schemas first so that the arguments match it.
Returns the tool's own result unchanged. Fails with UPSTREAM_UNAVAILABLE when the tool's server is down or too slow (list_servers shows each server's status).`

/**
 * The longest id call_tool takes: a gateway tool's `server.name`, a server name at most
 * MAX_UPSTREAM_NAME_LENGTH characters (the config's rule) and a tool name at most
 * MAX_TOOL_NAME_LENGTH (the gateway's). A longer one names no tool; it was looked up and
 * answered UNKNOWN_TOOL whatever its size.
 */
const MAX_CALL_TOOL_ID_LENGTH = MAX_UPSTREAM_NAME_LENGTH + 1 + MAX_TOOL_NAME_LENGTH

export function registerCallTool(
  server: McpServer,
  context: McpContext,
  session: McpSession,
  gateway: McpGateway,
): void {
  const { logger } = context.service
  const checked = toolArguments('call_tool', {
    id: z
      .string()
      .min(1)
      .max(MAX_CALL_TOOL_ID_LENGTH)
      .describe('Tool id, e.g. "github.create_issue"'),
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Arguments matching the tool's input schema"),
  })
  server.registerTool(
    'call_tool',
    {
      title: 'Call a tool',
      description: DESCRIPTION,
      inputSchema: checked.inputSchema,
      annotations: { openWorldHint: true },
    },
    (raw, extra) =>
      guardTool(logger, 'call_tool', async () => {
        const { id, arguments: args } = checked.parse(raw)
        let view = await resolveView(context, session, gateway.libraryName)
        // A tool not listed yet while the first sync runs: wait for it a little, as searches do.
        if (!view.library.has(id) && !gateway.synced) {
          await awaitGatewaySync(context, session, gateway.libraryName, extra.signal)
          view = await resolveView(context, session, gateway.libraryName)
        }
        const tool = view.library.get(id)
        if (!tool) {
          const pending = gateway.pendingReason(id, session.scope)
          if (pending) {
            throw new ToolselError(
              'UPSTREAM_UNAVAILABLE',
              `Tool ${shownName(id)} is not available yet: ${pending}. Retry shortly; list_servers shows each server's status.`,
              { details: { library: gateway.libraryName, ids: [id] } },
            )
          }
          const scoped = isUnscoped(session.scope)
            ? ''
            : ` within this client's scope (${describeScope(session.scope)})`
          throw new ToolselError(
            'UNKNOWN_TOOL',
            `No tool ${shownName(id)} in the gateway library "${gateway.libraryName}"${scoped}.${view.library.unknownIdsHint([id])} Use an id exactly as search_tools returns it ("server.tool").`,
            { details: { library: gateway.libraryName, ids: [id] } },
          )
        }
        return gateway.callTool(tool, args, extra.signal)
      }),
  )
}
