/**
 * toolsel in the OpenAI Agents SDK: an agent gets the tools toolsel selects for its task instead
 * of a whole catalogue. `agentTools` turns toolsel's tool definitions in the Responses API's shape
 * into SDK function tools (non-strict: toolsel serves ordinary JSON Schema, not OpenAI's strict
 * subset), and
 * `toolselAgent` builds an agent for one instruction.
 */
import { Agent, tool, type AgentOptions, type FunctionTool } from '@openai/agents'
import type { ProviderTools, ToolselClient } from 'toolsel/client'

type Execute = (id: string, input: unknown) => Promise<unknown>

/**
 * One SDK function tool per toolsel tool in the Responses shape (`getProviderTools(…,
 * 'openai-responses')`), named by its provider name (`sms.send_sms` is `sms--send_sms`: valid for
 * the API and distinct across servers); `execute` runs the real call (your backend) by tool id.
 */
export function agentTools(
  { tools, toolIds }: ProviderTools<'openai-responses'>,
  execute: Execute,
): FunctionTool[] {
  return tools.map((definition) => {
    const schema = definition.parameters as { required?: string[]; properties?: object }
    return tool({
      name: definition.name,
      description: definition.description,
      parameters: {
        ...definition.parameters,
        type: 'object',
        properties: (schema.properties ?? {}) as Record<string, never>,
        required: schema.required ?? [],
        additionalProperties: true,
      },
      strict: false,
      execute: async (input) => JSON.stringify(await execute(toolIds[definition.name], input)),
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
  const answer =
    ids.length === 0
      ? { tools: [], toolIds: {} }
      : await toolsel.getProviderTools(selection.components.library, ids, 'openai-responses')
  const tools = agentTools(answer, execute)
  const agent = new Agent({ ...agentOptions, tools })
  // The names as the SDK sends them: it writes every character but letters and digits as `_`
  // (`sms--send_sms` → `sms__send_sms`); `execute` still gets the id from `toolIds`.
  return { agent, selected: tools.map((functionTool) => functionTool.name) }
}
