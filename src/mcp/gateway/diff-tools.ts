/**
 * What changed between two versions of a tool set, by tool id and `toolContentHash`.
 * @module
 */

export interface ToolDiff {
  added: string[]
  removed: string[]
  /** Same id, different content (description, schema, tags…). */
  changed: string[]
  unchanged: number
}

/** Compares id → content-hash maps (`ToolLibrary.toolHashes`). */
export function diffTools(
  previous: ReadonlyMap<string, string>,
  next: ReadonlyMap<string, string>,
): ToolDiff {
  const diff: ToolDiff = { added: [], removed: [], changed: [], unchanged: 0 }
  for (const [id, hash] of next) {
    const before = previous.get(id)
    if (before === undefined) diff.added.push(id)
    else if (before !== hash) diff.changed.push(id)
    else diff.unchanged += 1
  }
  for (const id of previous.keys()) if (!next.has(id)) diff.removed.push(id)
  return diff
}

export function isEmptyDiff(diff: ToolDiff): boolean {
  return diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0
}
