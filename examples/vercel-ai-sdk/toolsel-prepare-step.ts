/**
 * toolsel in the Vercel AI SDK: the tools a model sees at each step are the ones toolsel selects
 * for the conversation so far, through `prepareStep` → `activeTools`. A library of thousands of
 * tools stays out of the prompt; the SDK only ever forwards the active ones to the model.
 */
import { jsonSchema, tool, type ModelMessage, type PrepareStepFunction, type ToolSet } from 'ai'
import type { ServedTool, ToolselClient } from 'toolsel/client'

/** AI SDK tools for toolsel tools (schemas as toolsel serves them: valid JSON Schema). */
export function aiSdkTools(
  tools: readonly ServedTool[],
  execute: (tool: ServedTool, input: unknown) => Promise<unknown>,
): ToolSet {
  return Object.fromEntries(
    tools.map((served) => [
      served.name,
      tool({
        description: served.description,
        inputSchema: jsonSchema(served.parameters as Parameters<typeof jsonSchema>[0]),
        execute: (input) => execute(served, input),
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
 * `tools` must hold every tool toolsel may pick (its names are the AI SDK tool keys).
 */
export function toolselPrepareStep<TOOLS extends ToolSet>(
  toolsel: ToolselClient,
  options: { library?: string } = {},
): PrepareStepFunction<TOOLS> {
  return async ({ messages }) => {
    const selection = await toolsel.select({
      instruction: lastUserText(messages),
      library: options.library,
    })
    return { activeTools: selection.tools.map((selected) => selected.name as keyof TOOLS & string) }
  }
}
