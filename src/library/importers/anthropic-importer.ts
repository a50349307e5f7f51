/**
 * Anthropic Messages API tool definitions: `{name, description?, input_schema, input_examples?,
 * type?: "custom", cache_control?}`, as a list or the `tools` of a request body. Server tools
 * (`{type: "web_search_20250305", name}`, `bash_…`, `text_editor_…`) run on Anthropic's side and
 * have no schema an agent selects by, so they are skipped with a warning.
 * @module
 */
import { z } from 'zod'
import type { Tool } from '../tool.ts'
import { addWarning, importFailed, type ImportContext } from './import-context.ts'
import { nonEmptyString, parseRecord } from './parse-record.ts'
import { providerTools } from './provider-names.ts'
import { toolList } from './tool-list.ts'
import { shownName } from '../name-characters.ts'

const AnthropicToolSchema = z.looseObject({
  type: z.literal('custom').optional(),
  name: nonEmptyString(),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  input_examples: z.array(z.record(z.string(), z.unknown())).optional(),
})

const TypedSchema = z.looseObject({ type: z.string().optional() })

/**
 * Imports Anthropic tools. id = name, or `namespace.name` when a namespace is given; names
 * toolsel wrote (`sms--send_sms`) are read back as their ids (provider-names.ts).
 * `input_examples` (example inputs for the tool) are kept in `source.inputExamples`.
 */
export function importAnthropic(parsed: unknown, context: ImportContext): Tool[] {
  const definitions: { definition: z.infer<typeof AnthropicToolSchema>; record: number }[] = []
  for (const [record, item] of toolList(parsed, context, 'anthropic').entries()) {
    const { type } = parseRecord(TypedSchema, item, context, record)
    if (type === 'function') {
      throw importFailed(context, {
        record,
        field: 'type',
        message:
          '"function" is an OpenAI tool, not an Anthropic one: import the file as openai (or leave the format to detection)',
        suggestedFormat: 'openai',
      })
    }
    if (type !== undefined && type !== 'custom') {
      addWarning(
        context,
        record,
        `skipped the server tool ${shownName(type)} (only client tools are imported)`,
      )
      continue
    }
    const definition = parseRecord(AnthropicToolSchema, item, context, record)
    definitions.push({ definition, record })
  }
  return providerTools(definitions, parsed, context, 'anthropic', (definition, source) => {
    if (definition.input_examples !== undefined) source.inputExamples = definition.input_examples
    return { description: definition.description ?? '', parameters: definition.input_schema }
  })
}
