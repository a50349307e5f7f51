/**
 * ToolPlanner's ToolBench-G3 training substitute (data README section 1.4): the same 5,000 G3
 * queries in `api_instruction_5000.json` and `tool_instruction_5000.json` (JSON Lines despite the
 * name), joined on `path` (which starts with the ToolBench query id). Gold = zip(Tool list, API
 * list) of the tag lines, in ToolBench-standardized names; the text is `original_query`.
 *
 * The 5,000 include every ToolPlanner G3_clear test query and 9 StableToolBench G3 test queries:
 * `exclude.ids` and `exclude.texts` (the test files' query ids and texts) take them out.
 * @module
 */
import { normalizeQueryText } from '../../train/train-split.ts'
import { readJsonRecords } from './read-data-file.ts'

export interface ToolplannerExample {
  /** ToolBench query id (the number `path` starts with). */
  id: string
  instruction: string
  /** Gold `[tool, api]` pairs in standardized names, de-duplicated. */
  pairs: Array<[string, string]>
}

export interface ToolplannerTraining {
  examples: ToolplannerExample[]
  /** Records read from the API file. */
  records: number
  /** Records left out because their id or text is a test query's. */
  excluded: number
  /** Records without a usable tag line, text or matching tool record. */
  unusable: number
}

interface Record {
  query?: unknown
  original_query?: unknown
  path?: unknown
}

export async function loadToolplannerTraining(
  files: { api: string; tool: string },
  exclude: { ids: ReadonlySet<string>; texts: ReadonlySet<string> },
): Promise<ToolplannerTraining> {
  const apiRecords = (await readJsonRecords(files.api)) as Record[]
  const toolRecords = (await readJsonRecords(files.tool)) as Record[]
  const toolsByPath = new Map<string, string[]>()
  for (const record of toolRecords) {
    const tools = tagList(record.query, '\nTool: ')
    if (typeof record.path === 'string' && tools) toolsByPath.set(record.path, tools)
  }
  const examples: ToolplannerExample[] = []
  let excluded = 0
  let unusable = 0
  for (const record of apiRecords) {
    const apis = tagList(record.query, '\nAPI: ')
    const path = typeof record.path === 'string' ? record.path : undefined
    const tools = path === undefined ? undefined : toolsByPath.get(path)
    const instruction = typeof record.original_query === 'string' ? record.original_query : ''
    const id = path && /^\d+/.exec(path)?.[0]
    if (!apis || !tools || tools.length !== apis.length || !id || instruction.trim() === '') {
      unusable += 1
      continue
    }
    if (exclude.ids.has(id) || exclude.texts.has(normalizeQueryText(instruction))) {
      excluded += 1
      continue
    }
    const seen = new Set<string>()
    const pairs: Array<[string, string]> = []
    tools.forEach((tool, index) => {
      const key = `${tool}::${apis[index]}`
      if (seen.has(key)) return
      seen.add(key)
      pairs.push([tool, apis[index]])
    })
    examples.push({ id, instruction, pairs })
  }
  return { examples, records: apiRecords.length, excluded, unusable }
}

/** `"<sentence>\nAPI: a, b, c."` → `[a, b, c]`. */
function tagList(query: unknown, tag: string): string[] | undefined {
  if (typeof query !== 'string') return undefined
  const at = query.lastIndexOf(tag)
  if (at < 0) return undefined
  const list = query
    .slice(at + tag.length)
    .trim()
    .replace(/\.$/, '')
  return list.length === 0 ? undefined : list.split(', ')
}
