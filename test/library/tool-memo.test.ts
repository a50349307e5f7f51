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

  it('throws UNKNOWN_TOOL for an id the library lacks', () => {
    const { memo } = countingMemo()
    expect(() => memo.get(library, 'nope')).toThrow(/Library "lazy" has no tool "nope"/)
  })
})
