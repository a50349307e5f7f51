/** `list_servers` (gateway mode): each upstream's status, as far as the client's scope allows. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { McpGateway } from '../gateway/mcp-gateway.ts'
import { UpstreamStateSchema, type UpstreamState } from '../gateway/upstream-state.ts'
import type { McpContext, McpSession } from '../mcp-context.ts'
import { serverInScope, type ToolScope } from '../tool-scope.ts'
import { guardTool, jsonResult, toolArguments } from '../tool-result.ts'
import { assertKeyLibrary } from '../../server/auth/api-keys.ts'

const DESCRIPTION = `List the servers behind this gateway with their status (connected, slow, down, reconnecting, connecting), tool count, last sync time, last error and, for a down server, its reconnect attempt and when the next one starts.
Use it when call_tool fails with UPSTREAM_UNAVAILABLE, or to see which servers exist. A down server's tools stay searchable but can't be called until it is back.`

/** Servers a scope may see: named in `servers` (when set) and sharing a tag (when set). */
export function serversInScope(servers: UpstreamState[], scope: ToolScope): UpstreamState[] {
  return servers.filter((server) => serverInScope(server.name, server.tags, scope))
}

export function registerListServers(
  server: McpServer,
  context: McpContext,
  session: McpSession,
  gateway: McpGateway,
): void {
  const args = toolArguments('list_servers', {})
  server.registerTool(
    'list_servers',
    {
      title: 'List gateway servers',
      description: DESCRIPTION,
      inputSchema: args.inputSchema,
      outputSchema: { library: z.string(), servers: z.array(UpstreamStateSchema) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (raw) =>
      guardTool(context.service.logger, 'list_servers', async () => {
        args.parse(raw)
        // A key limited to libraries without the gateway's may not see its servers (as call_tool).
        assertKeyLibrary(
          { name: session.keyName ?? 'this key', libraries: session.libraries ?? [] },
          gateway.libraryName,
        )
        return jsonResult({
          library: gateway.libraryName,
          servers: serversInScope(gateway.servers(), session.scope),
        })
      }),
  )
}
