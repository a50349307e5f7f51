/**
 * nestedPast, the depth check of every /mcp body and `mcp --stdio` line (MAX_MESSAGE_DEPTH):
 * its answer, and its cost next to the parse it follows.
 */
import { describe, expect, it } from 'vitest'
import { nestedPast } from '../../src/mcp/jsonrpc-answers.ts'

const nest = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown

/** The median of 5 timings of `run`, in ms, after one run to warm it. */
function medianMs(run: () => unknown): number {
  run()
  const times = Array.from({ length: 5 }, () => {
    const start = performance.now()
    run()
    return performance.now() - start
  })
  return times.sort((a, b) => a - b)[2]
}

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

  // Round 37's first walk pushed a pair for every value, numbers too: for a body of numbers it
  // cost several times the JSON.parse before it (~6x for 99,000; 2.3 s for an 8 MiB stdio line).
  it('costs less than parsing the text did, for a message of a million numbers', () => {
    const text = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[${'0,'.repeat(999_999)}0]}}`
    const value = JSON.parse(text) as unknown
    const parse = medianMs(() => JSON.parse(text))
    const walk = medianMs(() => nestedPast(value, 256))
    expect(walk, `walk ${walk.toFixed(1)} ms, parse ${parse.toFixed(1)} ms`).toBeLessThan(parse)
  })
})
