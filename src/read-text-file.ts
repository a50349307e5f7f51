/** Reading a user-named file as UTF-8, failing with one clear error. @module */
import { constants as bufferConstants, isAscii, isUtf8 } from 'node:buffer'
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import { type FileHandle, open, stat } from 'node:fs/promises'
import { ToolselError } from './errors.ts'

/** Thrown by `readFileUpTo` for a file past its limit. */
export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`larger than ${maxBytes} bytes`)
    this.name = 'FileTooLargeError'
  }
}

/** Thrown by the readers below, given `regularOnly`, for a device, pipe, socket or directory. */
export class NotRegularFileError extends Error {
  constructor() {
    super('it is not a regular file (a device, pipe, socket or directory)')
    this.name = 'NotRegularFileError'
  }
}

export interface ReadUpToOptions {
  /**
   * Refuse anything but a regular file (links followed) with a NotRegularFileError, unread: the
   * check is the fstat of the one handle that would read it (no swap between a check and the
   * read), opened non-blocking so that a FIFO without a writer does not hang the open itself.
   */
  regularOnly?: boolean
}

/**
 * The file's text (UTF-8), reading at most `maxBytes` + 1 bytes: a regular file whose size says
 * it is larger is refused unread, and anything else that goes on past the limit (a device such
 * as /dev/zero, a file still growing) after that many bytes, with a FileTooLargeError. Other
 * failures are Node's (ENOENT…).
 */
export async function readFileUpTo(
  file: string,
  maxBytes: number,
  options: ReadUpToOptions = {},
): Promise<string> {
  return (await readBytesUpTo(file, maxBytes, options)).toString('utf8')
}

/** Thrown by `readUtf8FileUpTo` for bytes that are not UTF-8 (they would be read as U+FFFD). */
export class InvalidUtf8Error extends Error {
  constructor(
    readonly line: number,
    /** `assertUtf8`: the byte offset (from 0) of the first byte that is not UTF-8. */
    readonly offset?: number,
  ) {
    super(`line ${line} is not UTF-8 text`)
    this.name = 'InvalidUtf8Error'
  }
}

/** The offset of the first byte of `bytes` that does not start or continue a UTF-8 character. */
function firstInvalidUtf8(bytes: Buffer): number {
  for (let at = 0; at < bytes.length;) {
    const lead = bytes[at]
    const length =
      lead < 0x80 ? 1 : lead < 0xc2 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf5 ? 4 : 0
    // One character checked by isUtf8 (overlong forms, surrogates and all).
    if (length === 0 || (length > 1 && !isUtf8(bytes.subarray(at, at + length)))) return at
    at += length
  }
  return bytes.length
}

/**
 * An InvalidUtf8Error naming the first line (from 1) of `bytes` that is not UTF-8 and the offset
 * of its first such byte; nothing when they all are. The one check of every input read as UTF-8
 * text: tool files, examples files, request bodies (`isUtf8` of 16 MB: under 1 ms; the line and
 * offset are worked out only for bytes that fail it).
 */
export function assertUtf8(bytes: Uint8Array): void {
  if (isUtf8(bytes)) return
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  let line = 1
  let start = 0
  for (; start < buffer.length; line++) {
    const newline = buffer.indexOf(10, start)
    const end = newline === -1 ? buffer.length : newline
    if (!isUtf8(buffer.subarray(start, end))) break
    start = end + 1
  }
  throw new InvalidUtf8Error(line, start + firstInvalidUtf8(buffer.subarray(start)))
}

const utf8Decoder = new TextDecoder()

/**
 * `bytes` as text once `assertUtf8` passes, decoded as a request's `text()` decodes a body (a
 * byte-order mark first dropped). TextDecoder, not `Buffer#toString`: 43 against 68 ms for 16 MB.
 * More characters than one string holds is a TextTooLongError (`assertFitsOneString`; a
 * 512 MiB body limit is 24 bytes over it), not V8's "Cannot create a string longer than…".
 * `maxChars`: a lower limit in its place (a test of the count at the limit without 512 MiB).
 */
