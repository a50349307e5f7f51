/**
 * Plain function declarations, the shape most benchmarks and people write tools in:
 * `{name, description, parameters}` with no wrapper. Also read:
 * - `{"functions": [...]}` (OpenAI's legacy `functions` parameter) and `{"tools": [...]}`;
 * - Gemini: `{functionDeclarations: [...]}` (or `function_declarations`), a list of such tool
 *   objects, `{tools: [{functionDeclarations}]}`; `parametersJsonSchema` is read like `parameters`;
 * - Berkeley Function-Calling Leaderboard records `{id, question, function: [...]}`: each record's
 *   functions (the same function in several records gives duplicate ids, see `onDuplicate`).
 * @module
 */
import { z } from 'zod'
import { EMPTY_PARAMETERS, type Tool } from '../tool.ts'
import { importFailed, sourceOf, type ImportContext } from './import-context.ts'
import { describeValue, nonEmptyString, parseRecord } from './parse-record.ts'

const FunctionSchema = z.looseObject({
  name: nonEmptyString(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  parametersJsonSchema: z.record(z.string(), z.unknown()).nullish(),
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
        parameters: definition.parameters ??
          definition.parametersJsonSchema ?? { ...EMPTY_PARAMETERS },
        source,
      }
      if (namespace !== undefined) tool.namespace = namespace
      tools.push(tool)
    }
  }
  return tools
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
