/**
 * An index's `tools.jsonl` kept open and read by offset: a library loaded from an index reads a
 * tool's line (its place is in `tools.idx`) when a request needs that tool, instead of reading
 * the whole file at load (250 MB and about 1.7 s of start-up at a million tools, with the
 * CRC-32 that tied the two files together).
 *
 * One file descriptor per loaded library version. `release(graceMs)` (the library registry
 * calls it when a version is replaced or deleted) closes it once `graceMs` have passed and the
 * last reader that `hold()`s it is done, so that requests and jobs still holding the old version
 * finish reading first, however long they take; a version that is never released (a CLI command,
 * a test) closes when it is garbage-collected. Reading after the close (a reader that took no
 * hold and outlived the grace) fails with LIBRARY_REPLACED (retry: the current version serves
 * it), never with another file's bytes: the descriptor is closed once, by whichever comes first.
 * @module
 */
import { close, closeSync, constants, fstat, open, read, readSync } from 'node:fs'
import { open as openFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { crc32 } from 'node:zlib'
import { throwIfAborted, ToolselError } from '../errors.ts'
import { FileTooLargeError, NotRegularFileError } from '../read-text-file.ts'

/**
 * The descriptor, shared by the file, its close timer, its holds and its finaliser (not the file
 * itself, so that it can still be collected). `holders`: holds not yet let go; `due`: released
 * and its grace is over, so it closes when `holders` reaches 0.
 */
interface Descriptor {
  fd: number
  closed: boolean
  holders: number
  due: boolean
}

/** Closes once, whoever asks first (a release timer, the finaliser, or both). */
function closeDescriptor(descriptor: Descriptor): void {
  if (descriptor.closed) return
  descriptor.closed = true
  try {
    closeSync(descriptor.fd)
  } catch {
    // Already gone: nothing to free.
  }
}

/** The grace after a release is over: closes now, or when the last hold is let go. */
function closeWhenIdle(descriptor: Descriptor): void {
  descriptor.due = true
  if (descriptor.holders === 0) closeDescriptor(descriptor)
}

const finalizer = new FinalizationRegistry<Descriptor>(closeDescriptor)

/** Reads of up to this many bytes share one buffer (reads are synchronous: no overlap). */
const SCRATCH_BYTES = 64 * 1024
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES)
/** Block size of a whole-file checksum, copy or read. */
const BLOCK_BYTES = 1024 * 1024

/**
 * What a load checked of the file (tools-index-file.ts `readToolsIndexFile`): its CRC-32 is the
 * one its `tools.idx` recorded, which names the manifest's sha256 of the file saved.
 */
export interface CheckedToolsFile {
  /** The manifest's `toolsFileHash`. */
  sha256: string
  crc32: number
}

export class ToolsFile {
  readonly path: string
  /** Bytes in the file when it was opened. */
  readonly size: number
  readonly #descriptor: Descriptor
  #released = false
  #releasedAt = 0
  #checked: CheckedToolsFile | undefined

