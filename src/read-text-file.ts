/** Reading a user-named file as UTF-8, failing with one clear error. @module */
import { isUtf8 } from 'node:buffer'
import { open, readFile } from 'node:fs/promises'
import { ToolselError } from './errors.ts'

/** Thrown by `readFileUpTo` for a file past its limit. */
export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`larger than ${maxBytes} bytes`)
    this.name = 'FileTooLargeError'
  }
}

/**
 * The file's text (UTF-8), reading at most `maxBytes` + 1 bytes: a regular file whose size says
 * it is larger is refused unread, and anything else that goes on past the limit (a device such
 * as /dev/zero, a file still growing) after that many bytes, with a FileTooLargeError. Other
 * failures are Node's (ENOENT…).
 */
export async function readFileUpTo(file: string, maxBytes: number): Promise<string> {
  return (await readBytesUpTo(file, maxBytes)).toString('utf8')
}

/** Thrown by `readUtf8FileUpTo` for bytes that are not UTF-8 (they would be read as U+FFFD). */
export class InvalidUtf8Error extends Error {
  constructor(readonly line: number) {
    super(`line ${line} is not UTF-8 text`)
    this.name = 'InvalidUtf8Error'
  }
}

/**
 * `readFileUpTo`, and an InvalidUtf8Error naming the first line (from 1) whose bytes are not
 * UTF-8, instead of their silent replacement by U+FFFD.
 */
export async function readUtf8FileUpTo(file: string, maxBytes: number): Promise<string> {
  const bytes = await readBytesUpTo(file, maxBytes)
  if (!isUtf8(bytes)) {
    let line = 1
    for (let start = 0; start < bytes.length; line++) {
      const newline = bytes.indexOf(10, start)
      const end = newline === -1 ? bytes.length : newline
      if (!isUtf8(bytes.subarray(start, end))) break
      start = end + 1
    }
    throw new InvalidUtf8Error(line)
  }
  return bytes.toString('utf8')
}

/** The bytes of `readFileUpTo`. */
async function readBytesUpTo(file: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(file, 'r')
  try {
    const stats = await handle.stat()
    if (stats.isFile() && stats.size > maxBytes) throw new FileTooLargeError(maxBytes)
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(maxBytes + 1 - total, 4 * 1024 * 1024))
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) break
      total += bytesRead
      if (total > maxBytes) throw new FileTooLargeError(maxBytes)
      chunks.push(chunk.subarray(0, bytesRead))
    }
    return Buffer.concat(chunks, total)
  } finally {
    await handle.close()
  }
}

/** The file's text, or INVALID_INPUT `Cannot read <what> "<file>": <reason>`. */
export async function readTextFile(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot read ${what} "${file}": ${fileProblem(error)}`,
      { cause: error },
    )
  }
}

/**
 * INVALID_INPUT `Cannot read <what> "<file>": <reason>` unless `file` is a file this process can
 * open for reading (not a directory); nothing is read.
 */
export async function assertReadableFile(file: string, what: string): Promise<void> {
  try {
    const handle = await open(file, 'r')
    try {
      if ((await handle.stat()).isDirectory())
        throw Object.assign(new Error('is a directory'), { code: 'EISDIR' })
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
