import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  findJsonSyntaxError,
  lineAndColumn,
} from '../../../src/library/importers/find-json-syntax-error.ts'

describe('findJsonSyntaxError', () => {
  it.each([
    ['{"a": }', 1, 7, 'unexpected "}", expected a value'],
    ['[1, 2,]', 1, 7, 'unexpected "]", expected a value'],
    ['{"a": 1,\n "b": x}', 2, 7, 'unexpected "x", expected a value'],
    ['{"a": 1 "b": 2}', 1, 9, `unexpected "\\"", expected ',' or '}'`],
    ["{'a': 1}", 1, 2, 'unexpected "\'", expected a property name'],
    ['["a\nb"]', 1, 4, 'unescaped control character'],
    ['["\\x"]', 1, 3, 'invalid escape sequence'],
    ['[1] [2]', 1, 5, 'unexpected "[" after the end of the JSON value'],
    ['{"a": [1, 2', 1, 12, 'unexpected end of input'],
    ['"abc', 1, 5, 'unterminated string'],
    ['', 1, 1, 'unexpected end of input, expected a value'],
  ])('locates the error in %j at line %i, column %i', (text, line, column, reason) => {
    const error = findJsonSyntaxError(text)
    expect(error).toMatchObject({ line, column })
    expect(error?.reason).toContain(reason)
  })

  it('finds nothing wrong in any JSON that JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        expect(
          findJsonSyntaxError(JSON.stringify(value, null, pretty ? 2 : undefined)),
        ).toBeUndefined()
      }),
    )
  })

  it('agrees with JSON.parse on whether arbitrary text is valid', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'{}[]":,0123-.eE tfrunl\n\\ab') }),
        (text) => {
          let valid = true
          try {
            JSON.parse(text)
          } catch {
            valid = false
          }
          const error = findJsonSyntaxError(text)
          expect(error === undefined).toBe(valid)
          if (error) expect(error.offset).toBeLessThanOrEqual(text.length)
        },
      ),
      { numRuns: 2000 },
    )
  })
})

describe('lineAndColumn', () => {
  it('counts 1-based lines and columns', () => {
    expect(lineAndColumn('ab\ncd\n', 0)).toEqual({ line: 1, column: 1 })
    expect(lineAndColumn('ab\ncd\n', 4)).toEqual({ line: 2, column: 2 })
    expect(lineAndColumn('ab\ncd\n', 6)).toEqual({ line: 3, column: 1 })
  })
})
