import { describe, expect, it } from 'vitest'
import { errorFirstLine, errorMessage } from '../src/errors.ts'

describe('errorFirstLine', () => {
  it('keeps the first line of a thrown string with a newline', () => {
    let thrown: unknown
    try {
      throw 'model.onnx: protobuf parsing failed\n    at Session (native)'
    } catch (error) {
      thrown = error
    }
    expect(errorMessage(thrown)).toBe(
      'model.onnx: protobuf parsing failed\n    at Session (native)',
    )
    expect(errorFirstLine(thrown)).toBe('model.onnx: protobuf parsing failed')
  })

  it('keeps the first line of an Error with a multi-line message', () => {
    const error = new Error('Load model failed\nstack line 1\r\nstack line 2')
    expect(errorFirstLine(error)).toBe('Load model failed')
    expect(errorFirstLine(new TypeError('one line'))).toBe('one line')
    expect(errorFirstLine(new Error(''))).toBe('')
  })

  it('ends the first line before a CRLF or a lone CR (no carriage return left in a one-line message)', () => {
    expect(errorFirstLine(new Error('Load model failed\r\n    at Session (native)'))).toBe(
      'Load model failed',
    )
    expect(errorFirstLine('ort status 6\rdetails')).toBe('ort status 6')
    expect(errorFirstLine('no line break at all')).toBe('no line break at all')
  })

  it('gives String() of a non-Error object, first line only', () => {
    expect(errorFirstLine({ code: 3 })).toBe('[object Object]')
    const withToString = { toString: () => 'ort status 6\ndetails' }
    expect(errorFirstLine(withToString)).toBe('ort status 6')
    expect(errorFirstLine(undefined)).toBe('undefined')
    expect(errorFirstLine(null)).toBe('null')
    expect(errorFirstLine(42)).toBe('42')
  })
})
