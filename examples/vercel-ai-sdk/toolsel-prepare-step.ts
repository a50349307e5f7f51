/**
 * toolsel in the Vercel AI SDK: the tools a model sees at each step are the ones toolsel selects
 * for the conversation so far, through `prepareStep` → `activeTools`. A library of thousands of
 * tools stays out of the prompt; the SDK only ever forwards the active ones to the model.
 */
import { jsonSchema, tool, type ModelMessage, type PrepareStepFunction, type ToolSet } from 'ai'
import type { ProviderTools, ToolselClient } from 'toolsel/client'

/**
 * AI SDK tools for toolsel tools in OpenAI's shape (`getProviderTools(…, 'openai')`): keyed by
 * their provider names (`mail.send_email` is `mail--send_email`), which every model API accepts
 * and which stay distinct when two servers have a tool of the same name; `execute` gets the
 * tool id back from `toolIds`.
 */
export function aiSdkTools(
  { tools, toolIds }: ProviderTools<'openai'>,
  execute: (id: string, input: unknown) => Promise<unknown>,
): ToolSet {
  return Object.fromEntries(
    tools.map(({ function: definition }) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema(definition.parameters as Parameters<typeof jsonSchema>[0]),
        execute: (input) => execute(toolIds[definition.name], input),
      }),
    ]),
  )
}

/** The text of the last user message: what toolsel selects for. */
export function lastUserText(messages: readonly ModelMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]
    if (message.role !== 'user') continue
    if (typeof message.content === 'string') return message.content
    return message.content
      .map((part) => (part.type === 'text' ? part.text : ''))
      .join(' ')
      .trim()
  }
  return ''
}

/**
 * A `prepareStep` that asks toolsel which tools the next step needs and activates only those.
 * `tools` must hold every tool toolsel may pick, keyed by provider name (`aiSdkTools`).
 */
export function toolselPrepareStep<TOOLS extends ToolSet>(
  toolsel: ToolselClient,
  options: { library?: string } = {},
): PrepareStepFunction<TOOLS> {
  return async ({ messages }) => {
    const selection = await toolsel.select({
      instruction: lastUserText(messages),
      library: options.library,
      toolFormat: 'openai',
    })
    return {
      activeTools: selection.tools.map(
        (selected) => selected.function.name as keyof TOOLS & string,
      ),
    }
  }
}
