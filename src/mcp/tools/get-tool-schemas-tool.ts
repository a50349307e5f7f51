/** `get_tool_schemas`: full descriptions and input schemas of the tools about to be called. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { ToolselError } from '../../errors.ts'
import { awaitGatewaySync, resolveView, type McpContext, type McpSession } from '../mcp-context.ts'
import { describeScope, isUnscoped } from '../tool-scope.ts'
import { guardTool, jsonResult, toolArguments } from '../tool-result.ts'
import { TOOL_FORMAT_ARGUMENT, TOOLS_OUTPUT, toolsPayload } from './output-schemas.ts'
import { shownNames } from '../../library/name-characters.ts'
import { ToolIdSchema } from '../../library/tool-id-limit.ts'

/** Most ids per call: loading many schemas at once defeats the point of loading on demand. */
const MAX_SCHEMA_IDS = 20

const DESCRIPTION = `Load the full description and input schema (JSON Schema of the arguments) of specific tools, by id.
Ids come from search_tools or select_tools results; don't guess them. Load only the tools you are about to call: every schema costs context tokens.
Unknown ids fail with UNKNOWN_TOOL, listing them.`

export function registerGetToolSchemas(
  server: McpServer,
  context: McpContext,
  session: McpSession,
): void {
  const { logger } = context.service
  const args = toolArguments('get_tool_schemas', {
    ids: z
      .array(ToolIdSchema)
      .min(1)
      .max(MAX_SCHEMA_IDS)
      .describe('Tool ids from search_tools, e.g. ["slack.post_message"]'),
    library: z.string().optional().describe('Library of the ids; omit for the default'),
    toolFormat: TOOL_FORMAT_ARGUMENT,
  })
  server.registerTool(
    'get_tool_schemas',
    {
      title: 'Get tool schemas',
      description: DESCRIPTION,
      inputSchema: args.inputSchema,
      outputSchema: { library: z.string(), ...TOOLS_OUTPUT },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (raw, extra) =>
      guardTool(
        logger,
        'get_tool_schemas',
        async () => {
          const { ids, library, toolFormat } = args.parse(raw)
          let view = await resolveView(context, session, library)
          const unknown = (id: string) => !view.library.has(id)
          // Ids of servers not listed yet while the gateway's first sync runs: wait a little.
          if (ids.some(unknown) && context.gateway && !context.gateway.synced) {
            await awaitGatewaySync(context, session, library, extra.signal)
            view = await resolveView(context, session, library)
          }
          const missing = [...new Set(ids.filter(unknown))]
          if (missing.length > 0) {
            const { gateway } = context
            const pending =
              gateway && !gateway.synced && view.library.name === gateway.libraryName
                ? gateway.pendingReason(missing[0], session.scope)
                : undefined
            if (pending) {
              throw new ToolselError(
                'UPSTREAM_UNAVAILABLE',
                `Tool ${shownNames(missing)} not available yet: ${pending}. Retry shortly; list_servers shows each server's status.`,
                { details: { library: view.library.name, ids: missing } },
              )
            }
            const scoped = isUnscoped(session.scope)
              ? ''
              : ` within this client's scope (${describeScope(session.scope)})`
            throw new ToolselError(
              'UNKNOWN_TOOL',
              `Library "${view.library.name}" has no tool ${shownNames(missing)}${scoped}.${view.library.unknownIdsHint(missing)} Use ids exactly as search_tools returns them.`,
              { details: { library: view.library.name, ids: missing } },
            )
          }
          view.library.assertAnswerBytes(ids)
          const tools = [...new Set(ids)].map((id) => view.library.require(id))
          return jsonResult({ library: view.library.name, ...toolsPayload(tools, toolFormat) })
        },
        session.turns,
      ),
  )
}
