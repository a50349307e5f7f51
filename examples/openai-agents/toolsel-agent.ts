/**
 * toolsel in the OpenAI Agents SDK: an agent gets the tools toolsel selects for its task instead
 * of a whole catalogue. `agentTools` turns toolsel's tool definitions into SDK function tools
 * (non-strict: toolsel serves ordinary JSON Schema, not OpenAI's strict subset), and
 * `toolselAgent` builds an agent for one instruction.
 */
import { Agent, tool, type AgentOptions, type FunctionTool } from '@openai/agents'
import type { ServedTool, ToolselClient } from 'toolsel/client'

type Execute = (tool: ServedTool, input: unknown) => Promise<unknown>

/** One SDK function tool per toolsel tool; `execute` runs the real call (your backend). */
export function agentTools(tools: readonly ServedTool[], execute: Execute): FunctionTool[] {
  return tools.map((served) => {
    const schema = served.parameters as { required?: string[]; properties?: object }
    return tool({
      name: served.name,
      description: served.description,
      parameters: {
        ...served.parameters,
        type: 'object',
        properties: (schema.properties ?? {}) as Record<string, never>,
        required: schema.required ?? [],
        additionalProperties: true,
      },
      strict: false,
      execute: async (input) => JSON.stringify(await execute(served, input)),
    }) as FunctionTool
  })
}

/** An agent for `instruction` whose tools are the ones toolsel selected for it. */
export async function toolselAgent(
  toolsel: ToolselClient,
  instruction: string,
  options: Omit<AgentOptions, 'tools'> & { library?: string; execute: Execute },
): Promise<{ agent: Agent; selected: string[] }> {
  const { library, execute, ...agentOptions } = options
  const selection = await toolsel.select({ instruction, library })
  const ids = selection.tools.map((selected) => selected.id)
  const tools = ids.length === 0 ? [] : await toolsel.getTools(selection.components.library, ids)
  const agent = new Agent({ ...agentOptions, tools: agentTools(tools, execute) })
  return { agent, selected: tools.map((served) => served.name) }
}
