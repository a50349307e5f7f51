/**
 * Tools that share an id: an error (default), or renamed / dropped as the `onDuplicate` option
 * says, each case listed for the import summary. Formats that define a merge (toolbench,
 * beir-corpus) merge before this step.
 * @module
 */
import type { ToolselError } from '../../errors.ts'
import { stableStringify, type Tool } from '../tool.ts'
import type { DuplicateResolution, OnDuplicate } from './import-formats.ts'

export interface ResolvedDuplicates {
  tools: Tool[]
  duplicates: DuplicateResolution[]
}

/**
 * @param fileOf the file a tool came from, for the summary.
 * @param duplicateError the DUPLICATE_TOOL_ID error for mode `error`, naming both tools.
 */
export function resolveDuplicates(
  tools: readonly Tool[],
  mode: OnDuplicate,
  fileOf: (tool: Tool) => string,
  duplicateError: (id: string, first: Tool, second: Tool) => ToolselError,
): ResolvedDuplicates {
  const byId = new Map<string, Tool[]>()
  for (const tool of tools) {
    const group = byId.get(tool.id)
    if (group === undefined) byId.set(tool.id, [tool])
    else if (mode === 'error') throw duplicateError(tool.id, group[0], tool)
    else group.push(tool)
  }
  if (byId.size === tools.length) return { tools: [...tools], duplicates: [] }

  const duplicates: DuplicateResolution[] = []
  const report = (tool: Tool, action: DuplicateResolution['action'], to?: string) => {
    const entry: DuplicateResolution = { id: tool.id, action, file: fileOf(tool) }
    if (typeof tool.source?.record === 'number') entry.record = tool.source.record
    if (to !== undefined) entry.to = to
    duplicates.push(entry)
  }
  const taken = new Set(byId.keys())
  const result: Tool[] = []
  for (const tool of tools) {
    const group = byId.get(tool.id)!
    if (group.length === 1) {
      result.push(tool)
      continue
    }
    const kept = mode === 'last' ? group[group.length - 1] : group[0]
    if (tool === kept) {
      result.push(tool)
      continue
    }
    const position = group.indexOf(tool)
    const sameAsEarlier = group
      .slice(0, mode === 'last' ? group.length : position)
      .some((other) => other !== tool && sameDefinition(other, tool))
    if (mode !== 'rename' || sameAsEarlier) {
      report(tool, sameDefinition(kept, tool) || sameAsEarlier ? 'identical' : 'dropped')
      continue
    }
    const renamed = withFreeId(tool, taken)
    report(tool, 'renamed', renamed.id)
    result.push(renamed)
  }
  return { tools: result, duplicates }
}

/** The tool with the first free `<id>_N` (N ≥ 2); its name gets the same suffix when the id ends with it. */
function withFreeId(tool: Tool, taken: Set<string>): Tool {
  let suffix = 2
  while (taken.has(`${tool.id}_${suffix}`)) suffix += 1
  const id = `${tool.id}_${suffix}`
  taken.add(id)
  const nameInId = tool.id === tool.name || tool.id.endsWith(`.${tool.name}`)
  return { ...tool, id, name: nameInId ? `${tool.name}_${suffix}` : tool.name }
}

function sameDefinition(a: Tool, b: Tool): boolean {
  const content = ({ name, description, parameters, namespace, tags }: Tool) =>
    stableStringify({ name, description, parameters, namespace, tags })
  return content(a) === content(b)
}
