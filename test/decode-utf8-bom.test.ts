/**
 * `decodeUtf8` (request bodies, `toolsel index -`, `select -`) drops a byte-order mark, so the
 * check that the text fits one string must not count it: a text of exactly MAX_TEXT_CHARS
 * characters after a BOM was refused as MAX_TEXT_CHARS + 1 (TextTooLongError, a 413 upload).
 */
import { describe, expect, it } from 'vitest'
import { decodeUtf8, MAX_TEXT_CHARS, TextTooLongError } from '../src/read-text-file.ts'

const BOM = [0xef, 0xbb, 0xbf]

describe('decodeUtf8 at the one-string limit, after a byte-order mark', () => {
  it('takes exactly MAX_TEXT_CHARS characters after the BOM and refuses one more', () => {
    const bytes = Buffer.alloc(BOM.length + MAX_TEXT_CHARS + 1, 'a')
    bytes.set(BOM)
    const atLimit = bytes.subarray(0, BOM.length + MAX_TEXT_CHARS)
    const text = decodeUtf8(atLimit)
    expect(text.length).toBe(MAX_TEXT_CHARS)
    expect(text.charCodeAt(0)).toBe(0x61)
    let refused: unknown
    try {
      decodeUtf8(bytes)
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(TextTooLongError)
    expect((refused as TextTooLongError).chars).toBe(MAX_TEXT_CHARS + 1)
  }, 120_000)
})
