/** The JSON-value count the query routes check before parsing a body (server/validate.ts). */
import { describe, expect, it } from 'vitest'
import { countJsonValues } from '../../src/server/validate.ts'

describe('countJsonValues', () => {
  it("counts the , [ and { outside strings, not a string's own", () => {
    expect(countJsonValues('{"a":[1,2,{"b":"x,y[{"}]}')).toBe(5)
    expect(countJsonValues('"just, a [string {"')).toBe(0)
    expect(countJsonValues('3')).toBe(0)
  })

  it('skips escaped quotes inside strings, and only those', () => {
    // ["a\",[",1]: the string is `a",[`.
    expect(countJsonValues(String.raw`["a\",[",1]`)).toBe(2)
    // ["a\\",[1]]: the string is `a\` and ends at the second quote.
    expect(countJsonValues(String.raw`["a\\",[1]]`)).toBe(3)
    // An unterminated string: what comes before it is counted; JSON.parse reports the rest.
    expect(countJsonValues('[1,"abc')).toBe(2)
  })

  it('stops once past the limit', () => {
    expect(countJsonValues(`[${'1,'.repeat(1_000_000)}1]`, 10)).toBe(11)
  })
})
