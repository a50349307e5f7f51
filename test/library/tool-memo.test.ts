import { describe, expect, it } from 'vitest'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { ToolMemo } from '../../src/library/tool-memo.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

function jsonLines(tools: readonly Tool[]): Buffer {
  return Buffer.from(tools.map((tool) => `${JSON.stringify(tool)}\n`).join(''))
}

/** A memo that counts its derivations. */
function countingMemo(capacity?: number) {
  const derived: string[] = []
  const memo = new ToolMemo((tool) => {
    derived.push(tool.id)
    return { id: tool.id, words: tool.description.split(' ').length }
  }, capacity)
  return { memo, derived }
}

describe('ToolMemo', () => {
  const library = ToolLibrary.fromJsonLines('lazy', jsonLines(SAMPLE_TOOLS))
  const ids = library.ids

  it('derives a tool once per library and returns the same value after', () => {
    const { memo, derived } = countingMemo()
    const first = ids.map((id) => memo.get(library, id))
    const again = ids.map((id) => memo.get(library, id))
    expect(derived).toEqual(ids)
    again.forEach((value, index) => expect(value).toBe(first[index]))
    expect(first[0]).toEqual({
      id: ids[0],
      words: library.require(ids[0]).description.split(' ').length,
    })
  })

  it('derives again for another version of the library, never serving the old value', () => {
    const { memo, derived } = countingMemo()
    const changed = SAMPLE_TOOLS.map((tool, index) =>
      index === 0 ? { ...tool, description: `${tool.description} now with more words` } : tool,
    )
    const next = ToolLibrary.fromJsonLines('lazy', jsonLines(changed))
    const before = memo.get(library, ids[0])
    const after = memo.get(next, ids[0])
    expect(derived).toEqual([ids[0], ids[0]])
    expect(after.words).toBe(before.words + 4)
  })

  it('finds an entry by position, derived once, and ignores a position that does not hold the id', () => {
    const { memo, derived } = countingMemo()
    const first = ids.map((id, position) => memo.get(library, id, position))
    const again = ids.map((id, position) => memo.get(library, id, position))
    expect(derived).toEqual(ids)
    again.forEach((value, index) => expect(value).toBe(first[index]))
    first.forEach((value, position) => expect(value.id).toBe(ids[position]))
    // Wrong hints: another tool's position, out of range, negative, not a whole number.
    for (const hint of [1, ids.length, ids.length + 5000, -1, 0.5, Number.NaN]) {
      expect(memo.get(library, ids[0], hint).id).toBe(ids[0])
    }
    expect(memo.get(library, ids[1], 1)).toBe(first[1])
    const fresh = countingMemo().memo
    for (const hint of [1.5, 2.5, -1, -2, ids.length])
      expect(fresh.get(library, ids[1], hint).id).toBe(ids[1])
    expect(() => memo.get(library, 'nope', 0)).toThrow(/Library "lazy" has no tool "nope"/)
  })

  it('keeps every tool until full, then one miss in 8, in the place of the one kept longest', () => {
    const { memo, derived } = countingMemo(2)
    const [a, b, c, d] = ids
    memo.get(library, a)
    memo.get(library, b, 1) // kept: a b (full)
    expect(memo.size(library)).toBe(2)
    // Seven misses are derived for their request only: asked again, each is derived again.
    for (let turn = 0; turn < 7; turn += 1) memo.get(library, turn % 2 === 0 ? c : d)
    expect(derived).toEqual([a, b, c, d, c, d, c, d, c])
    memo.get(library, a, 0)
    memo.get(library, b)
    expect(derived).toHaveLength(9) // hits: nothing derived, nothing moved
    memo.get(library, d, 3) // the eighth miss: kept in a's place
    expect(memo.size(library)).toBe(2)
    const kept = memo.get(library, d)
    expect(memo.get(library, d, 3)).toBe(kept)
    memo.get(library, b, 1)
    expect(derived).toHaveLength(10)
    memo.get(library, a) // a was replaced: derived again (a miss, not kept)
    expect(derived).toEqual([a, b, c, d, c, d, c, d, c, d, a])
  })

  it('does not churn: past its capacity the tools it keeps stay, whatever else is asked for', () => {
    const { memo, derived } = countingMemo(4)
    const first = ids.slice(0, 4).map((id, position) => memo.get(library, id, position))
    // Asked in turn over every tool (more than it keeps), four times: at most one miss in 8
    // replaces a kept tool; the two generations' policy derived nearly every lookup again.
    for (let pass = 0; pass < 4; pass += 1)
      ids.forEach((id, position) => memo.get(library, id, position))
    expect(memo.size(library)).toBe(4)
    const missed = derived.length - 4
    // Each pass misses the tools not kept (of 16 misses in the four passes, 2 are kept).
    expect(missed).toBeLessThanOrEqual(4 * (ids.length - 4) + 2)
    expect(missed).toBeGreaterThanOrEqual(4 * (ids.length - 4))
    const stillKept = first.filter(
      (value, position) => memo.get(library, ids[position], position) === value,
    )
    expect(stillKept.length).toBeGreaterThanOrEqual(2)
  })

  it('keeps one entry per tool whether it is asked for by id or by position', () => {
    const { memo, derived } = countingMemo()
    const byId = memo.get(library, ids[2])
    expect(memo.get(library, ids[2], 2)).toBe(byId)
    const byPosition = memo.get(library, ids[3], 3)
    expect(memo.get(library, ids[3])).toBe(byPosition)
    // A wrong hint finds the entry at the tool's own position.
    expect(memo.get(library, ids[3], 0)).toBe(byPosition)
    expect(derived).toEqual([ids[2], ids[3]])
  })

  it('serves a position by the tools of the library version asked for', () => {
    const { memo } = countingMemo()
    const reordered = ToolLibrary.fromJsonLines('lazy', jsonLines([...SAMPLE_TOOLS].reverse()))
    const last = ids.length - 1
    expect(memo.get(library, ids[0], 0).id).toBe(ids[0])
    expect(memo.get(reordered, ids[last], 0).id).toBe(ids[last])
    expect(memo.get(reordered, ids[0], 0).id).toBe(ids[0])
    expect(memo.get(reordered, ids[0], last)).toEqual(memo.get(reordered, ids[0]))
  })

  it('throws UNKNOWN_TOOL for an id the library lacks', () => {
    const { memo } = countingMemo()
    expect(() => memo.get(library, 'nope')).toThrow(/Library "lazy" has no tool "nope"/)
  })
})