export function decodeUtf8(bytes: Uint8Array, maxChars = MAX_TEXT_CHARS): string {
  assertUtf8(bytes)
  assertFitsOneString(bytes, { bomDropped: true, maxChars })
  return utf8Decoder.decode(bytes)
}

/**
 * A request body as text (`decodeUtf8`): PAYLOAD_TOO_LARGE (413) for more characters than one
 * string holds (the largest `server.bodyLimitBytes`, 512 MiB, is 24 bytes more than
 * MAX_TEXT_CHARS, so a plain-ASCII body within those bytes passes the body limit), `notUtf8`'s
 * error for bytes that are not UTF-8. The JSON routes' and the uploads' decoding.
 */
export function decodeBody(
  bytes: Uint8Array,
  notUtf8: (error: InvalidUtf8Error) => ToolselError,
): string {
  assertBodyText(bytes, notUtf8)
  return utf8Decoder.decode(bytes)
}

/**
 * `decodeBody`'s checks without the decoding (a body decoded on a worker thread,
 * server/examples-body.ts): the same errors for the same bytes.
 */
export function assertBodyText(
  bytes: Uint8Array,
  notUtf8: (error: InvalidUtf8Error) => ToolselError,
): void {
  try {
    assertUtf8(bytes)
    assertFitsOneString(bytes)
  } catch (error) {
    if (error instanceof InvalidUtf8Error) throw notUtf8(error)
    if (!(error instanceof TextTooLongError)) throw error
    throw new ToolselError(
      'PAYLOAD_TOO_LARGE',
      `The request body is too long to read: ${error.message}; send a smaller body. Nothing was changed.`,
      { cause: error, details: { chars: error.chars, maxChars: MAX_TEXT_CHARS } },
    )
  }
}

/** Most UTF-16 code units one string holds (V8's limit: 536,870,888 in Node 22, 64-bit). */
export const MAX_TEXT_CHARS = bufferConstants.MAX_STRING_LENGTH

/**
 * Thrown by `readUtf8FileUpTo` for UTF-8 text of more characters than one string holds (a file
 * read whole past MAX_TEXT_CHARS, a `--max-file-bytes` raised over ~512 MiB): before round 48
 * Node's "Cannot create a string longer than 0x1fffffe8 characters", read as "Cannot read".
 */
export class TextTooLongError extends Error {
  constructor(
    readonly chars: number,
    readonly maxChars = MAX_TEXT_CHARS,
  ) {
    // "One string" only for that limit: a lower one (decodeUtf8's maxChars) is said as a limit.
    const limit = maxChars === MAX_TEXT_CHARS ? 'more than one string holds' : 'more than the limit'
    super(
      `it holds ${chars.toLocaleString('en-US')} characters, ${limit} (${maxChars.toLocaleString('en-US')})`,
    )
    this.name = 'TextTooLongError'
  }
}

/** Bytes decoded at once by `utf16Length`: each piece's string well within MAX_TEXT_CHARS. */
const LENGTH_PIECE_BYTES = 64 * 1024 * 1024

/**
 * UTF-16 code units of valid UTF-8 `bytes`: ASCII's are its bytes (isAscii: 0.3 s for 512 MiB, a
 * loop over the bytes 9 s on a busy host), other text is decoded piece by piece and counted.
 */
function utf16Length(bytes: Uint8Array): number {
  if (isAscii(bytes)) return bytes.length
  // A byte-order mark counted, as toString keeps it.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  let units = 0
  for (let at = 0; at < bytes.length; at += LENGTH_PIECE_BYTES) {
    units += decoder.decode(bytes.subarray(at, at + LENGTH_PIECE_BYTES), { stream: true }).length
  }
  return units + decoder.decode().length
}

/**
 * `readFileUpTo`, and an InvalidUtf8Error naming the first line (from 1) whose bytes are not
 * UTF-8 and the offset of its first such byte (`assertUtf8`), instead of their silent
 * replacement by U+FFFD. A byte-order mark is kept (U+FEFF); the importers drop it. Text of more
 * than MAX_TEXT_CHARS characters is a TextTooLongError.
 */
