/**
 * The help and the flags of `toolsel mcp`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { COMMON_HELP, maxFileBytesHelp } from './command-help.ts'

export const HELP = `Usage: toolsel mcp --stdio [--library <ref>] [--servers a,b] [--tags x,y] [--gateway-config <file>]

Serves the toolsel MCP tools over stdio, for desktop MCP clients (Claude Desktop, Cursor…):
search_tools, get_tool_schemas and select_tools; with a gateway also call_tool and list_servers.
stdout carries MCP messages only; logs go to stderr. Over HTTP, "toolsel serve" serves the same
tools at /mcp. See docs/mcp.md.

It stops when its stdin ends or on SIGINT/SIGTERM: it answers the requests it has received, then
closes its upstreams, the whole stop within server.shutdownGraceMs (default 10000 ms); upstream
processes still running at its end are SIGKILLed.

Options:
  --stdio                   Serve over stdin/stdout (required)
  --library <ref>           Default library: index name, index dir, tool file or directory
                            (default demo, or the gateway library when a gateway is configured)
  --index-dir <dir>         Where built indexes live (default indexes)
  --servers <a,b>           Expose only these servers' tools (config mcp.servers)
  --tags <x,y>              Expose only tools with one of these tags (config mcp.tags)
  --gateway-config <file>   Upstream MCP servers: a "gateway" config section, or a client config
                            with "mcpServers" (Claude Desktop / Cursor format)
${maxFileBytesHelp(28)}

${COMMON_HELP}`

export const OPTIONS = {
  stdio: { type: 'boolean' },
  library: { type: 'string' },
  'index-dir': { type: 'string' },
  servers: { type: 'string' },
  tags: { type: 'string' },
  'gateway-config': { type: 'string' },
  'max-file-bytes': { type: 'string' },
} as const
