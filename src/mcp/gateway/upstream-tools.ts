/**
 * Listing an upstream's tools (every page) and turning them into library tools: through the MCP
 * importer (so ids are `server.name`, exactly as for MCP files), one tool at a time so that one
 * malformed tool is skipped with a warning instead of hiding the whole server.
 * @module
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import { isToolselError } from '../../errors.ts'
import { importToolsFromText } from '../../library/importers/index.ts'
import type { Tool } from '../../library/tool.ts'

/** Most `tools/list` pages followed; guards against a server whose cursor never ends. */
const MAX_PAGES = 1000

/**
 * Every page of `tools/list`, following `nextCursor`; each page gets `timeoutMs`. More than
 * `maxTools` tools stop the listing with an error naming `gateway.maxToolsPerServer` (a plain
 * Error: the connection marks the server down, and keeps none of the listing).
 */
export async function listAllTools(
  client: Client,
  timeoutMs: number,
  maxTools = Number.POSITIVE_INFINITY,
): Promise<McpTool[]> {
  const listed: McpTool[] = []
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, {
      timeout: timeoutMs,
    })
    if (listed.length + result.tools.length > maxTools) {
      throw new Error(
        `tools/list listed more than ${maxTools.toLocaleString('en-US')} tools (gateway.maxToolsPerServer); none of them were taken`,
      )
    }
    listed.push(...result.tools)
    cursor = result.nextCursor
    if (!cursor) break
  }
  return listed
}

export interface UpstreamTools {
  tools: Tool[]
  /** One line per skipped tool, naming it and why. */
  warnings: string[]
}

export function upstreamTools(
  server: string,
  listed: readonly McpTool[],
  tags: readonly string[],
): UpstreamTools {
  const tools: Tool[] = []
  const warnings: string[] = []
  const seen = new Set<string>()
  for (const [position, item] of listed.entries()) {
    try {
      const [tool] = importToolsFromText(JSON.stringify({ tools: [item] }), {
        format: 'mcp',
        namespace: server,
      }).tools
      if (seen.has(tool.id)) throw new Error(`a second tool named "${tool.name}"`)
      seen.add(tool.id)
      if (tags.length > 0) tool.tags = [...tags]
      tool.source = { ...tool.source, format: 'mcp', server, record: position }
      tools.push(tool)
    } catch (error) {
      const reason = isToolselError(error) || error instanceof Error ? error.message : String(error)
      warnings.push(
        `Upstream "${server}": skipped tool #${position} (${String(item?.name)}): ${reason}`,
      )
    }
  }
  return { tools, warnings }
}
