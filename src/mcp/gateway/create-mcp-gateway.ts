/**
 * The MCP gateway of `toolsel serve` and `toolsel mcp`, its module (and the MCP SDK's client it
 * uses) loaded only when an upstream is enabled: a server without upstreams does not pay about
 * 0.1 s of CPU for it at every start (bench/README.md, "CLI start cost", round 49).
 * @module
 */
import type { ToolselService } from '../../service/toolsel-service.ts'
import type { McpGateway } from './mcp-gateway.ts'

/** The gateway for `service.config.gateway`, or undefined when no upstream is enabled. */
export async function createMcpGateway(service: ToolselService): Promise<McpGateway | undefined> {
  const { servers } = service.config.gateway
  if (!Object.values(servers).some((server) => server.enabled)) return undefined
  const { McpGateway } = await import('./mcp-gateway.ts')
  return new McpGateway(service)
}