export async function readUtf8FileUpTo(
  file: string,
  maxBytes: number,
  options: ReadUpToOptions = {},
): Promise<string> {
  const bytes = await readBytesUpTo(file, maxBytes, options)
  assertUtf8(bytes)
  assertFitsOneString(bytes)
  return bytes.toString('utf8')
}

/**
 * A TextTooLongError when valid UTF-8 `bytes` decode to more than MAX_TEXT_CHARS characters:
 * counted only past that many bytes (fewer bytes are never more characters). `bomDropped`: the
 * decoding drops a byte-order mark first (TextDecoder), which is then not counted (was: a text
 * of exactly MAX_TEXT_CHARS characters after a BOM refused as one too many). `maxChars`:
 * `decodeUtf8`'s.
 */
function assertFitsOneString(
  bytes: Uint8Array,
  { bomDropped = false, maxChars = MAX_TEXT_CHARS } = {},
): void {
  if (bytes.length <= maxChars) return
  const bom = bomDropped && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 1 : 0
  const chars = utf16Length(bytes) - bom
  if (chars > maxChars) throw new TextTooLongError(chars, maxChars)
}

/**
 * A handle open for reading `file`; with `regularOnly`, opened non-blocking (a FIFO without a
 * writer would block the open) and closed again, unread, unless its fstat says a regular file.
 */
export async function openForReading(
  file: string,
  { regularOnly = false }: ReadUpToOptions = {},
): Promise<{ handle: FileHandle; stats: Stats }> {
  const handle = await open(
    file,
    regularOnly ? constants.O_RDONLY | constants.O_NONBLOCK : constants.O_RDONLY,
  )
  try {
    const stats = await handle.stat()
    if (regularOnly && !stats.isFile()) throw new NotRegularFileError()
    return { handle, stats }
  } catch (error) {
    await handle.close()
    throw error
  }
}

/** The first read's buffer of `readFileUpToSync` for a file whose fstat says less. */
const SYNC_READ_CHUNK = 64 * 1024

/**
 * `readFileUpTo` with `regularOnly`, synchronously (a component factory, a check under a lock):
 * the text of a regular file (the fstat of the one handle read; opened non-blocking: a FIFO at
 * the name is refused unread, never waited on) read to its end, of at most `maxBytes`, else
 * NotRegularFileError or FileTooLargeError (a directory: Node's EISDIR); no more than
 * `maxBytes` + 1 bytes are read. A file whose fstat says 0 bytes (/proc, sysfs) is read too.
 * Other failures are Node's (ENOENT…).
 */
