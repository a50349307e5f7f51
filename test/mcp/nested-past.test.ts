/**
 * nestedPast, the depth check of every /mcp body and `mcp --stdio` line (MAX_MESSAGE_DEPTH):
 * its answer. Its cost next to the parse it follows is a bench, not a test:
 * `node --import tsx bench/nested-past-cost.ts` (bench/README round 37, hard23).
 */
import { describe, expect, it } from 'vitest'
import { nestedPast } from '../../src/mcp/jsonrpc-answers.ts'

const nest = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown

describe('nestedPast', () => {
  it('counts arrays and objects, not the values in them', () => {
    for (const value of [null, 1, 'x', true]) expect(nestedPast(value, 0)).toBe(false)
    expect(nestedPast([1], 0)).toBe(true)
    expect(nestedPast([1], 1)).toBe(false)
    expect(nestedPast({}, 1)).toBe(false)
    expect(nestedPast([{}], 1)).toBe(true)
    expect(nestedPast({ a: [1, { b: null }], c: 'd' }, 3)).toBe(false)
    expect(nestedPast({ a: [1, { b: [] }], c: 'd' }, 3)).toBe(true)
    expect(nestedPast(nest(256), 256)).toBe(false)
    expect(nestedPast(nest(257), 256)).toBe(true)
    expect(nestedPast([[0, 'x'], nest(300)], 256)).toBe(true)
    expect(nestedPast(nest(200_000), 256)).toBe(true)
  })
})
