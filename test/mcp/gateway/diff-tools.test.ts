import { describe, expect, it } from 'vitest'
import { diffTools, isEmptyDiff } from '../../../src/mcp/gateway/diff-tools.ts'

describe('diffTools', () => {
  it('sorts ids into added, removed, changed (by content hash) and unchanged', () => {
    const before = new Map([
      ['a.x', 'h1'],
      ['a.y', 'h2'],
      ['a.z', 'h3'],
    ])
    const after = new Map([
      ['a.x', 'h1'],
      ['a.y', 'h2-new'],
      ['a.w', 'h4'],
    ])
    expect(diffTools(before, after)).toEqual({
      added: ['a.w'],
      removed: ['a.z'],
      changed: ['a.y'],
      unchanged: 1,
    })
  })

  it('is empty for identical lists, whatever their order', () => {
    const diff = diffTools(
      new Map([
        ['b', '2'],
        ['a', '1'],
      ]),
      new Map([
        ['a', '1'],
        ['b', '2'],
      ]),
    )
    expect(isEmptyDiff(diff)).toBe(true)
    expect(diff.unchanged).toBe(2)
  })
})
