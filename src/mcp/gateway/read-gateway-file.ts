/**
 * `--gateway-config <file>`: either toolsel's `gateway` section, or a client config in the
 * `{"mcpServers": {...}}` shape used by Claude Desktop and Cursor, so an existing client config
 * can be pointed at directly. Validation happens with the rest of the config.
 * @module
 */
import type { GatewayConfig } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'
import { readConfigObject } from '../../config/load-config.ts'

type Layer = Record<string, unknown>

const isObject = (value: unknown): value is Layer =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

export async function readGatewayFile(file: string): Promise<Layer> {
  const parsed = await readConfigObject(
    file,
    'Gateway config',
    'the servers as {"mcpServers": {"files": {"command": "npx", …}}}',
  )
  if (!isObject(parsed.mcpServers)) {
    if (isObject(parsed.servers)) return parsed
    throw new ToolselError(
      'INVALID_CONFIG',
      `Gateway config ${file} has neither "mcpServers" (an MCP client config such as ~/.cursor/mcp.json) nor "servers" (toolsel's gateway section)${isObject(parsed.gateway) ? '; a toolsel config file with a "gateway" section is given with --config' : ''}.`,
    )
  }
  // fromEntries defines own keys: a server named "__proto__" is refused by the config merge
  // (assigned, it would have replaced the prototype of `servers`).
  const servers: Layer = Object.fromEntries(
    Object.entries(parsed.mcpServers).map(([name, entry]) => {
      // Clients tag entries with a transport `type` ("stdio", "http", "streamable-http");
      // toolsel tells them apart by `command` vs `url`.
      if (!isObject(entry)) return [name, entry]
      const { type: _type, ...rest } = entry
      return [name, rest]
    }),
  )
  return { servers }
}

/**
 * A `--gateway-config` file as a config layer of its own (loadConfig's `files`): its gateway
 * section, named in errors as the file it came from. None without a file.
 */
export async function gatewayConfigLayers(
  file: string | undefined,
): Promise<Array<{ source: string; layer: Layer }>> {
  if (!file) return []
  return [{ source: `gateway config ${file}`, layer: { gateway: await readGatewayFile(file) } }]
}

/**
 * The warning for a `--gateway-config` file that starts no upstream server (`{"mcpServers": {}}`,
 * or every server `enabled: false`): without one there is no gateway library, `call_tool` or
 * `list_servers`, which a user who passed the file expects. Undefined when a server is enabled.
 */
export function noUpstreamsWarning(file: string, gateway: GatewayConfig): string | undefined {
  const servers = Object.values(gateway.servers)
  if (servers.some((server) => server.enabled)) return undefined
  const why =
    servers.length === 0 ? 'lists no servers' : `disables all ${servers.length} of its servers`
  return `Gateway config ${file} ${why}: running without a gateway (no "${gateway.library}" library, call_tool or list_servers).`
}
