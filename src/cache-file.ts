/**
 * toolsel's own cache files (the converted word vectors and what is computed from them, the
 * saved demo's fingerprint): where they are kept, how they are read (only under
 * `cacheTrustProblem`'s rule) and written (atomically; a failure to write is no error: it is
 * only a cache).
 * @module
 */
import { constants } from 'node:fs'
import { mkdir, open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { cacheTrustProblem } from './trusted-path.ts'
import { replaceCacheFile } from './write-file-atomically.ts'

/** A place for a cache file; `shared`: the per-user directory in the OS temp directory. */
export interface CacheFile {
  file: string
  shared: boolean
}

/**
 * Where cache file `name` is kept, in order: `node_modules/.cache/toolsel/` (written by whoever
 * installed the package), else in the OS temp directory (`shared`: one directory per user, made
 * private). Either is read only under `cacheTrustProblem`'s rule.
 */
export function cacheFileCandidates(nodeModules: string, name: string): CacheFile[] {
  const user = process.getuid?.() ?? 'user'
  return [
    { file: join(nodeModules, '.cache', 'toolsel', name), shared: false },
    { file: join(tmpdir(), `toolsel-cache-${user}`, name), shared: true },
  ]
}

/**
 * Writes `data` to `file` (write-file-atomically.ts `replaceCacheFile`: a temporary file renamed
 * over it; the temp file (tens of MB) a writer killed mid-write left is removed, and `log` says
 * so); false when it can't be written. The per-user directory in the OS temp directory (`shared`)
 * is made 0700; the one next to the package as the umask has it, so that a service running as
 * another user than the installer (the Docker image converts as root and serves as `node`) can
 * read what was converted for it, instead of converting again at every start.
 */
export async function writeCacheFile(
  file: string,
  data: Uint8Array,
  log: (message: string) => void,
  shared: boolean,
): Promise<boolean> {
  try {
    await mkdir(dirname(file), { recursive: true, ...(shared && { mode: 0o700 }) })
    // Never writable by group or others, whatever the umask: a shared cache is read only so.
    for (const removed of await replaceCacheFile(file, data, { mode: 0o644 }))
      log(`Removed ${removed}: left half-written by a process that is gone`)
    return true
  } catch {
    return false
  }
}

/**
 * The bytes of cache file `file`, a regular file of at most `maxBytes` (else undefined, unread:
 * opened non-blocking, so a FIFO at the name does not hang the open) that `cacheTrustProblem`
 * finds nothing wrong with, in either place (checked on the handle that is read: a file another
 * uid than this process's or root's owns, or group or others can write, or in a directory any
 * user can write, is not read). No more than its size at the check is read.
 */
export async function readCacheFile(file: string, maxBytes: number): Promise<Buffer | undefined> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const info = await handle.stat()
    if (!info.isFile() || info.size > maxBytes) return undefined
    if (cacheTrustProblem(file, info) !== undefined) return undefined
    const bytes = Buffer.alloc(info.size)
    const { bytesRead } = await handle.read(bytes, 0, info.size, 0)
    return bytesRead === info.size ? bytes : undefined
  } finally {
    await handle.close()
  }
}
