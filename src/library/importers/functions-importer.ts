/**
 * Plain function declarations, the shape most benchmarks and people write tools in:
 * `{name, description, parameters}` with no wrapper. Also read:
 * - `{"functions": [...]}` (OpenAI's legacy `functions` parameter) and `{"tools": [...]}`;
 * - Gemini: `{functionDeclarations: [...]}` (or `function_declarations`), a list of such tool
 *   objects, `{tools: [{functionDeclarations}]}`; `parametersJsonSchema` is read like `parameters`;
 * - Berkeley Function-Calling Leaderboard records `{id, question, function: [...]}`: each record's
 *   functions (the same function in several records gives duplicate ids, see `onDuplicate`);
 * - LangChain tools dumped as JSON: `args_schema` (a JSON Schema) is read like `parameters`, else
 *   `args` (its properties map) becomes `{type: "object", properties: args}`.
 * A record with none of these but another field holding an object schema (`jsonSchema`,
 * `schema`, …) imports with no parameters and a warning naming the field, never silently.
 * @module
 */
import { z } from 'zod'
import { EMPTY_PARAMETERS, type Tool } from '../tool.ts'
import { addWarning, importFailed, sourceOf, type ImportContext } from './import-context.ts'
import { describeValue, nonEmptyString, parseRecord } from './parse-record.ts'
import { shownName } from '../name-characters.ts'

const FunctionSchema = z.looseObject({
  name: nonEmptyString(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  parametersJsonSchema: z.record(z.string(), z.unknown()).nullish(),
  args_schema: z.record(z.string(), z.unknown()).nullish(),
  args: z.record(z.string(), z.unknown()).nullish(),
})

/** Keys under which a record or document lists function declarations. */
const LIST_KEYS = [
  'functionDeclarations',
  'function_declarations',
  'function',
  'functions',
  'tools',
]

/**
 * Imports plain function declarations. id = name, or `namespace.name` when a namespace is given.
 * `source.record` is the top-level record; `source.function` the position inside it when a
 * record holds several (BFCL, Gemini).
 */
export function importFunctions(parsed: unknown, context: ImportContext): Tool[] {
  const tools: Tool[] = []
  for (const [record, item] of topLevelList(parsed, context).entries()) {
    const nested = nestedList(item)
    const declarations = nested ? nested.list : [item]
    for (const [position, declaration] of declarations.entries()) {
      const prefix = nested ? `${nested.key}[${position}].` : ''
      const definition = parseRecord(FunctionSchema, declaration, context, record, prefix)
      const source = sourceOf(context, 'functions', record)
      if (nested) source.function = position
      const namespace = context.namespace
      const tool: Tool = {
        id: namespace === undefined ? definition.name : `${namespace}.${definition.name}`,
        name: definition.name,
        description: definition.description ?? '',
        parameters: parametersOf(definition, context, record),
        source,
      }
      if (namespace !== undefined) tool.namespace = namespace
      tools.push(tool)
    }
  }
  return tools
}

/** The declared parameters, else LangChain's `args_schema` / `args`, else none (see the module note). */
function parametersOf(
  definition: z.infer<typeof FunctionSchema>,
  context: ImportContext,
  record: number,
): Record<string, unknown> {
  const declared =
    definition.parameters ?? definition.parametersJsonSchema ?? definition.args_schema
  if (declared) return declared
  if (definition.args) return { type: 'object', properties: definition.args }
  const unread = Object.entries(definition).find(
    ([key, value]) =>
      !(key in FunctionSchema.shape) &&
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      ((value as Record<string, unknown>).type === 'object' ||
        typeof (value as Record<string, unknown>).properties === 'object'),
  )
  if (unread) {
    addWarning(
      context,
      record,
      `${shownName(definition.name)} has no "parameters"; its field ${shownName(unread[0])} looks like a JSON Schema but is not read (rename it "parameters"), so the tool has no parameters`,
    )
  }
  return { ...EMPTY_PARAMETERS }
}

/** The records: an array (or JSON Lines), or the list inside `{functions | tools | …: [...]}`. */
function topLevelList(parsed: unknown, context: ImportContext): unknown[] {
  if (Array.isArray(parsed)) return parsed
  const nested = nestedList(parsed)
  if (nested) return nested.key === 'tools' || nested.key === 'functions' ? nested.list : [parsed]
  throw importFailed(context, {
    message: `expected an array of functions {name, description, parameters} or {"functions": [...]}, got ${describeValue(parsed)}`,
  })
}

/** A record that is a list of declarations (BFCL record, Gemini tool object), not one itself. */
function nestedList(item: unknown): { key: string; list: unknown[] } | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined
  if ('name' in item && typeof item.name === 'string') return undefined
  for (const key of LIST_KEYS) {
    const list = (item as Record<string, unknown>)[key]
    if (Array.isArray(list)) return { key, list }
  }
  return undefined
}
