/**
 * What several processes writing one index directory (`toolsel serve --workers N`, a CLI
 * `toolsel index` next to a server) need to keep out of each other's way:
 *
 * - work directories (`.tmp-<name>+<pid>.<start>-<hex>`, `.old-<name>+<pid>.<start>-<hex>`) carry
 *   the writing process's pid and start time, so a recovery leaves those of a live writer alone
 *   (`isAbandoned`);
 * - one lock file per library (`.lock-<name>`, made with `wx`, holding `<pid> <start>`) serialises
 *   the commits of one library across processes (`withLibraryLock`). It is held only for the
 *   renames of a commit (milliseconds), never for a build; a lock whose writer is gone, or older
 *   than 5 s, is stale and broken (taken away as `.lock-<name>+<pid>.<start>-<hex>` first: one
 *   left by a breaker that died is removed by the next recovery, `isStrayLock`).
 *
 * A writer is alive when `process.kill(pid, 0)` does not fail with ESRCH and, where Linux says
 * when the process with that pid started (`/proc/<pid>/stat`), it started when the writer did:
 * a writer that crashed and whose pid another process has since is dead. Without a start time
 * (another system, or names written before round 27: `+<pid>-<hex>`) the pid alone decides.
 * This process's own pid is alive only for the paths it is using now (`claim`): an entry of its
 * pid that it does not use was left by a crashed predecessor that had the same pid (a container
 * restarts with pid 1).
 *
 * Only names of this grammar (and of the versions before it) are ever touched; one that looks
 * like a writer's but does not parse (another version's) is left alone and reported once. The
 * marker `.toolsel-writer-protocol` names the grammar's version (`WRITER_PROTOCOL`): a writer
 * makes it when missing and refuses to write, and a recovery to touch anything, where it names
 * another one, so that a future change of these names can bump it and be safe from this code.
 * @module
 */
import { randomBytes } from 'node:crypto'
import { constants, readFileSync } from 'node:fs'
import { copyFile, link, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolselError } from '../errors.ts'
import { FileTooLargeError, readFileUpTo } from '../read-text-file.ts'

/** How long a commit waits for another process's commit of the same library by default. */
export const LIBRARY_LOCK_TIMEOUT_MS = 10_000

/**
 * A lock is held for a commit's renames (milliseconds): one older than this was left by a writer
 * that died (also when its pid now belongs to another process, or it died before writing it).
 */
const LOCK_STALE_MS = 5_000

/** Work directories and lock files this process is using now (full paths). */
const claimed = new Set<string>()

/** A library name (LIBRARY_NAME_PATTERN), as a part of the names below. */
const NAME = '[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}'
/**
 * `.tmp-<name>+<pid>.<start>-<hex>` / `.old-<name>+<pid>.<start>-<hex>` (`+` is in no library
 * name); `.<start>` is absent where the start time is unknown and in names before round 27.
 */
const WORK_ENTRY = new RegExp(`^\\.(tmp|old)-(${NAME})\\+(\\d+)(?:\\.(\\d+))?-[0-9a-f]{12}$`)
/** A lock taken away by `breakStale`: `.lock-<name>+<pid>.<start>-<hex>`. */
const AWAY_LOCK_ENTRY = new RegExp(`^\\.lock-${NAME}\\+(\\d+)(?:\\.(\\d+))?-[0-9a-f]{12}$`)
/**
 * A snapshot restore's journal (restore-journal.ts): `.toolsel-restore+<pid>.<start>-<hex>`, and
 * `….partial` while it is written.
 */
const JOURNAL_ENTRY = /^\.toolsel-restore\+(\d+)(?:\.(\d+))?-[0-9a-f]{12}(\.partial)?$/
/** A library's lock: `.lock-<name>`. */
const LOCK_ENTRY = new RegExp(`^\\.lock-${NAME}$`)
/** The names written before work directories carried a pid: `.tmp-<name>-<hex>`, `.old-…`. */
const LEGACY_ENTRY = new RegExp(`^\\.(tmp|old)-(${NAME})-[0-9a-f]{12}$`)
/**
 * Entries that look like some toolsel version's work of writing (a work directory, a lock, a
 * marker) but that this version can't parse: another version's, left alone
 * (`isUnknownWriterEntry`).
 */
const WRITER_LIKE_ENTRY = /^\.(tmp|old|lock|toolsel)-/

