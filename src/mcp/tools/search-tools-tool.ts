/** `search_tools`: find tools by intent; names and one-line descriptions only, no schemas. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { pipelineOptionFields } from '../../service/request-fields.ts'
import type { McpContext, McpSession } from '../mcp-context.ts'
import { toolArguments } from '../tool-result.ts'
import { libraryToolHandler } from './library-tool.ts'
import { roundScore, serverOf, SyncingSchema, TokensSchema } from './output-schemas.ts'

const DESCRIPTION = `Find tools for a task in a large tool library. Returns the best matches (id, name, server, one-line description, relevance score), without input schemas, so it is cheap to call.
Use it whenever you need a capability you don't have a schema for yet; search again with other words if nothing fits. Then load the schemas of only the tools you are about to call with get_tool_schemas, passing their ids.
For a multi-step request described in one instruction, select_tools plans, searches and picks in one call.`

export function registerSearchTools(
  server: McpServer,
  context: McpContext,
  session: McpSession,
): void {
  const { service } = context
  const { config } = service
  // The same options as POST /v1/search-tools (k's default is mcp.searchK here).
  const { retriever } = pipelineOptionFields(config)
  const args = toolArguments('search_tools', {
    query: z
      .string()
      .min(1)
      .max(config.server.maxInstructionChars)
      .describe('What you want to do, e.g. "post a message to a Slack channel"'),
    k: z
      .number()
      .int()
      .min(1)
      .max(config.server.maxK)
      .optional()
      .describe(`How many tools to return (default ${config.mcp.searchK})`),
    library: z.string().optional().describe('Library to search; omit for the default'),
    retriever,
  })
  server.registerTool(
    'search_tools',
    {
      title: 'Search tools',
      description: context.gateway
        ? `${DESCRIPTION}\nRun the chosen tool with call_tool.`
        : DESCRIPTION,
      inputSchema: args.inputSchema,
      outputSchema: {
        library: z.string(),
        tools: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            server: z.string().optional(),
            description: z.string(),
            score: z.number(),
          }),
        ),
        syncing: SyncingSchema,
        tokens: TokensSchema,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    libraryToolHandler(context, session, 'search_tools', args, async (request, view, signal) => {
      const { query, retriever, k } = request
      const search = { query, retriever, k: k ?? config.mcp.searchK }
      const { results } = await service.search(search, signal, view)
      const tools = results.map(({ id, name, description, score }) => {
        const tool = view.library.require(id)
        return { id, name, ...serverOf(tool), description, score: roundScore(score) }
      })
      return { library: view.library.name, tools }
    }),
  )
}
