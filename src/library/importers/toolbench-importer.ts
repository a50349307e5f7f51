/**
 * ToolBench query records (StableToolBench `solvable_queries`, ToolBench `data_example`,
 * ToolPlanner `test.json`): the library is the union of every record's `api_list`.
 * See shared/data/README.md section 1, "Common ToolBench query record".
 * @module
 */
import { z } from 'zod'
import type { Tool } from '../tool.ts'
import {
  addWarning,
  assertTagRoom,
  importFailed,
  recordLabel,
  sourceOf,
  type ImportContext,
} from './import-context.ts'
import { describeValue, nonEmptyString, parseRecord } from './parse-record.ts'
import {
  ToolbenchParameterSchema,
  toolbenchParameters,
  warnParameterProblems,
} from './toolbench-parameters.ts'
import { shownName } from '../name-characters.ts'

const ApiSchema = z.looseObject({
  category_name: z.string().nullish(),
  tool_name: nonEmptyString(),
  api_name: nonEmptyString(),
  api_description: z.string().nullish(),
  required_parameters: z.array(ToolbenchParameterSchema).default([]),
  optional_parameters: z.array(ToolbenchParameterSchema).default([]),
  method: z.string().optional(),
  template_response: z.unknown().optional(),
})

const QueryRecordSchema = z.looseObject({ api_list: z.array(ApiSchema) })

type Api = z.output<typeof ApiSchema>

/**
 * ToolBench identifies an API by (tool_name, api_name); category is not part of the identity.
 * Names are used verbatim (some carry trailing spaces), so ids match `relevant APIs` exactly.
 */
export function toolbenchApiId(toolName: string, apiName: string): string {
  return `${toolName}::${apiName}`
}

/**
 * Imports the union of all `api_list` entries, id `tool_name::api_name`, namespace `tool_name`.
 * The same API in several records is one tool by definition of the format: the first
 * definition is kept, every category becomes a tag, and a definition that differs from the
 * first one is reported as a warning.
 */
export function importToolbench(parsed: unknown, context: ImportContext): Tool[] {
  if (!Array.isArray(parsed)) {
    throw importFailed(context, {
      message: `expected a JSON array (or JSON Lines) of ToolBench query records, got ${describeValue(parsed)}`,
    })
  }
  if (context.namespace !== undefined) {
    addWarning(
      context,
      undefined,
      'namespace option ignored: ToolBench APIs are namespaced by tool_name',
    )
  }
  const tools = new Map<string, { tool: Tool; api: Api }>()
  for (const [record, item] of parsed.entries()) {
    const { api_list: apis } = parseRecord(QueryRecordSchema, item, context, record)
    for (const api of apis) {
      const id = toolbenchApiId(api.tool_name, api.api_name)
      const known = tools.get(id)
      if (known) {
        mergeDuplicate(known, api, record, context)
        continue
      }
      const parameters = toolbenchParameters(api.required_parameters, api.optional_parameters)
      warnParameterProblems(context, record, id, parameters)
      tools.set(id, { tool: toolFromApi(api, id, parameters.schema, record, context), api })
    }
  }
  return [...tools.values()].map(({ tool }) => tool)
}

function toolFromApi(
  api: Api,
  id: string,
  parameters: Tool['parameters'],
  record: number,
  context: ImportContext,
): Tool {
  const source = sourceOf(context, 'toolbench', record)
  if (api.category_name) source.category = api.category_name
  if (api.method !== undefined) source.method = api.method
  if (api.template_response !== undefined) source.templateResponse = api.template_response
  return {
    id,
    name: api.api_name,
    description: api.api_description ?? '',
    parameters,
    namespace: api.tool_name,
    tags: api.category_name ? [api.category_name] : [],
    source,
  }
}

function mergeDuplicate(
  known: { tool: Tool; api: Api },
  api: Api,
  record: number,
  context: ImportContext,
): void {
  const tags = known.tool.tags ?? []
  if (api.category_name && !tags.includes(api.category_name)) {
    assertTagRoom(context, record, known.tool)
    tags.push(api.category_name)
  }
  const differences: string[] = []
  if ((api.api_description ?? '') !== (known.api.api_description ?? '')) {
    differences.push('description')
  }
  const parameterLists = (entry: Api) =>
    JSON.stringify([entry.required_parameters, entry.optional_parameters])
  if (parameterLists(api) !== parameterLists(known.api)) differences.push('parameters')
  if (differences.length > 0) {
    const first = recordLabel(context, Number(known.tool.source?.record))
    addWarning(
      context,
      record,
      `${shownName(known.tool.id)} differs from its first definition (${first}) in ${differences.join(' and ')}; kept the first`,
    )
  }
}
