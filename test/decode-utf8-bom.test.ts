/**
 * `decodeUtf8` (request bodies, `toolsel index -`, `select -`) drops a byte-order mark, so the
 * check that the text fits one string must not count it: a text of exactly MAX_TEXT_CHARS
 * characters after a BOM was refused as MAX_TEXT_CHARS + 1 (TextTooLongError, a 413 upload).
 *
 * The count is checked at a limit passed in (`maxChars`, 4 KiB): the same code as at
 * MAX_TEXT_CHARS, without the 512 MiB buffer and its 512 MiB string (round 50: 23 s and 1.7 GB
 * RSS at load 1.6). MAX_TEXT_CHARS itself, as the default, is decoded past over real stdin in
 * test/cli/index-stdin.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { decodeUtf8, MAX_TEXT_CHARS, TextTooLongError } from '../src/read-text-file.ts'

const BOM = [0xef, 0xbb, 0xbf]
const LIMIT = 4096

/** The TextTooLongError `decodeUtf8(bytes, LIMIT)` throws (undefined if none). */
function refusal(bytes: Uint8Array): TextTooLongError | undefined {
  try {
    decodeUtf8(bytes, LIMIT)
  } catch (error) {
    expect(error).toBeInstanceOf(TextTooLongError)
    return error as TextTooLongError
  }
  return undefined
}

describe('decodeUtf8 at the one-string limit, after a byte-order mark', () => {
  it('takes exactly the limit of characters after the BOM and refuses one more', () => {
    const bytes = Buffer.alloc(BOM.length + LIMIT + 1, 'a')
    bytes.set(BOM)
    const atLimit = bytes.subarray(0, BOM.length + LIMIT)
    const text = decodeUtf8(atLimit, LIMIT)
    expect(text.length).toBe(LIMIT)
    expect(text.charCodeAt(0)).toBe(0x61)
    expect(refusal(atLimit)).toBeUndefined()
    const refused = refusal(bytes)
    expect(refused?.chars).toBe(LIMIT + 1)
    expect(refused?.maxChars).toBe(LIMIT)
    // Said as the limit it is, not as one string's (4,096 characters are not what one holds).
    expect(refused?.message).toBe(
      `it holds ${(LIMIT + 1).toLocaleString('en-US')} characters, more than the limit (${LIMIT.toLocaleString('en-US')})`,
    )
  })

  it('counts a BOM that is not first, and text without one, character for character', () => {
    // U+FEFF after the first character is text (TextDecoder keeps it): counted.
    const inside = Buffer.concat([Buffer.from('a'), Buffer.from(BOM), Buffer.alloc(LIMIT - 1, 'b')])
    expect(refusal(inside)?.chars).toBe(LIMIT + 1)
    expect(refusal(inside.subarray(0, inside.length - 1))).toBeUndefined()
    expect(refusal(Buffer.alloc(LIMIT + 1, 'a'))?.chars).toBe(LIMIT + 1)
    expect(decodeUtf8(Buffer.alloc(LIMIT, 'a'), LIMIT)).toHaveLength(LIMIT)
    // The default limit is one string's.
    const atDefault = new TextTooLongError(MAX_TEXT_CHARS + 1)
    expect(atDefault.maxChars).toBe(MAX_TEXT_CHARS)
    expect(atDefault.message).toContain(
      `more than one string holds (${MAX_TEXT_CHARS.toLocaleString('en-US')})`,
    )
  })
})
