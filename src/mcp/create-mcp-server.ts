/**
 * The toolsel MCP server for one client: iterative tool loading (search → schemas → call)
 * instead of listing every tool up front. The same server runs over Streamable HTTP and stdio.
 * @module
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { McpContext, McpSession } from './mcp-context.ts'
import { MCP_SERVER_INFO } from './server-info.ts'
import { registerCallTool } from './tools/call-tool-tool.ts'
import { registerGetToolSchemas } from './tools/get-tool-schemas-tool.ts'
import { registerListServers } from './tools/list-servers-tool.ts'
import { registerSearchTools } from './tools/search-tools-tool.ts'
import { registerSelectTools } from './tools/select-tools-tool.ts'

/** Server instructions: the workflow, for clients that show them to the model. */
function instructions(gateway: boolean): string {
  const call = gateway ? 'call it with call_tool' : 'call it'
  return `toolsel gives you a large tool library without loading every tool into your context. To use a tool: 1) search_tools with what you want to do (or select_tools with the whole request); 2) get_tool_schemas for only the ids you are about to call; 3) ${call}.`
}

export function createMcpServer(context: McpContext, session: McpSession): McpServer {
  const { gateway } = context
  const server = new McpServer(MCP_SERVER_INFO, {
    instructions: instructions(gateway !== undefined),
  })
  registerSearchTools(server, context, session)
  registerGetToolSchemas(server, context, session)
  registerSelectTools(server, context, session)
  if (gateway) {
    registerCallTool(server, context, session, gateway)
    registerListServers(server, context, session, gateway)
  }
  return server
}
