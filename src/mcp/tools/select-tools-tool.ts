/** `select_tools`: Plan-Retrieve-Select for a whole instruction, answered with schemas. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import {
  schemasLeftOutWarning,
  schemasPastBudget,
  toolsWithinBudget,
} from '../../library/tool-library.ts'
import { pipelineOptionFields } from '../../service/request-fields.ts'
import type { McpContext, McpSession } from '../mcp-context.ts'
import { toolArguments } from '../tool-result.ts'
import { libraryToolHandler } from './library-tool.ts'
import {
  SyncingSchema,
  TokensSchema,
  TOOL_FORMAT_ARGUMENT,
  TOOLS_OUTPUT,
  toolsPayload,
} from './output-schemas.ts'

/** Runner-up candidates shown per step, so the agent can switch without searching again. */
const ALTERNATIVES = 3

const DESCRIPTION = `Pick the tools for a whole task in one call. The instruction is split into steps, candidate tools are retrieved for each step and one is chosen per step. Returns the chosen tools with their full input schemas (ready to call), and each step with the chosen id and a few alternative ids. When the library's usage examples answered (examples.applied), the tools are the ones similar past requests used, which a step's chosen id may differ from.
Use it for a request that needs one or several tools ("find a flight to Lisbon and add it to my calendar"). Use search_tools instead to browse, or when a chosen tool doesn't fit (then get_tool_schemas for the alternative you want).`

export function registerSelectTools(
  server: McpServer,
  context: McpContext,
  session: McpSession,
): void {
  const { service } = context
  const { config } = service
  // The same per-request options as POST /v1/select-tools.
  const { k, tau, planner, retriever, reranker, selector } = pipelineOptionFields(config)
  const args = toolArguments('select_tools', {
    instruction: z
      .string()
      .min(1)
      .max(config.server.maxInstructionChars)
      .describe("The user's request, in their words"),
    library: z.string().optional().describe('Library to select from; omit for the default'),
    k,
    tau,
    retriever,
    planner,
    reranker,
    selector,
    toolFormat: TOOL_FORMAT_ARGUMENT,
  })
  server.registerTool(
    'select_tools',
    {
      title: 'Select tools for a task',
      description: context.gateway
        ? `${DESCRIPTION}\nRun the chosen tools with call_tool.`
        : DESCRIPTION,
      inputSchema: args.inputSchema,
      outputSchema: {
        library: z.string(),
        ...TOOLS_OUTPUT,
        steps: z.array(
          z.object({
            text: z.string(),
            selected: z.string().nullable(),
            alternatives: z.array(z.string()),
          }),
        ),
        examples: z
          .object({
            similarity: z.number(),
            applied: z.boolean(),
            decided: z.literal(true).optional(),
          })
          .optional(),
        warnings: z.array(z.string()).optional(),
        syncing: SyncingSchema,
        tokens: TokensSchema,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    libraryToolHandler(
      context,
      session,
      'select_tools',
      args,
      async ({ toolFormat, ...request }, view, signal) => {
        const result = await service.select(request, signal, view)
        // Past MAX_ANSWER_TOOL_BYTES of schemas (the first tool always whole) a tool is left
        // out of `tools`, named in `warnings`: the steps still name it as selected.
        const left = schemasPastBudget(result.tools)
        const tools = toolsWithinBudget(result.tools, left)
        return {
          library: view.library.name,
          ...toolsPayload(tools, toolFormat),
          steps: result.steps.map((step) => ({
            text: step.text,
            selected: step.selected,
            alternatives: step.candidates
              .map((candidate) => candidate.id)
              .filter((id) => id !== step.selected)
              .slice(0, ALTERNATIVES),
          })),
          // Without it an agent saw a step's selected tool missing from tools, unexplained.
          ...(result.examples && { examples: result.examples }),
          ...(left.length > 0 && {
            warnings: [schemasLeftOutWarning(left, 'load each one with get_tool_schemas')],
          }),
        }
      },
    ),
  )
}