  private constructor(path: string, fd: number, size: number) {
    this.path = path
    this.size = size
    this.#descriptor = { fd, closed: false, holders: 0, due: false }
    finalizer.register(this, this.#descriptor)
  }

  /**
   * Opens `path` for reading, a regular file of at most `maxBytes` (opened non-blocking, so that a
   * FIFO at the name does not hang the open, and checked on its own fstat): else
   * NotRegularFileError or FileTooLargeError, unread. The caller maps failures to its own error.
   */
  static async open(path: string, maxBytes: number): Promise<ToolsFile> {
    const fd = await promisify(open)(path, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      const info = await promisify(fstat)(fd)
      if (!info.isFile()) throw new NotRegularFileError()
      if (info.size > maxBytes) throw new FileTooLargeError(maxBytes)
      return new ToolsFile(path, fd, info.size)
    } catch (error) {
      await promisify(close)(fd)
      throw error
    }
  }

  get closed(): boolean {
    return this.#descriptor.closed
  }

  /** Bytes start … end-1 as UTF-8 text; INDEX_CORRUPT when they can't all be read. */
  text(start: number, end: number): string {
    const length = end - start
    const buffer = length <= SCRATCH_BYTES ? scratch : Buffer.allocUnsafe(length)
    this.#readInto(buffer, length, start)
    return buffer.toString('utf8', 0, length)
  }

  /** What its load checked of it (`vouch`), if anything. */
  get checked(): CheckedToolsFile | undefined {
    return this.#checked
  }

  /**
   * Records that the file's CRC-32 was found to be `checked.crc32`, the one its index was saved
   * with for the file of sha256 `checked.sha256` (a load's check): a save of its library copies
   * it (`copyTo`) instead of serialising, hashing and scanning it again.
   */
  vouch(checked: CheckedToolsFile): void {
    this.#checked = checked
  }

  /**
   * The whole file (as big as when opened) in blocks of 1 MiB, each read off the event loop
   * (never one Buffer of the whole file, read in one turn).
   */
  async chunks(signal?: Pick<AbortSignal, 'aborted' | 'reason'>): Promise<Buffer[]> {
    const chunks: Buffer[] = []
    await this.#eachBlock((block) => void chunks.push(Buffer.from(block)), signal)
    return chunks
  }

  /**
   * The CRC-32 of the whole file (as big as when opened), read in 1 MiB blocks without blocking
   * the event loop for long: about 0.14 s of CPU at a million tools (250 MB).
   */
  async crc32(): Promise<number> {
    let crc = 0
    await this.#eachBlock((block) => {
      crc = crc32(block, crc)
    })
    return crc
  }

  /**
   * Copies the file (as big as when opened) to a new file at `path` in 1 MiB blocks, read and
   * written off the event loop, their CRC-32 taken on the way: INDEX_CORRUPT when it is not the
   * one the load checked (`vouch`: the file was changed in place since), so that the copy holds
   * the bytes its sha256, line spans and CRC-32 describe. `signal` stops it between two blocks.
   * The caller removes the copy when this throws.
   */
  async copyTo(path: string, signal?: AbortSignal): Promise<CheckedToolsFile> {
    const checked = this.#checked
    if (checked === undefined) throw new Error(`${this.path} was not checked at its load`)
    const release = this.hold()
    const target = await openFile(path, 'wx')
    try {
      let crc = 0
      await this.#eachBlock(async (block) => {
        crc = crc32(block, crc)
        for (let written = 0; written < block.length;) {
          const { bytesWritten } = await target.write(block, written, block.length - written)
          written += bytesWritten
        }
      }, signal)
      if (crc !== checked.crc32) {
        throw this.#unreadable(
          `it was changed since it was loaded (its CRC-32 is ${hex(crc)}, ${hex(checked.crc32)} at the load)`,
        )
      }
      return checked
    } finally {
      await target.close()
      release()
    }
  }

  /** Each block of the file in order, read asynchronously into one buffer (reused: copy it to keep it). */
  async #eachBlock(
    visit: (block: Buffer) => void | Promise<void>,
    signal?: Pick<AbortSignal, 'aborted' | 'reason'>,
  ): Promise<void> {
    const block = Buffer.allocUnsafe(Math.min(BLOCK_BYTES, Math.max(this.size, 1)))
    const readAt = promisify(read)
    for (let position = 0; position < this.size;) {
      throwIfAborted(signal)
      if (this.#descriptor.closed) throw this.#replaced()
      const length = Math.min(block.length, this.size - position)
      let bytesRead: number
      try {
        ;({ bytesRead } = await readAt(this.#descriptor.fd, block, 0, length, position))
      } catch (error) {
        throw this.#unreadable((error as Error).message, error)
      }
      if (bytesRead === 0) throw this.#unreadable(`it ends before byte ${this.size}`)
      await visit(block.subarray(0, bytesRead))
      position += bytesRead
    }
  }

  /**
   * Keeps the file open until the returned function is called (once; later calls do nothing),
   * even past a release's grace: for a reader that may outlive it (a request, a build).
   */
  hold(): () => void {
    const descriptor = this.#descriptor
    descriptor.holders += 1
    let held = true
    return () => {
      if (!held) return
      held = false
      descriptor.holders -= 1
      if (descriptor.due && descriptor.holders === 0) closeDescriptor(descriptor)
    }
  }

  /**
   * Closes the file `graceMs` from now (at once for 0), or later when the last `hold()` is let go
   * after that; later calls change nothing.
   */
  release(graceMs: number): void {
    if (this.#released) return
    this.#released = true
    this.#releasedAt = Date.now()
    if (graceMs <= 0) return closeWhenIdle(this.#descriptor)
    // The timer holds only the descriptor, so the file can still be collected (and closed) first.
    setTimeout(closeWhenIdle, graceMs, this.#descriptor).unref()
  }

  #readInto(buffer: Buffer, length: number, position: number): void {
    if (this.#descriptor.closed) throw this.#replaced()
    let done = 0
    try {
      while (done < length) {
        const read = readSync(this.#descriptor.fd, buffer, done, length - done, position + done)
        if (read === 0) break
        done += read
      }
    } catch (error) {
      throw this.#unreadable((error as Error).message, error)
    }
    if (done < length) throw this.#unreadable(`it ends before byte ${position + length}`)
  }

  #replaced(): ToolselError {
    const ago = Math.round((Date.now() - this.#releasedAt) / 1000)
    return new ToolselError(
      'LIBRARY_REPLACED',
      `This request read a library version that was replaced or deleted ${ago} s ago and is now unloaded (its tools file ${this.path} is closed). Retry the request: the current version will serve it.`,
      { details: { file: this.path } },
    )
  }

  #unreadable(why: string, cause?: unknown): ToolselError {
    return new ToolselError('INDEX_CORRUPT', `The tools file ${this.path} can't be read: ${why}.`, {
      cause,
      details: { file: this.path },
    })
  }
}

const hex = (crc: number) => crc.toString(16).padStart(8, '0')
