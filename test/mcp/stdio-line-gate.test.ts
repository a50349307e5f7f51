/** The stdin gate of `toolsel mcp --stdio`, fed in pieces as a pipe delivers them. */
import { describe, expect, it } from 'vitest'
import { StdioLineGate, type LineRefusal } from '../../src/mcp/stdio-line-gate.ts'

/** Writes `chunks` into a gate of `maxBytes`, ends it, and returns what it passed and refused. */
async function through(chunks: Buffer[], maxBytes: number) {
  const refused: LineRefusal[] = []
  const gate = new StdioLineGate((refusal) => refused.push(refusal), maxBytes)
  const passed: Buffer[] = []
  gate.on('data', (chunk: Buffer) => passed.push(chunk))
  const ended = new Promise((resolve) => gate.once('end', resolve))
  for (const chunk of chunks) gate.write(chunk)
  gate.end()
  await ended
  return { passed: Buffer.concat(passed).toString('utf8'), refused }
}

/** `text` cut into pieces of `size` bytes (a character's bytes may fall in two pieces). */
const pieces = (text: string, size: number) => {
  const bytes = Buffer.from(text)
  const out: Buffer[] = []
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size))
  return out
}

describe('StdioLineGate', () => {
  it('passes whole lines, whatever the pieces, with a character cut between two of them', async () => {
    const text = '{"a":"é€😀"}\r\n{"b":2}\n{"c":3}\n'
    for (const size of [1, 2, 3, 7, 100]) {
      const { passed, refused } = await through(pieces(text, size), 64)
      expect(passed).toBe(text)
      expect(refused).toEqual([])
    }
  })

  it('skips blank lines and lines of only whitespace, and drops a byte-order mark', async () => {
    const bom = '\u{feff}'
    const text = `\n \t\r\n${bom}{"a":1}\n${bom}\n{"b":2}\r\n${bom} {"c":3}\n`
    for (const size of [1, 2, 100]) {
      const { passed, refused } = await through(pieces(text, size), 64)
      // The transport answered each blank line -32700 (and a BOM'd one: "Unexpected token").
      expect(passed).toBe('{"a":1}\n{"b":2}\r\n {"c":3}\n')
      expect(refused).toEqual([])
    }
  })

  it('skips a line over the limit to its newline, in any pieces, and passes the next', async () => {
    const text = `{"a":1}\n${'x'.repeat(40)}\n${'y'.repeat(16)}\n{"b":2}\n`
    for (const size of [1, 5, 1000]) {
      const { passed, refused } = await through(pieces(text, size), 16)
      expect(passed).toBe(`{"a":1}\n${'y'.repeat(16)}\n{"b":2}\n`)
      expect(refused).toEqual([
        {
          code: -32000,
          message:
            'Payload Too Large: a line of stdin of 40 bytes is over the limit of 16; it was skipped unread.',
        },
      ])
    }
  })

  it('refuses a line that is not UTF-8 at its first bad byte, and an unended last line', async () => {
    const { passed, refused } = await through(
      [Buffer.from('{"a":"ok"}\n{"b":"'), Buffer.of(0xe2, 0x82), Buffer.from('"}\n{"c":')],
      64,
    )
    expect(passed).toBe('{"a":"ok"}\n')
    expect(refused.map((refusal) => refusal.message)).toEqual([
      'Parse error: a line of stdin is not UTF-8 text at byte 6; it was not read.',
      'Parse error: stdin ended inside a message (5 bytes after the last newline); it was not read.',
    ])
  })
})
