/**
 * An index's `tools.jsonl` kept open and read by offset: a library loaded from an index reads a
 * tool's line (its place is in `tools.idx`) when a request needs that tool, instead of reading
 * the whole file at load (250 MB and about 1.7 s of start-up at a million tools, with the
 * CRC-32 that tied the two files together).
 *
 * One file descriptor per loaded library version. `release(graceMs)` (the library registry
 * calls it when a version is replaced or deleted) closes it once `graceMs` have passed, so that
 * requests and jobs still holding the old version finish reading first; a version that is never
 * released (a CLI command, a test) closes when it is garbage-collected. Reading after the close
 * fails with INDEX_CORRUPT naming the file, never with another file's bytes: the descriptor is
 * closed once, by whichever comes first.
 * @module
 */
import { close, closeSync, fstat, open, readSync } from 'node:fs'
import { promisify } from 'node:util'
import { ToolselError } from '../errors.ts'

/** The descriptor, shared by the file, its close timer and its finaliser (not the file itself). */
interface Descriptor {
  fd: number
  closed: boolean
}

/** Descriptors open now (the tests check that reloads don't leak them). */
let openCount = 0

export function openToolsFileCount(): number {
  return openCount
}

/** Closes once, whoever asks first (a release timer, the finaliser, or both). */
function closeDescriptor(descriptor: Descriptor): void {
  if (descriptor.closed) return
  descriptor.closed = true
  openCount -= 1
  try {
    closeSync(descriptor.fd)
  } catch {
    // Already gone: nothing to free.
  }
}

const finalizer = new FinalizationRegistry<Descriptor>(closeDescriptor)

/** Reads of up to this many bytes share one buffer (reads are synchronous: no overlap). */
const SCRATCH_BYTES = 64 * 1024
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES)

export class ToolsFile {
  readonly path: string
  /** Bytes in the file when it was opened. */
  readonly size: number
  readonly #descriptor: Descriptor
  #released = false

  private constructor(path: string, fd: number, size: number) {
    this.path = path
    this.size = size
    this.#descriptor = { fd, closed: false }
    openCount += 1
    finalizer.register(this, this.#descriptor)
  }

  /** Opens `path` for reading; the caller maps failures to its own error. */
  static async open(path: string): Promise<ToolsFile> {
    const fd = await promisify(open)(path, 'r')
    try {
      const { size } = await promisify(fstat)(fd)
      return new ToolsFile(path, fd, size)
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

  /** The whole file (as it was when opened). */
  readAll(): Buffer {
    const buffer = Buffer.allocUnsafe(this.size)
    this.#readInto(buffer, this.size, 0)
    return buffer
  }

  /** Closes the file `graceMs` from now (at once for 0); later calls change nothing. */
  release(graceMs: number): void {
    if (this.#released) return
    this.#released = true
    if (graceMs <= 0) return closeDescriptor(this.#descriptor)
    // The timer holds only the descriptor, so the file can still be collected (and closed) first.
    setTimeout(closeDescriptor, graceMs, this.#descriptor).unref()
  }

  #readInto(buffer: Buffer, length: number, position: number): void {
    if (this.#descriptor.closed)
      throw this.#unreadable('it was closed (its library version was unloaded)')
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

  #unreadable(why: string, cause?: unknown): ToolselError {
    return new ToolselError('INDEX_CORRUPT', `The tools file ${this.path} can't be read: ${why}.`, {
      cause,
      details: { file: this.path },
    })
  }
}