/** A new work directory's path for library `name`: `.tmp-` (being written) or `.old-` (replaced). */
export function workDirPath(indexDir: string, kind: 'tmp' | 'old', name: string): string {
  return join(indexDir, `.${kind}-${name}${uniqueSuffix()}`)
}

/** A new restore journal's path in `indexDir` (see JOURNAL_ENTRY). */
export function restoreJournalPath(indexDir: string): string {
  return join(indexDir, `.toolsel-restore${uniqueSuffix()}`)
}

/** The restore journal that `entry` names: its writer, and whether it is still being written. */
export function parseJournalEntry(
  entry: string,
): { pid: number; start?: number; partial: boolean } | undefined {
  const found = JOURNAL_ENTRY.exec(entry)
  if (!found) return undefined
  return {
    pid: Number(found[1]),
    ...(found[2] !== undefined && { start: Number(found[2]) }),
    partial: found[3] !== undefined,
  }
}

/** `+<pid>.<start>-<hex>` (`+<pid>-<hex>` when the start time is unknown): this process's, unique. */
function uniqueSuffix(): string {
  const start = ownStartTime()
  return `+${process.pid}${start === undefined ? '' : `.${start}`}-${randomBytes(6).toString('hex')}`
}

let ownStart: { value: number | undefined } | undefined

function ownStartTime(): number | undefined {
  ownStart ??= { value: startTime(process.pid) }
  return ownStart.value
}

/**
 * When the process `pid` started (clock ticks after boot, `/proc/<pid>/stat` field 22); undefined
 * where there is no such file (not Linux) or no such process.
 */
export function startTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    // After the command in parentheses (which may hold spaces and parentheses): field 3 on.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[19])
    return Number.isSafeInteger(ticks) ? ticks : undefined
  } catch {
    return undefined
  }
}

/** Marks `path` as in use by this process until `release(path)`. */
export function claim(path: string): void {
  claimed.add(path)
}

export function release(path: string): void {
  claimed.delete(path)
}

/** A work directory entry of an index directory: what it is, for which library, by which pid. */
export interface WorkEntry {
  kind: 'tmp' | 'old'
  /** The library's name. */
  name: string
  /** The writing process; undefined for the names written before pids were (abandoned). */
  pid: number | undefined
  /** When the writing process started (`startTime`); undefined when its name does not say. */
  start?: number
}

/**
 * The work directory that `entry` names, when it is one of this version's grammar (or of the
 * versions before it); undefined for anything else, which a recovery leaves alone.
 */
export function parseWorkEntry(entry: string): WorkEntry | undefined {
  const current = WORK_ENTRY.exec(entry)
  if (current) {
    return {
      kind: current[1] as 'tmp' | 'old',
      name: current[2],
      pid: Number(current[3]),
      ...(current[4] !== undefined && { start: Number(current[4]) }),
    }
  }
  const legacy = LEGACY_ENTRY.exec(entry)
  if (legacy) return { kind: legacy[1] as 'tmp' | 'old', name: legacy[2], pid: undefined }
  return undefined
}

/**
 * True for an index directory entry that looks like a writer's (`.tmp-`, `.old-`, `.lock-`,
 * `.toolsel-`) but is none this version knows: a newer (or other) version's work directory, lock
 * or marker, which a recovery must leave alone whatever it holds.
 */
export function isUnknownWriterEntry(entry: string): boolean {
  return (
    WRITER_LIKE_ENTRY.test(entry) &&
    entry !== WRITER_PROTOCOL_FILE &&
    parseWorkEntry(entry) === undefined &&
    !JOURNAL_ENTRY.test(entry) &&
    !AWAY_LOCK_ENTRY.test(entry) &&
    !LOCK_ENTRY.test(entry)
  )
}

/** True when nobody uses the work entry at `path` any more: its writer is dead (or unknown). */
export function isAbandoned(
  path: string,
  entry: { pid: number | undefined; start?: number },
): boolean {
  return entry.pid === undefined || !holderAlive(entry.pid, entry.start, path)
}

/**
 * True for an index directory entry that `breakStale` left: a stale lock taken away by a process
 * that then died (within milliseconds of taking it: a live one removes it itself).
 */
export function isStrayLock(path: string, entry: string): boolean {
  const away = AWAY_LOCK_ENTRY.exec(entry)
  if (!away) return false
  const start = away[2] === undefined ? undefined : Number(away[2])
  return !holderAlive(Number(away[1]), start, path)
}

