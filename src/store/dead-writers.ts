/**
 * Temporary files and directories that name their writer, and the sweep of those whose writer is
 * provably gone (a process killed mid-write: SIGKILL, a power loss). A name carries the writer's
 * tag `<pid>.<start>@<host>` (`.<start>` the process's start time, absent where it is unknown,
 * see index-dir-claims.ts `startTime`; `<host>` the first 8 hex digits of the SHA-256 of the host
 * name). Used by snapshots (store/snapshot.ts) and by the files written whole
 * (write-file-atomically.ts: `toolsel train --out`, `toolsel train-data`).
 * @module
 */
import { createHash } from 'node:crypto'
import { lstat, readdir, rm } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { isAbandoned, startTime } from './index-dir-claims.ts'

/** A writer's tag in a name, as a regular expression source: groups pid, start, host. */
export const WRITER_TAG_SOURCE = String.raw`(\d+)(?:\.(\d+))?@([0-9a-f]{8})`

let ownIdentity: { start: number | undefined; host: string } | undefined

/** This process's start time and host key, as its temporary names carry them. */
function identity(): { start: number | undefined; host: string } {
  ownIdentity ??= {
    start: startTime(process.pid),
    host: createHash('sha256').update(hostname()).digest('hex').slice(0, 8),
  }
  return ownIdentity
}

/** This process's writer tag: `<pid>.<start>@<host>` (WRITER_TAG_SOURCE). */
export function writerTag(): string {
  const { start, host } = identity()
  return `${process.pid}${start === undefined ? '' : `.${start}`}@${host}`
}

/**
 * Removes the entries of `parent` that `pattern` matches (its groups 1-3 a writer's tag, as in
 * WRITER_TAG_SOURCE) and that are a `kind`, whose writer is provably gone: written on this host
 * (same host key) by a process that is no longer alive, or whose pid now belongs to a process
 * that started at another time (index-dir-claims.ts `isAbandoned`; one of this process's own pid
 * only when this process does not hold it: `claim`). Left alone: a live writer's, another host's
 * (a shared disk: its processes can't be seen from here), names of any other shape, entries of
 * another kind, and one another user owns (its name proves nothing: anyone who can write in
 * `parent` can make one, and rm's walk of a directory could be turned by its owner). Answers the
 * paths removed; a directory that can't be read or an entry that can't be removed is left for
 * the next sweep, never an error.
 */
export async function sweepDeadWriters(
  parent: string,
  pattern: RegExp,
  kind: 'directory' | 'file',
): Promise<string[]> {
  let entries: string[]
  try {
    entries = await readdir(parent)
  } catch {
    return []
  }
  const removed: string[] = []
  for (const entry of entries) {
    const found = pattern.exec(entry)
    if (!found || found[3] !== identity().host) continue
    const path = join(parent, entry)
    const writer = {
      pid: Number(found[1]),
      ...(found[2] !== undefined && { start: Number(found[2]) }),
    }
    if (!isAbandoned(path, writer)) continue
    const info = await lstat(path).catch(() => undefined)
    if (!(kind === 'directory' ? info?.isDirectory() : info?.isFile())) continue
    // Another user's (a shared directory such as /tmp): not this user's to remove, and one whose
    // owner can still write in it could swap a subdirectory for a symlink while `rm` walks it.
    if (process.getuid !== undefined && info!.uid !== process.getuid()) continue
    try {
      await rm(path, { recursive: true, force: true })
      removed.push(path)
    } catch {
      // Left for the next sweep.
    }
  }
  return removed
}
