/**
 * OpenAI tool definitions: the Chat Completions shape `{type: "function", function: {name,
 * description, parameters}}` and the flat Responses API shape `{type: "function", name, …}`.
 * @module
 */
import { z } from 'zod'
import { EMPTY_PARAMETERS, type Tool } from '../tool.ts'
import { addWarning, type ImportContext } from './import-context.ts'
import { nonEmptyString, parseRecord } from './parse-record.ts'
import { providerTools } from './provider-names.ts'
import { toolList } from './tool-list.ts'
import { shownName } from '../name-characters.ts'

const FunctionSchema = z.looseObject({
  name: nonEmptyString(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
})

const ChatToolSchema = z.looseObject({ type: z.literal('function'), function: FunctionSchema })
const ResponsesToolSchema = FunctionSchema.extend({ type: z.literal('function') })
const TypedSchema = z.looseObject({
  type: z.string({ error: 'expected a string such as "function"' }),
})

/**
 * Imports OpenAI function tools. id = name, or `namespace.name` when a namespace is given; names
 * toolsel wrote (`sms--send_sms`) are read back as their ids (provider-names.ts).
 * Built-in tools (`web_search`, `file_search`, …) are not functions an agent selects by
 * description, so they are skipped with a warning.
 */
export function importOpenai(parsed: unknown, context: ImportContext): Tool[] {
  const definitions: { definition: z.infer<typeof FunctionSchema>; record: number }[] = []
  for (const [record, item] of toolList(parsed, context, 'openai').entries()) {
    const { type } = parseRecord(TypedSchema, item, context, record)
    if (type !== 'function') {
      addWarning(
        context,
        record,
        `skipped a built-in ${shownName(type)} tool (only functions are imported)`,
      )
      continue
    }
    const definition =
      typeof item === 'object' && item !== null && 'function' in item
        ? parseRecord(ChatToolSchema, item, context, record).function
        : parseRecord(ResponsesToolSchema, item, context, record)
    definitions.push({ definition, record })
  }
  return providerTools(definitions, parsed, context, 'openai', (definition, source) => {
    if (typeof definition.strict === 'boolean') source.strict = definition.strict
    return {
      description: definition.description ?? '',
      parameters: definition.parameters ?? { ...EMPTY_PARAMETERS },
    }
  })
}