function holderAlive(pid: number, start: number | undefined, path: string): boolean {
  if (pid === process.pid) return claimed.has(path)
  if (!processAlive(pid)) return false
  // The pid's process now is another one than the writer when it started at another time.
  const now = start === undefined ? undefined : startTime(pid)
  return now === undefined || now === start
}

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  // kill(0) and negative pids signal process groups: never a writer's pid.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function lockPath(indexDir: string, name: string): string {
  return join(indexDir, `.lock-${name}`)
}

/**
 * Runs `work` holding library `name`'s lock in `indexDir`, waited for up to `timeoutMs` (then
 * LIBRARY_BUSY, a 503: retry). Within one process the callers serialise their writes already;
 * the lock orders them with other processes'.
 */
export async function withLibraryLock<T>(
  indexDir: string,
  name: string,
  work: () => Promise<T>,
  timeoutMs = LIBRARY_LOCK_TIMEOUT_MS,
): Promise<T> {
  const path = lockPath(indexDir, name)
  const deadline = Date.now() + timeoutMs
  let pause = 2
  while (!(await tryLock(path))) {
    if (Date.now() >= deadline) {
      const holder = await readHolder(path)
      throw new ToolselError(
        'LIBRARY_BUSY',
        `Library "${name}" is being saved by another process${holder?.pid === undefined ? '' : ` (pid ${holder.pid})`}: its lock ${path} was not free within ${timeoutMs} ms. Retry; a lock whose process is gone is taken over by itself.`,
        { details: { library: name } },
      )
    }
    await new Promise((resolve) => setTimeout(resolve, pause))
    pause = Math.min(pause * 2, 50)
  }
  try {
    return await work()
  } finally {
    await unlock(path)
  }
}

/**
 * Runs `work` holding the locks of every library in `names` at once (a snapshot restore's
 * renames, undone together when one fails). They are taken all or none: when one is held by
 * another process, those taken are released and all are tried again a little later (never held
 * while waiting, where they could grow stale for others), up to `timeoutMs` (then LIBRARY_BUSY).
 */
export async function withLibraryLocks<T>(
  indexDir: string,
  names: readonly string[],
  work: () => Promise<T>,
  timeoutMs = LIBRARY_LOCK_TIMEOUT_MS,
): Promise<T> {
  const paths = [...new Set(names)].sort().map((name) => lockPath(indexDir, name))
  const deadline = Date.now() + timeoutMs
  let pause = 2
  for (;;) {
    const taken: string[] = []
    let busy: string | undefined
    try {
      for (const path of paths) {
        if (await tryLock(path)) taken.push(path)
        else {
          busy = path
          break
        }
      }
    } catch (error) {
      await Promise.all(taken.map(unlock))
      throw error
    }
    if (busy === undefined) {
      try {
        return await work()
      } finally {
        await Promise.all(taken.map(unlock))
      }
    }
    await Promise.all(taken.map(unlock))
    if (Date.now() >= deadline) {
      const name = busy.slice(join(indexDir, '.lock-').length)
      throw new ToolselError(
        'LIBRARY_BUSY',
        `Library "${name}" is being saved by another process: its lock was not free within ${timeoutMs} ms. Retry; a lock whose process is gone is taken over by itself.`,
        { details: { library: name } },
      )
    }
    await new Promise((resolve) => setTimeout(resolve, pause))
    pause = Math.min(pause * 2, 50)
  }
}

/**
 * One try at library `name`'s lock, taking over a stale one (dead pid) on the way; true when it
 * is held. `withLibraryLock` waits; a recovery that finds the lock held leaves its work for later.
 */
export async function tryLibraryLock(indexDir: string, name: string): Promise<boolean> {
  return tryLock(lockPath(indexDir, name))
}

/** Releases what `tryLibraryLock` took. */
export async function unlockLibrary(indexDir: string, name: string): Promise<void> {
  await unlock(lockPath(indexDir, name))
}

async function unlock(path: string): Promise<void> {
  release(path)
  await rm(path, { force: true })
}

