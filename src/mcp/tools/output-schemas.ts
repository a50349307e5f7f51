/**
 * Output schemas of the toolsel MCP tools (sent as `outputSchema`, checked against every
 * `structuredContent`), and the payload shapes shared by several tools.
 * @module
 */
import { z } from 'zod'
import type { Tool } from '../../library/tool.ts'

export const TokensSchema = z
  .object({
    counter: z.string().describe('qwen3 (real tokenizer), tokenizer:<dir>, or estimate:chars/N'),
    exact: z.boolean(),
    allTools: z.number().describe('tokens to list every tool in scope with its schema'),
    loaded: z.number().describe('tokens of this response'),
    avoided: z.number().describe('allTools - loaded'),
    sampledTools: z
      .number()
      .optional()
      .describe('set for scopes over 5,000 tools: allTools is estimated from this many tools'),
  })
  .describe('Context tokens saved by loading tools on demand')

export const ToolSchemaSchema = z.object({
  id: z.string(),
  name: z.string(),
  server: z.string().optional(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
})

export type ToolSchemaPayload = z.infer<typeof ToolSchemaSchema>

/** A tool as get_tool_schemas and select_tools return it: everything needed to call it. */
export function toolSchemaPayload(tool: Tool): ToolSchemaPayload {
  return {
    id: tool.id,
    name: tool.name,
    ...serverOf(tool),
    description: tool.description,
    inputSchema: tool.parameters,
  }
}

/** `{server}` for a namespaced tool, `{}` otherwise (no `undefined` keys in payloads). */
export function serverOf(tool: Tool): { server?: string } {
  return tool.namespace === undefined ? {} : { server: tool.namespace }
}

/** Scores with 3 decimals: enough to rank, fewer tokens. */
export const roundScore = (score: number) => Math.round(score * 1000) / 1000
