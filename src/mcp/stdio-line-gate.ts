/**
 * What `toolsel mcp --stdio` lets through from stdin to its reading of messages: whole lines
 * of UTF-8 text, each at most MAX_STDIO_LINE_BYTES. The SDK's stdio reading (toolsel's before
 * round 36) keeps an unended line whole and, past its 10 MiB buffer, closes the transport: one
 * long line (or one that never ends) ended the server without a word, dropping the requests
 * after it. Here a line over the
 * limit is skipped to its newline without keeping it, a line that is not UTF-8 is refused at
 * its first bad byte (the SDK read those as U+FFFD, /mcp refuses them), and each refusal goes
 * to `onRefused`, which answers it; the lines around it go on. JSON text holds no raw newline,
 * so the line after a skipped one is the next message. A blank line (or one of only whitespace)
 * is skipped unanswered, and a byte-order mark at a line's start dropped.
 * @module
 */
import { Transform, type TransformCallback } from 'node:stream'
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js'
import { assertUtf8, InvalidUtf8Error } from '../read-text-file.ts'

/** The longest stdin line passed on, in bytes without its newline: what the SDK accepted. */
export const MAX_STDIO_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE - 1

const NEWLINE = 0x0a

/** A line not passed on: the JSON-RPC error to answer it with (its id is unknown: null). */
export interface LineRefusal {
  code: number
  message: string
}

/** Whether `line` from `start` holds only JSON whitespace (space, tab, carriage return). */
function isBlank(line: Buffer, start: number): boolean {
  for (let at = start; at < line.length; at += 1) {
    const byte = line[at]
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false
  }
  return true
}

export class StdioLineGate extends Transform {
  readonly #maxBytes: number
  readonly #onRefused: (refusal: LineRefusal) => void
  #parts: Buffer[] = []
  #size = 0
  /** Bytes of the line being skipped (over the limit); undefined while a line is kept. */
  #skipped: number | undefined

  constructor(onRefused: (refusal: LineRefusal) => void, maxBytes = MAX_STDIO_LINE_BYTES) {
    super()
    this.#onRefused = onRefused
    this.#maxBytes = maxBytes
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start)
      const end = newline === -1 ? chunk.length : newline
      this.#take(chunk.subarray(start, end))
      if (newline === -1) break
      this.#endLine()
      start = newline + 1
    }
    done()
  }

  override _flush(done: TransformCallback): void {
    if (this.#skipped !== undefined || this.#size > 0) {
      const bytes = this.#skipped ?? this.#size
      this.#reset()
      this.#onRefused({
        code: -32700,
        message: `Parse error: stdin ended inside a message (${bytes.toLocaleString('en-US')} bytes after the last newline); it was not read.`,
      })
    }
    done()
  }

  #take(piece: Buffer): void {
    if (this.#skipped !== undefined) {
      this.#skipped += piece.length
    } else if (this.#size + piece.length > this.#maxBytes) {
      this.#skipped = this.#size + piece.length
      this.#parts = []
      this.#size = 0
    } else if (piece.length > 0) {
      // A copy: the chunk's memory is not held while the line waits for its end.
      this.#parts.push(Buffer.from(piece))
      this.#size += piece.length
    }
  }

  #endLine(): void {
    if (this.#skipped !== undefined) {
      const bytes = this.#skipped
      this.#reset()
      this.#onRefused({
        code: -32000,
        message: `Payload Too Large: a line of stdin of ${bytes.toLocaleString('en-US')} bytes is over the limit of ${this.#maxBytes.toLocaleString('en-US')}; it was skipped unread.`,
      })
      return
    }
    const line = Buffer.concat(this.#parts, this.#size)
    this.#reset()
    try {
      assertUtf8(line)
    } catch (error) {
      if (!(error instanceof InvalidUtf8Error)) throw error
      this.#onRefused({
        code: -32700,
        message: `Parse error: a line of stdin is not UTF-8 text at byte ${error.offset}; it was not read.`,
      })
      return
    }
    // A byte-order mark before the message is dropped (RFC 8259 lets a parser ignore one; /mcp
    // does), and a line of only JSON whitespace is no message: skipped unanswered (the SDK
    // answered it -32700, an error for nothing the client sent).
    const start = line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? 3 : 0
    if (isBlank(line, start)) return
    // One line a push, so one line a 'data' event (what `toolsel mcp --stdio` parses).
    this.push(Buffer.concat([line.subarray(start), Buffer.of(NEWLINE)]))
  }

  #reset(): void {
    this.#parts = []
    this.#size = 0
    this.#skipped = undefined
  }
}
