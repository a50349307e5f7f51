/**
 * Temporary files and directories that name their writer, and the sweep of those whose writer is
 * provably gone (a process killed mid-write: SIGKILL, a power loss). A name carries the writer's
 * tag `<pid>.<start>@<host>` (`.<start>` the process's start time, absent where it is unknown,
 * see index-dir-claims.ts `startTime`; `<host>` the first 8 hex digits of the SHA-256 of the host
 * name). Used by snapshots (store/snapshot.ts), by the files written whole
 * (write-file-atomically.ts: `toolsel train --out`, `toolsel train-data`) and by the caches
 * written through a temporary file (`temporaryFile`: the embedding cache,
 * retrieve/dense/embedding-cache.ts, and the word-vectors cache, models/static/word-vectors.ts).
 * @module
 */
import { createHash, randomBytes } from 'node:crypto'
import { lstat, opendir, rm } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { escapeRegExp } from '../escape-regexp.ts'
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
 * The most entries of one directory a sweep looks at (`sweepDeadWriters`): a directory of
 * millions of entries (a user's output folder, /tmp) would otherwise be read whole at every
 * write. Entries come in the directory's own order, so in a larger one a leftover past the first
 * SWEEP_ENTRY_LIMIT may be left for good; an ordinary directory is looked at whole.
 */
export const SWEEP_ENTRY_LIMIT = 10_000

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
 * the next sweep, never an error. Looks at `limit` (SWEEP_ENTRY_LIMIT) entries at most, then
 * stops.
 */
export async function sweepDeadWriters(
  parent: string,
  pattern: RegExp,
  kind: 'directory' | 'file',
  limit = SWEEP_ENTRY_LIMIT,
): Promise<string[]> {
  const removed: string[] = []
  try {
    let looked = 0
    // opendir reads the directory a batch at a time: a huge one is never read whole.
    for await (const dirent of await opendir(parent)) {
      looked += 1
      if (looked > limit) break
      await sweepEntry(parent, dirent.name, pattern, kind, removed)
    }
  } catch {
    // A directory that can't be read (or stops being readable): left for the next sweep.
  }
  return removed
}

/** sweepDeadWriters of one entry: adds its path to `removed` when it was removed. */
async function sweepEntry(
  parent: string,
  entry: string,
  pattern: RegExp,
  kind: 'directory' | 'file',
  removed: string[],
): Promise<void> {
  const found = pattern.exec(entry)
  if (!found || found[3] !== identity().host) return
  const path = join(parent, entry)
  const writer = {
    pid: Number(found[1]),
    ...(found[2] !== undefined && { start: Number(found[2]) }),
  }
  if (!isAbandoned(path, writer)) return
  const info = await lstat(path).catch(() => undefined)
  if (!(kind === 'directory' ? info?.isDirectory() : info?.isFile())) return
  // Another user's (a shared directory such as /tmp): not this user's to remove, and one whose
  // owner can still write in it could swap a subdirectory for a symlink while `rm` walks it.
  if (process.getuid !== undefined && info!.uid !== process.getuid()) return
  try {
    await rm(path, { recursive: true, force: true })
    removed.push(path)
  } catch {
    // Left for the next sweep.
  }
}

/**
 * The temporary file this process writes `file` through before it renames it over `file`:
 * `<file>.<tag>.tmp` (the writer's tag, WRITER_TAG_SOURCE), or with `unique`
 * `<file>.<tag>-<12 hex>.tmp` (two writes of one file at once in one process keep apart). A
 * writer killed before its rename leaves it; the next `sweepTemporaryFiles` of `file` removes it.
 */
export function temporaryFile(file: string, { unique = false } = {}): string {
  return `${file}.${writerTag()}${unique ? `-${randomBytes(6).toString('hex')}` : ''}.tmp`
}

/**
 * Removes the temporary files (`temporaryFile`) of `files` that a writer that is provably gone
 * left (`sweepDeadWriters`: this host's, this user's, its process gone; never a live writer's),
 * looking in each file's directory; answers the paths removed.
 */
export async function sweepTemporaryFiles(files: readonly string[]): Promise<string[]> {
  const removed: string[] = []
  for (const dir of new Set(files.map((file) => dirname(file)))) {
    const names = files.filter((file) => dirname(file) === dir).map((file) => basename(file))
    const pattern = new RegExp(
      `^(?:${names.map(escapeRegExp).join('|')})\\.${WRITER_TAG_SOURCE}(?:-[0-9a-f]{12})?\\.tmp$`,
    )
    removed.push(...(await sweepDeadWriters(dir, pattern, 'file')))
  }
  return removed
}
