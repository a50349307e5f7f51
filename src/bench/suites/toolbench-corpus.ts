/**
 * Maps ToolBench gold pairs onto a tool corpus (e.g. COLT's 1,419-API G3 `corpus.jsonl`): by the
 * exact `tool::api` id first, else by ToolBench-standardized names, because releases of ToolBench
 * spell some names differently (data README sections 1.3-1.4).
 * @module
 */
import { toolbenchApiId } from '../../library/importers/index.ts'
import type { Tool } from '../../library/tool.ts'
import { standardizedApiKey } from './standardize-toolbench-name.ts'

export interface ToolbenchCorpusMap {
  /** The corpus tool id of a gold pair, or the raw `tool::api` id when it has none. */
  resolve(toolName: string, apiName: string): string
  /** Pairs resolved through standardized names so far. */
  readonly byStandardizedName: number
}

export function createToolbenchCorpusMap(tools: readonly Tool[]): ToolbenchCorpusMap {
  const ids = new Set(tools.map((tool) => tool.id))
  const standardized = new Map<string, string>()
  for (const tool of tools) {
    // Corpus tools carry their ToolBench tool name as namespace and API name as name.
    const key = standardizedApiKey(tool.namespace ?? '', tool.name)
    if (!standardized.has(key)) standardized.set(key, tool.id)
  }
  let byStandardizedName = 0
  return {
    resolve(toolName, apiName) {
      const id = toolbenchApiId(toolName, apiName)
      if (ids.has(id)) return id
      const mapped = standardized.get(standardizedApiKey(toolName, apiName))
      if (mapped === undefined) return id
      byStandardizedName += 1
      return mapped
    },
    get byStandardizedName() {
      return byStandardizedName
    },
  }
}
