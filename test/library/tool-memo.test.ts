import { describe, expect, it } from 'vitest'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { ToolMemo } from '../../src/library/tool-memo.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

function jsonLines(tools: readonly Tool[]): Buffer {
  return Buffer.from(tools.map((tool) => `${JSON.stringify(tool)}\n`).join(''))
}

/** A memo that counts its derivations. */
function countingMemo(generation?: number) {
  const derived: string[] = []
  const memo = new ToolMemo((tool) => {
    derived.push(tool.id)
    return { id: tool.id, words: tool.description.split(' ').length }
  }, generation)
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

  it('keeps at most two generations per library: recently used entries stay', () => {
    const { memo, derived } = countingMemo(2)
    const [a, b, c, d] = ids
    memo.get(library, a)
    memo.get(library, b) // current: a b
    memo.get(library, c) // current: c, previous: a b
    memo.get(library, a) // from the previous generation: current c a
    memo.get(library, d) // current: d, previous: c a (b dropped)
    expect(derived).toEqual([a, b, c, d])
    memo.get(library, a)
    memo.get(library, c)
    expect(derived).toEqual([a, b, c, d])
    memo.get(library, b)
    expect(derived).toEqual([a, b, c, d, b])
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

  it('keeps at most two generations by position: recently used entries stay', () => {
    const { memo, derived } = countingMemo(2)
    const at = (position: number) => memo.get(library, ids[position], position)
    const [a, b, c, d] = ids
    at(0)
    at(1) // current: a b
    at(2) // current: c, previous: a b
    at(0) // from the previous generation: current c a
    at(3) // current: d, previous: c a (b dropped)
    expect(derived).toEqual([a, b, c, d])
    at(0)
    at(2)
    expect(derived).toEqual([a, b, c, d])
    at(1)
    expect(derived).toEqual([a, b, c, d, b])
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

  it('keeps at most two generations whichever way entries are asked for', () => {
    const { memo, derived } = countingMemo(2)
    const [a, b, c, d] = ids
    memo.get(library, a)
    memo.get(library, b, 1) // current: a b
    memo.get(library, c) // current: c, previous: a b
    memo.get(library, a, 0) // from the previous generation: current c a
    memo.get(library, d, 3) // current: d, previous: c a (b dropped)
    memo.get(library, a)
    memo.get(library, c, 2)
    expect(derived).toEqual([a, b, c, d])
    memo.get(library, b)
    expect(derived).toEqual([a, b, c, d, b])
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