async function tryLock(path: string): Promise<boolean> {
  if (claimed.has(path)) return false
  // A second try after taking a stale lock away.
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const start = ownStartTime()
      await writeFile(path, `${process.pid}${start === undefined ? '' : ` ${start}`}\n`, {
        flag: 'wx',
      })
      claim(path)
      return true
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
        throw new ToolselError(
          'INDEX_WRITE_FAILED',
          `The lock ${path} can't be made (${(error as Error).message}): its index directory is read-only, or not writable by the user running toolsel, and toolsel takes that lock to change a library there or to check that what it serves is what is saved there (a server's start-up re-check when the disk changed). Nothing was changed. Make the directory writable, or serve a copy of it from a writable one.`,
          { cause: error, details: { path, errno: code } },
        )
      if (code !== 'EEXIST') throw error
    }
    if (!(await breakStale(path))) return false
  }
  return false
}

/** Removes the lock at `path` when it is stale; true when it did. */
async function breakStale(path: string): Promise<boolean> {
  const holder = await readHolder(path)
  if (holder === undefined || !isStale(path, holder)) return false
  // Take the stale lock away under a name of our own, then look at what was taken: another
  // process may have broken it and locked anew in between, and its lock goes back.
  const away = `${path}${uniqueSuffix()}`
  claim(away)
  try {
    await rename(path, away)
  } catch {
    release(away)
    return false
  }
  try {
    const taken = await readHolder(away)
    const live = taken !== undefined && !isStale(path, taken)
    if (live) await link(away, path).catch(() => undefined)
    await rm(away, { force: true })
    return !live
  } finally {
    release(away)
  }
}

interface LockHolder {
  pid: number | undefined
  start: number | undefined
  ageMs: number
}

/**
 * Most bytes read of a lock (`<pid> <start>`: under 40) or of the writer-protocol marker (26): a
 * larger file is read as one of unknown content, a FIFO or device at the name not at all.
 */
const CLAIM_FILE_MAX_BYTES = 256

async function readHolder(path: string): Promise<LockHolder | undefined> {
  try {
    const [text, info] = await Promise.all([
      // A larger file holds no pid of ours: it is stale by its age alone.
      readFileUpTo(path, CLAIM_FILE_MAX_BYTES, { regularOnly: true }).catch((error: unknown) => {
        if (error instanceof FileTooLargeError) return ''
        throw error
      }),
      stat(path),
    ])
    // `<pid> <start>`, or `<pid>` (no start time known; locks before round 27).
    const held = /^(\d+)(?: (\d+))?$/.exec(text.trim())
    return {
      pid: held ? Number(held[1]) : undefined,
      start: held?.[2] === undefined ? undefined : Number(held[2]),
      ageMs: Date.now() - info.mtimeMs,
    }
  } catch {
    return undefined
  }
}

function isStale(path: string, holder: LockHolder): boolean {
  if (holder.ageMs > LOCK_STALE_MS) return true
  // Empty: made with `wx` and its pid not written yet.
  return holder.pid !== undefined && !holderAlive(holder.pid, holder.start, path)
}

/**
 * The index directory's writer-protocol marker: which grammar of work directory and lock names
 * (and which rules for them) its writers follow. A writer of this version makes it when it is
 * missing and refuses to write when it names a protocol it does not know (a newer version's),
 * so that a later change of these names can bump it and be safe from this version.
 */
export const WRITER_PROTOCOL_FILE = '.toolsel-writer-protocol'
/**
 * 1: `.tmp-/.old-<name>+<pid>.<start>-<hex>` (`+<pid>-<hex>` and `-<hex>` read as before),
 * `.lock-<name>` holding `<pid> <start>`, taken away as `.lock-<name>+<pid>.<start>-<hex>`.
 */
export const WRITER_PROTOCOL = 1

const PROTOCOL_TEXT = /^toolsel-writer-protocol (\d+)\n$/

/**
 * The protocol the marker in `indexDir` names: undefined when there is none (a directory no
 * writer of round 28 or later has written), NaN when it can't be read or parsed (a format this
 * version does not know).
 */
export async function writerProtocol(indexDir: string): Promise<number | undefined> {
  return (await readWriterProtocol(indexDir)).protocol
}

