/**
 * ToolBench query records (StableToolBench `solvable_queries`, ToolBench `data_example`,
 * ToolPlanner `G3_clear/test.json`): `{query_id, query, api_list, "relevant APIs"}`.
 * See shared/data/README.md section 1, "Common ToolBench query record".
 * @module
 */
import { z } from 'zod'
import { toolbenchApiId } from '../../library/importers/index.ts'
import { badRecord, unique } from './read-data-file.ts'

const ApiRefSchema = z.looseObject({ tool_name: z.string(), api_name: z.string() })

const RecordSchema = z.looseObject({
  query_id: z.union([z.number(), z.string()]).optional(),
  query: z.string(),
  api_list: z.array(ApiRefSchema),
  'relevant APIs': z.array(z.tuple([z.string(), z.string()]).rest(z.unknown())),
})

export interface ToolbenchQuery {
  /** `query_id`, or the record position when there is none. */
  id: string
  query: string
  /** Gold `[tool_name, api_name]` pairs, de-duplicated (README: two test.json records repeat one). */
  goldPairs: Array<[string, string]>
  /** Ids (`tool::api`) of the record's own `api_list`, de-duplicated. */
  apiIds: string[]
  /** The record as read, for importing its `api_list` on its own (closed mode). */
  record: unknown
}

export function parseToolbenchQueries(records: readonly unknown[], file: string): ToolbenchQuery[] {
  return records.map((item, position) => {
    const parsed = RecordSchema.safeParse(item)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      throw badRecord(file, position, `field "${issue.path.join('.')}": ${issue.message}`)
    }
    const { query_id: queryId, query, api_list: apis } = parsed.data
    const seen = new Set<string>()
    const goldPairs: Array<[string, string]> = []
    for (const [toolName, apiName] of parsed.data['relevant APIs']) {
      const id = toolbenchApiId(toolName, apiName)
      if (seen.has(id)) continue
      seen.add(id)
      goldPairs.push([toolName, apiName])
    }
    return {
      id: queryId === undefined ? String(position) : String(queryId),
      query,
      goldPairs,
      apiIds: unique(apis.map((api) => toolbenchApiId(api.tool_name, api.api_name))),
      record: item,
    }
  })
}
