/**
 * A model's identity by the content of the files it loads, where its id names only a place
 * (`onnx:<dir>`): the weights in that directory can be replaced (a fine-tuned export written over
 * the old one) while the id stays the same, and vectors made by the old weights must then not be
 * searched with, or reused by, the new ones (store/kinds/dense-kind.ts).
 *
 * Each file's sha256 is computed once per process per (path, device, inode, size, mtime, ctime):
 * the ctime moves on every write, also one whose mtime is set back (`cp -p` over the file). Model
 * weights are tens to hundreds of MB (sha256 runs at about 0.5 GB/s), and a model is loaded
 * again for each set of options and after `clearEmbeddingModelCache`.
 * @module
 */
import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { join } from 'node:path'
import { FileTooLargeError, NotRegularFileError, readChunksUpTo } from '../read-text-file.ts'
import { modelFileError } from './model-text-files.ts'
import { modelFileLimit } from './model-weight-files.ts'

/** File hashes kept per process (the oldest dropped first); a model has about ten files. */
const MAX_CACHED_FILES = 256

const fileHashes = new Map<string, Promise<string>>()

/** How often a file's bytes were hashed (not taken from the cache): tests count it. */
export const fingerprintStats = { filesHashed: 0 }

/**
 * `sha256:<hex>` over the (name, size, sha256) list of the regular files among `files` (paths
 * relative to `directory`, links followed) that exist, in the order given. Absent files are
 * left out: they were not loaded either. Each is read through one handle, opened non-blocking:
 * one that is not a regular file (a device, a FIFO, a directory) or is past its limit
 * (`modelFileLimit`; one that grows past it while read too) is MODEL_LOAD_FAILED naming it,
 * unread (until round 47 a FIFO or a device counted as absent and was then read by the load, and
 * any size was hashed). Other failures are what reading a file throws.
 */
export async function modelFilesFingerprint(
  directory: string,
  files: readonly string[],
): Promise<string> {
  return (await modelFilesState(directory, files)).fingerprint
}

/** A model directory's files by content and by where they are on disk (`modelFilesState`). */
export interface ModelFilesState {
  /** As `modelFilesFingerprint` returns it. */
  fingerprint: string
  /**
   * Each file's (device, inode, size, mtime, ctime) as stat saw it just before it was hashed,
   * `-` where absent: any write or replacement moves the ctime or the inode, also one that puts
   * the same bytes back, which the fingerprint cannot tell apart.
   */
  identity: string
}

/** `modelFilesFingerprint` and, from the same stats, the files' identity on disk. */
export async function modelFilesState(
  directory: string,
  files: readonly string[],
): Promise<ModelFilesState> {
  const listing = createHash('sha256')
  const identity: string[] = []
  for (const name of files) {
    const path = join(directory, name)
    let handle: FileHandle
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
      identity.push(`${JSON.stringify(name)}\t-`)
      continue
    }
    try {
      const stats = await handle.stat({ bigint: true })
      const limit = modelFileLimit(name)
      if (!stats.isFile()) throw modelFileError(path, new NotRegularFileError())
      if (stats.size > BigInt(limit.maxBytes)) {
        const tooLarge = new FileTooLargeError(limit.maxBytes)
        throw modelFileError(path, tooLarge, Number(stats.size), limit)
      }
      identity.push(`${JSON.stringify(name)}\t${statKey(stats)}`)
      const sha256 = await fileSha256(path, stats, handle, limit.maxBytes).catch(
        (error: unknown) => {
          if (!(error instanceof FileTooLargeError)) throw error
          throw modelFileError(path, error, undefined, limit)
        },
      )
      listing.update(`${JSON.stringify(name)}\t${stats.size}\t${sha256}\n`)
    } finally {
      await handle.close()
    }
  }
  return { fingerprint: `sha256:${listing.digest('hex')}`, identity: identity.join('\n') }
}

type FileStats = { dev: bigint; ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }

function statKey(stats: FileStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`
}

/**
 * sha256 of the file at `path` open on `handle`, whose fstat is `stats`, at most `maxBytes` of it
 * (else a FileTooLargeError); cached while they stay the same.
 */
function fileSha256(
  path: string,
  stats: FileStats,
  handle: FileHandle,
  maxBytes: number,
): Promise<string> {
  const key = `${path}\u0000${statKey(stats)}`
  const cached = fileHashes.get(key)
  if (cached !== undefined) return cached
  const hashing = hashFile(handle, maxBytes).then(
    async (sha256) => {
      // Written while it was read: the hash is of neither version, and not kept.
      const after = await handle.stat({ bigint: true }).catch(() => undefined)
      if (after?.size !== stats.size || after.ctimeNs !== stats.ctimeNs) fileHashes.delete(key)
      return sha256
    },
    (error: unknown) => {
      fileHashes.delete(key)
      throw error
    },
  )
  fileHashes.set(key, hashing)
  if (fileHashes.size > MAX_CACHED_FILES) fileHashes.delete(fileHashes.keys().next().value!)
  return hashing
}

/** The bytes of `handle` streamed through sha256 (4 MiB at a time), counted (`fingerprintStats`). */
async function hashFile(handle: FileHandle, maxBytes: number): Promise<string> {
  fingerprintStats.filesHashed++
  const hash = createHash('sha256')
  await readChunksUpTo(handle, maxBytes, (chunk) => hash.update(chunk))
  return hash.digest('hex')
}