/** `writerProtocol`, with the error that kept the marker from being read (NaN then). */
async function readWriterProtocol(
  indexDir: string,
): Promise<{ protocol: number | undefined; unreadable?: NodeJS.ErrnoException }> {
  const path = join(indexDir, WRITER_PROTOCOL_FILE)
  for (let attempt = 0; ; attempt++) {
    let text: string
    try {
      text = await readFileUpTo(path, CLAIM_FILE_MAX_BYTES, { regularOnly: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { protocol: undefined }
      // Past the bound: text of a format this version does not know, as a marker it can't parse.
      if (error instanceof FileTooLargeError) return { protocol: Number.NaN }
      return { protocol: Number.NaN, unreadable: error as NodeJS.ErrnoException }
    }
    const parsed = PROTOCOL_TEXT.exec(text)
    if (parsed) return { protocol: Number(parsed[1]) }
    // Empty: a copy (no hard links) made by another writer a moment ago, not written yet.
    if (text !== '' || attempt >= 5) return { protocol: Number.NaN }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * A marker that can't be read at all (no permission, a directory or a FIFO in its place) says
 * nothing of the protocol: INDEX_WRITE_FAILED naming the file and the errno, not a newer writer.
 */
function unreadableMarker(indexDir: string, error: NodeJS.ErrnoException): ToolselError {
  const path = join(indexDir, WRITER_PROTOCOL_FILE)
  const permission = error.code === 'EACCES' || error.code === 'EPERM'
  return new ToolselError(
    'INDEX_WRITE_FAILED',
    `Index directory ${indexDir}: its writer-protocol marker ${path} can't be read (${error.message})${permission ? ': the user running toolsel has no permission to read it' : ''}. toolsel reads it before it writes there, and writes nothing without it; nothing was changed. ${permission ? 'Give this user read access to it' : 'Make it a readable file'} (it holds "toolsel-writer-protocol ${WRITER_PROTOCOL}" when written by this version), or give toolsel another index directory (library.indexDir, TOOLSEL_INDEX_DIR).`,
    { cause: error, details: { indexDir, path, errno: error.code } },
  )
}

/**
 * Before a write to `indexDir`: fails (INDEX_MISMATCH) when its marker names another protocol
 * than this version's, changing nothing. With `scratch` (a save's own work directory), makes the
 * marker when there is none: written whole there, then linked into place, so that no reader sees
 * it half-written and none made meanwhile by another writer is replaced.
 */
export async function requireWriterProtocol(indexDir: string, scratch?: string): Promise<void> {
  let read = await readWriterProtocol(indexDir)
  let found = read.protocol
  if (found === undefined && scratch !== undefined) {
    const made = join(scratch, WRITER_PROTOCOL_FILE)
    const target = join(indexDir, WRITER_PROTOCOL_FILE)
    await writeFile(made, `toolsel-writer-protocol ${WRITER_PROTOCOL}\n`)
    try {
      await link(made, target).catch(async (error: NodeJS.ErrnoException) => {
        // No hard links on this file system: a copy that never replaces one (26 bytes).
        if (error.code !== 'EEXIST') await copyFile(made, target, constants.COPYFILE_EXCL)
        else throw error
      })
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    } finally {
      await rm(made, { force: true })
    }
    read = await readWriterProtocol(indexDir)
    found = read.protocol
  }
  if (found === undefined || found === WRITER_PROTOCOL) return
  if (read.unreadable) throw unreadableMarker(indexDir, read.unreadable)
  throw new ToolselError(
    'INDEX_MISMATCH',
    `Index directory ${indexDir} is written by ${Number.isNaN(found) ? 'a version of toolsel whose writer protocol this one can not read' : `toolsel writer protocol ${found}`} (${WRITER_PROTOCOL_FILE}); this version writes protocol ${WRITER_PROTOCOL} and does not write there, so as not to take a newer writer's work for a crashed one's. Upgrade this toolsel, or give it another index directory (library.indexDir, TOOLSEL_INDEX_DIR).`,
  )
}

/** Unknown entries reported already (index directory and entry), so each is reported once. */
const reported = new Set<string>()

/**
 * Where warnings about an index directory go (an entry left alone): `process.emitWarning` by
 * default (a program that imports the store); the `toolsel` CLI prints them as its own
 * "Warning:" lines (src/main.ts) and `toolsel serve` sends them to its logger (one process, one
 * logger: the once-per-process record above is process-wide too).
 */
export const indexDirWarnings = {
  report: (message: string): void => process.emitWarning(message, 'ToolselWarning'),
}

/** Reports once per process that `entry` of `indexDir` is left alone (`isUnknownWriterEntry`). */
export function reportUnknownEntry(indexDir: string, entry: string): void {
  const key = join(indexDir, entry)
  if (reported.has(key)) return
  reported.add(key)
  indexDirWarnings.report(
    `${key} looks like another toolsel version's work directory or lock (a name this version does not know): left alone. If no other toolsel version writes ${indexDir}, remove it by hand.`,
  )
}
