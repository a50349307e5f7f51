/**
 * An upstream's `tools/list` result as library tools: through the MCP importer (so ids are
 * `server.name`, exactly as for MCP files), one tool at a time so that one malformed tool is
 * skipped with a warning instead of hiding the whole server.
 * @module
 */
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import { isToolselError } from '../../errors.ts'
import { importToolsFromText } from '../../library/importers/index.ts'
import type { Tool } from '../../library/tool.ts'

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