export function readFileUpToSync(file: string, maxBytes: number): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const info = fstatSync(fd)
    // A directory as readFileSync says it (EISDIR: `fileProblem`'s "it is a directory").
    if (info.isDirectory())
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read`), {
        code: 'EISDIR',
      })
    if (!info.isFile()) throw new NotRegularFileError()
    if (info.size > maxBytes) throw new FileTooLargeError(maxBytes)
    // Read to the end, not to the fstat's size: a /proc or sysfs file says 0 bytes (its text was
    // "") and a file that grew since says too few; one byte past `maxBytes` says too large.
    let bytes = Buffer.allocUnsafe(Math.min(Math.max(info.size, SYNC_READ_CHUNK), maxBytes) + 1)
    let read = 0
    for (let got = -1; got !== 0; read += got) {
      if (read > maxBytes) throw new FileTooLargeError(maxBytes)
      if (read === bytes.length) {
        const grown = Buffer.allocUnsafe(Math.min(bytes.length * 2, maxBytes + 1))
        bytes.copy(grown, 0, 0, read)
        bytes = grown
      }
      got = readSync(fd, bytes, read, bytes.length - read, read)
    }
    return bytes.toString('utf8', 0, read)
  } finally {
    closeSync(fd)
  }
}

/** The bytes of `readFileUpTo` (not decoded: a binary file's). */
export async function readBytesUpTo(
  file: string,
  maxBytes: number,
  options: ReadUpToOptions,
): Promise<Buffer> {
  const { handle, stats } = await openForReading(file, options)
  try {
    if (stats.isFile() && stats.size > maxBytes) throw new FileTooLargeError(maxBytes)
    const chunks: Buffer[] = []
    let read = 0
    if (stats.isFile()) {
      // A regular file is read as readFile reads it, into one buffer of its size (not pooled: a
      // section file's typed arrays view it in place), one byte more telling whether it grew
      // since its fstat (then read on by chunks). 4 MiB chunks and their concatenation cost a
      // load of 100k tools 10-20 ms of CPU more (bench/README round 46).
      const whole = Buffer.allocUnsafeSlow(stats.size + 1)
      for (let got = -1; read < whole.length && got !== 0; read += got)
        ({ bytesRead: got } = await handle.read(whole, read, whole.length - read, null))
      if (read <= stats.size) return whole.subarray(0, read)
      if (read > maxBytes) throw new FileTooLargeError(maxBytes)
      chunks.push(whole)
    }
    const total = await readChunksUpTo(handle, maxBytes - read, (chunk) =>
      chunks.push(chunk),
    ).catch((error: unknown) => {
      throw error instanceof FileTooLargeError ? new FileTooLargeError(maxBytes) : error
    })
    return Buffer.concat(chunks, read + total)
  } finally {
    await handle.close()
  }
}

/**
 * Reads `handle` from where it stands to its end, handing each read's bytes to `onChunk` (a
 * buffer of its own, at most 4 MiB), and answers how many there were: at most `maxBytes`, else a
 * FileTooLargeError once `maxBytes` + 1 are read (nothing past the limit is handed on). The one
 * read loop of `readFileUpTo` and of the demo's fingerprint (store/demo-fingerprint.ts).
 */
export async function readChunksUpTo(
  handle: FileHandle,
  maxBytes: number,
  onChunk: (chunk: Buffer) => void,
): Promise<number> {
  let total = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(maxBytes + 1 - total, 4 * 1024 * 1024))
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
    if (bytesRead === 0) return total
    total += bytesRead
    if (total > maxBytes) throw new FileTooLargeError(maxBytes)
    onChunk(chunk.subarray(0, bytesRead))
  }
}

/**
 * INVALID_INPUT `Cannot read <what> "<file>": <reason>` unless `file` is a file this process can
 * open for reading (not a directory); nothing is read. `opened: false`: only looked up (a stat),
 * not opened, for a check made long before the read: a pipe (`--examples <(…)`) opened and closed
 * then would lose its writer.
 */
export async function assertReadableFile(
  file: string,
  what: string,
  { opened = true }: { opened?: boolean } = {},
): Promise<void> {
  const directory = () => Object.assign(new Error('is a directory'), { code: 'EISDIR' })
  try {
    if (!opened) {
      if ((await stat(file)).isDirectory()) throw directory()
      return
    }
    const handle = await open(file, 'r')
    try {
      if ((await handle.stat()).isDirectory()) throw directory()
    } finally {
      await handle.close()
    }
  } catch (error) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot read ${what} "${file}": ${fileProblem(error)}`,
      { cause: error, details: { file } },
    )
  }
}

const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory; name a file',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'a file of that name is in the way',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the path is too long',
}

/**
 * Why a user-named file could not be read, in words (`no such file or directory`), not Node's
 * `ENOENT: no such file or directory, open '/x'` (the syscall and the path again).
 */
export function fileProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return (code !== undefined && FILE_PROBLEMS[code]) || (error as Error).message
}

/** Thrown by `readLinesUpTo` for a line longer than its limit, as soon as the reading passes it. */
export class LineTooLongError extends Error {
  constructor(
    readonly line: number,
    readonly maxLineBytes: number,
  ) {
    super(`line ${line} is longer than ${maxLineBytes} bytes`)
    this.name = 'LineTooLongError'
  }
}

