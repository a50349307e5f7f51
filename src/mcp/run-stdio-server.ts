/**
 * MCP over stdio, for desktop clients that spawn `toolsel mcp --stdio`. stdout carries protocol
 * messages only; everything else (logs, upstream stderr) goes to stderr.
 * @module
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { createMcpServer } from './create-mcp-server.ts'
import type { McpContext, McpSession } from './mcp-context.ts'

/** Serves until the client closes stdin or the process gets SIGINT/SIGTERM. */
export async function runStdioServer(context: McpContext, session: McpSession): Promise<void> {
  const server = createMcpServer(context, session)
  const transport = new StdioServerTransport()
  const closed = new Promise<string>((resolve) => {
    transport.onclose = () => resolve('transport closed')
    process.stdin.once('end', () => resolve('stdin closed'))
    process.once('SIGINT', () => resolve('SIGINT'))
    process.once('SIGTERM', () => resolve('SIGTERM'))
  })
  await server.connect(transport)
  context.service.logger.info('MCP server ready on stdio')
  const reason = await closed
  context.service.logger.info(`MCP server stopping (${reason})`)
  await server.close()
}
