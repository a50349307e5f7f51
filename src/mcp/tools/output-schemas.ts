/**
 * Output schemas of the toolsel MCP tools (sent as `outputSchema`, checked against every
 * `structuredContent`), and the payload shapes shared by several tools.
 * @module
 */
import { z } from 'zod'
import {
  providerToolsAnswer,
  TOOL_FORMATS,
  type ProviderTool,
  type ToolFormat,
} from '../../library/provider-tools.ts'
import type { Tool } from '../../library/tool.ts'
import { toolHints } from '../../library/tool-hints.ts'
import { RESPONSE_SCHEMAS, ToolHintsSchema } from '../../server/schemas.ts'

/** Gateway library only, while its first sync runs: what is missing and why (`syncingNote`). */
export const SyncingSchema = z
  .string()
  .optional()
  .describe(
    'Gateway library while its first sync runs: the answer covers only the servers that listed their tools so far; ask again shortly',
  )

export const TokensSchema = z
  .object({
    counter: z.string().describe('qwen3 (real tokenizer), tokenizer:<dir>, or estimate:chars/N'),
    exact: z.boolean(),
    allTools: z.number().describe('tokens to list every tool in scope with its schema'),
    loaded: z.number().describe('tokens of this response'),
    avoided: z.number().describe('allTools - loaded, at least 0'),
    sampledTools: z
      .number()
      .optional()
      .describe('set for scopes over 5,000 tools: allTools is estimated from this many tools'),
  })
  .describe('Context tokens saved by loading tools on demand')

const ToolSchemaSchema = z.object({
  id: z.string(),
  name: z.string(),
  server: z.string().optional(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: ToolHintsSchema.optional(),
})

export type ToolSchemaPayload = z.infer<typeof ToolSchemaSchema>

/**
 * A tool as get_tool_schemas and select_tools return it: everything needed to call it, and an
 * MCP tool's behaviour hints when its server declared some (`toolHints`: four booleans, unchecked
 * claims of that server, as `POST /v1/select-tools` gives them with the schemas).
 */
function toolSchemaPayload(tool: Tool): ToolSchemaPayload {
  const hints = toolHints(tool)
  return {
    id: tool.id,
    name: tool.name,
    ...serverOf(tool),
    description: tool.description,
    inputSchema: tool.parameters,
    ...(hints && { annotations: hints }),
  }
}

/**
 * The `toolFormat` argument of select_tools and get_tool_schemas: the tools in a model API's
 * shape, for an agent that hands them on to that API (provider-tools.ts).
 */
export const TOOL_FORMAT_ARGUMENT = z
  .enum(TOOL_FORMATS)
  .optional()
  .describe(
    "Shape of the returned tools: toolsel (default) or a model API's, to pass them on to it: openai (Chat Completions), openai-responses, anthropic. Each is then named by its id as that API allows (sms.send_sms is sms--send_sms), and toolIds maps each name back to the id.",
  )

/** `tools` of select_tools and get_tool_schemas: toolsel's shape or a provider's, then `toolIds`. */
export const TOOLS_OUTPUT = {
  tools: z.union([
    z.array(ToolSchemaSchema),
    z.array(RESPONSE_SCHEMAS.providerTools.openai),
    z.array(RESPONSE_SCHEMAS.providerTools['openai-responses']),
    z.array(RESPONSE_SCHEMAS.providerTools.anthropic),
  ]),
  toolIds: z
    .record(z.string(), z.string())
    .optional()
    .describe('With a toolFormat other than toolsel: provider tool name → tool id'),
}

/** `tools` in the shape of `format` (`toolSchemaPayload`s by default), with `toolIds` for a provider's. */
export function toolsPayload(
  tools: readonly Tool[],
  format: ToolFormat = 'toolsel',
): { tools: ToolSchemaPayload[] | ProviderTool[]; toolIds?: Record<string, string> } {
  if (format === 'toolsel') return { tools: tools.map(toolSchemaPayload) }
  return providerToolsAnswer(tools, format)
}

/** `{server}` for a namespaced tool, `{}` otherwise (no `undefined` keys in payloads). */
export function serverOf(tool: Tool): { server?: string } {
  return tool.namespace === undefined ? {} : { server: tool.namespace }
}

/** Scores with 3 decimals: enough to rank, fewer tokens. */
export const roundScore = (score: number) => Math.round(score * 1000) / 1000
