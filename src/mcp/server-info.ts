/** How toolsel names itself to MCP peers, as server (the /mcp endpoint) and as client (gateway). */
import packageJson from '../../package.json' with { type: 'json' }

export const MCP_SERVER_INFO = { name: 'toolsel', version: packageJson.version } as const

export const MCP_GATEWAY_CLIENT_INFO = {
  name: 'toolsel-gateway',
  version: packageJson.version,
} as const
