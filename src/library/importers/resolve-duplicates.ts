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
  const nextSuffix = new Map<string, number>()
  const content = memoContent()
  /** Per group: each tool's first position, and each content's first position and count. */
  const groupFacts = new Map<Tool[], GroupFacts>()
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
    let facts = groupFacts.get(group)
    if (facts === undefined) groupFacts.set(group, (facts = factsOf(group, content)))
    const key = content(tool)
    // Another tool of the group with this tool's content: anywhere in it for `last`, else before
    // this tool's first position (all of them other tools).
    const sameAsEarlier =
      mode === 'last'
        ? facts.contentCount.get(key)! > facts.occurrences.get(tool)!
        : facts.firstOfContent.get(key)! < facts.firstPosition.get(tool)!
    if (mode !== 'rename' || sameAsEarlier) {
      report(tool, content(kept) === key || sameAsEarlier ? 'identical' : 'dropped')
      continue
    }
    const renamed = withFreeId(tool, taken, nextSuffix)
    report(tool, 'renamed', renamed.id)
    result.push(renamed)
  }
  return { tools: result, duplicates }
}

interface GroupFacts {
  firstPosition: Map<Tool, number>
  occurrences: Map<Tool, number>
  firstOfContent: Map<string, number>
  contentCount: Map<string, number>
}

/**
 * What the duplicate checks ask of a group, in one pass: comparing each tool with every earlier
 * one (and looking its position up) was quadratic in the group (10,000 copies of one id: minutes).
 */
function factsOf(group: readonly Tool[], content: (tool: Tool) => string): GroupFacts {
  const facts: GroupFacts = {
    firstPosition: new Map(),
    occurrences: new Map(),
    firstOfContent: new Map(),
    contentCount: new Map(),
  }
  group.forEach((tool, position) => {
    const key = content(tool)
    if (!facts.firstPosition.has(tool)) facts.firstPosition.set(tool, position)
    facts.occurrences.set(tool, (facts.occurrences.get(tool) ?? 0) + 1)
    if (!facts.firstOfContent.has(key)) facts.firstOfContent.set(key, position)
    facts.contentCount.set(key, (facts.contentCount.get(key) ?? 0) + 1)
  })
  return facts
}

/** The tool with the first free `<id>_N` (N ≥ 2); its name gets the same suffix when the id ends with it. */
function withFreeId(tool: Tool, taken: Set<string>, nextSuffix: Map<string, number>): Tool {
  // `taken` only grows: the search for this id goes on where its last one stopped.
  let suffix = nextSuffix.get(tool.id) ?? 2
  while (taken.has(`${tool.id}_${suffix}`)) suffix += 1
  nextSuffix.set(tool.id, suffix + 1)
  const id = `${tool.id}_${suffix}`
  taken.add(id)
  const nameInId = tool.id === tool.name || tool.id.endsWith(`.${tool.name}`)
  return { ...tool, id, name: nameInId ? `${tool.name}_${suffix}` : tool.name }
}

/** A tool's definition as text (two tools are the same when these are equal), made once per tool. */
function memoContent(): (tool: Tool) => string {
  const made = new Map<Tool, string>()
  return (tool) => {
    let text = made.get(tool)
    if (text === undefined) {
      const { name, description, parameters, namespace, tags } = tool
      text = stableStringify({ name, description, parameters, namespace, tags })
      made.set(tool, text)
    }
    return text
  }
}