export interface ReadLinesOptions extends ReadUpToOptions {
  /**
   * Longest line, in bytes (without its "\n"): a longer one is refused with a LineTooLongError as
   * soon as that many of its bytes are read, not gathered to `maxBytes` first (/dev/zero, a file
   * with no line break). Or a function that decides the limit of the whole file from its first
   * lines (a format whose one form is a long line, a JSON array, gives that form its own limit):
   * given each line's bytes (a byte-order mark first dropped) until it answers a number, which is
   * then the limit of that line and every later one; undefined (a blank line) asks again at the
   * next. A line longer than one read (1 MiB) before it has answered is given to it as read so
   * far, and with no answer still it is held to 1 MiB. Default: none.
   */
  maxLineBytes?: number | ((line: Buffer) => number | undefined)
}

/** Size of one read of `readLinesUpTo`. */
const LINE_READ_BYTES = 1024 * 1024

/**
 * The lines of a file as they are read (split at "\n"; a "\r" before it is left on the line; a
 * byte-order mark first is dropped), each checked as UTF-8 text: an InvalidUtf8Error names the
 * first line that is not. At most `maxBytes` are read, as `readFileUpTo` (a FileTooLargeError),
 * and a line at most `maxLineBytes` (a LineTooLongError); only the lines of one read (1 MiB) are
 * held, and the line being read, so a consumer that keeps little holds little.
 * Handed on in batches, the lines of each read (one await per line was half again the time).
 */
export async function* readLinesUpTo(
  file: string,
  maxBytes: number,
  options: ReadLinesOptions = {},
): AsyncGenerator<string[], void, void> {
  const { handle, stats } = await openForReading(file, options)
  try {
    if (stats.isFile() && stats.size > maxBytes) throw new FileTooLargeError(maxBytes)
    const { maxLineBytes = Infinity } = options
    const decide = typeof maxLineBytes === 'function' ? maxLineBytes : undefined
    // The file's limit: fixed, or once `decide` has answered; undefined until then.
    let fileLimit: number | undefined = typeof maxLineBytes === 'number' ? maxLineBytes : undefined
    let pending: Buffer[] = []
    let pendingBytes = 0
    const withoutBom = (bytes: Buffer): Buffer =>
      line === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
        ? bytes.subarray(3)
        : bytes
    // The limit of the line in `pending`, once it is longer than one read could hold.
    const lineLimit = (): number =>
      (fileLimit ??= decide!(withoutBom(Buffer.concat(pending)))) ?? LINE_READ_BYTES
    let total = 0
    let line = 0
    const decode = (parts: Buffer[]): string => {
      const bytes = withoutBom(parts.length === 1 ? parts[0] : Buffer.concat(parts))
      line += 1
      fileLimit ??= decide!(bytes)
      if (!isUtf8(bytes)) throw new InvalidUtf8Error(line)
      return bytes.toString('utf8')
    }
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(maxBytes + 1 - total, LINE_READ_BYTES))
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) break
      total += bytesRead
      if (total > maxBytes) throw new FileTooLargeError(maxBytes)
      const read = chunk.subarray(0, bytesRead)
      const lines: string[] = []
      for (let start = 0; ;) {
        const newline = read.indexOf(10, start)
        const end = newline === -1 ? read.length : newline
        if (end > start) {
          pending.push(read.subarray(start, end))
          pendingBytes += end - start
        }
        // A line within one read is at most 1 MiB: an undecided limit is asked only past that.
        if (
          (fileLimit !== undefined && pendingBytes > fileLimit) ||
          (fileLimit === undefined && pendingBytes > LINE_READ_BYTES && pendingBytes > lineLimit())
        )
          throw new LineTooLongError(line + 1, lineLimit())
        if (newline === -1) break
        lines.push(decode(pending))
        pending = []
        pendingBytes = 0
        start = newline + 1
      }
      if (lines.length > 0) yield lines
    }
    if (pending.length > 0) yield [decode(pending)]
  } finally {
    await handle.close()
  }
}
