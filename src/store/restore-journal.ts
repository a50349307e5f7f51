/**
 * A snapshot restore's journal: before `commitStagedIndexes` renames the first of several
 * libraries' staged indexes into place, it writes (whole, flushed, then renamed into place) a
 * file `.toolsel-restore+<pid>.<start>-<hex>` in the index directory naming, for each library,
 * its staged work directory (and that directory's inode, which the rename keeps) and the `.old-`
 * directory its previous index is moved to. The journal is removed once every library is in:
 * that is the restore's commit point.
 *
 * A restore that stops between its renames (killed, SIGKILL, a power loss) is undone whole by
 * the next recovery of the index directory (`recoverIndexDir`: a server's start, its index
 * watch, any `toolsel` command that lists the directory), once the restoring process is dead:
 * last first, each library whose index in place is the staged one is moved back out, and its
 * previous index renamed back; then the staged directories and the journal are removed. Undo
 * rather than finish: what was there before is whole on disk, while finishing would need every
 * staged directory intact. The same undo runs in the process when a rename fails part-way.
 *
 * When the undo itself fails (a file where a directory must go back), it stops there: the
 * journal stays, and what is left where is reported (`UndoLeft`); a later recovery tries again,
 * on a backoff (`undoBackoff`: 2 s, doubled after each failure, at most a minute) unless what is
 * in its way changed first (`undoDue`): a server's index watch polls every 2 s, and each try
 * takes every library's lock. The try that finally succeeds is reported too.
 * @module
 */
import { lstat, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import { z } from 'zod'
import { LIBRARY_NAME_PATTERN } from '../library/tool-library.ts'
import { readFileUpTo } from '../read-text-file.ts'
import { parseWorkEntry } from './index-dir-claims.ts'

const JOURNAL_FORMAT = 'toolsel-restore-journal'
const JOURNAL_VERSION = 1
/** Largest journal read (about 150 bytes a library). */
const JOURNAL_MAX_BYTES = 1024 * 1024

/** One library of a restore: its staged directory and where its previous index goes. */
export interface JournalLibrary {
  name: string
  /** The staged work directory's name in the index directory (`.tmp-<name>+…`). */
  staged: string
  /** Where its previous index is moved aside (`.old-<name>+…`). */
  old: string
  /** The staged directory's device and inode (decimal): the index in place is it after its rename. */
  dev: string
  ino: string
}

const JournalSchema = z.object({
  format: z.literal(JOURNAL_FORMAT),
  version: z.literal(JOURNAL_VERSION),
  libraries: z.array(
    z
      .object({
        name: z.string().regex(LIBRARY_NAME_PATTERN),
        staged: z.string(),
        old: z.string(),
        dev: z.string().regex(/^\d+$/),
        ino: z.string().regex(/^\d+$/),
      })
      .refine(
        ({ name, staged, old }) =>
          parseWorkEntry(staged)?.kind === 'tmp' &&
          parseWorkEntry(staged)?.name === name &&
          parseWorkEntry(old)?.kind === 'old' &&
          parseWorkEntry(old)?.name === name,
        'work directories of the library named',
      ),
  ),
})

/** The journal's entry for each library, its staged directory's identity read now. */
export async function journalLibraries(
  indexDir: string,
  entries: readonly { name: string; temporary: string; old: string }[],
): Promise<JournalLibrary[]> {
  return Promise.all(
    entries.map(async ({ name, temporary, old }) => {
      const found = await stat(temporary, { bigint: true })
      return {
        name,
        staged: basename(temporary),
        old: basename(old),
        dev: found.dev.toString(),
        ino: found.ino.toString(),
      }
    }),
  )
}

/**
 * Writes the journal at `path`: into `<path>.partial`, flushed, renamed into place, and the
 * directory flushed, so that it is on the disk whole before any rename it describes.
 */
export async function writeJournal(
  path: string,
  libraries: readonly JournalLibrary[],
  sync: (path: string) => Promise<void>,
): Promise<void> {
  const partial = `${path}.partial`
  const text = JSON.stringify({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, libraries })
  try {
    await writeFile(partial, `${text}\n`, { flag: 'wx' })
    await sync(partial)
    await rename(partial, path)
  } catch (error) {
    await rm(partial, { force: true })
    throw error
  }
  await sync(join(path, '..'))
}

/**
 * The libraries of the journal at `path`; undefined when it is not one this version reads, null
 * when it is gone (another process finished its undo meanwhile).
 */
export async function readJournal(path: string): Promise<JournalLibrary[] | undefined | null> {
  try {
    const text = await readFileUpTo(path, JOURNAL_MAX_BYTES, { regularOnly: true }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null
        throw error
      },
    )
    if (text === null) return null
    const parsed = JournalSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data.libraries : undefined
  } catch {
    return undefined
  }
}

/** What an undo that failed left: per library not undone, where its indexes are. */
export interface UndoLeft {
  /** The library whose undo step failed, and why. */
  failed: { name: string; reason: string }
  /** Libraries not undone (the failed one first), each with what is where (entry names). */
  libraries: { name: string; inPlace: 'restored' | 'previous' | 'none'; previousIn?: string }[]
}

/**
 * Undoes the renames of a restore whose journal lists `libraries`, last first (see the module
 * comment): undefined once all are undone, the staged directories and the journal at `journal`
 * removed; else what is left where, the journal kept. The caller holds every library's lock.
 */
export async function undoRestore(
  indexDir: string,
  journal: string,
  libraries: readonly JournalLibrary[],
  sync: (path: string) => Promise<void>,
): Promise<UndoLeft | undefined> {
  const reversed = [...libraries].reverse()
  for (const [index, library] of reversed.entries()) {
    const target = join(indexDir, library.name)
    const old = join(indexDir, library.old)
    try {
      // The staged index is in place: back where it was staged (removed below).
      if (await isStaged(target, library)) await rename(target, join(indexDir, library.staged))
      // Its previous index moved aside: back into place.
      if ((await isDirectory(old)) && !(await exists(target))) await rename(old, target)
    } catch (error) {
      const left = await Promise.all(
        reversed.slice(index).map(async (one) => {
          const place = join(indexDir, one.name)
          const inPlace: 'restored' | 'previous' | 'none' = (await isStaged(place, one))
            ? 'restored'
            : (await exists(place))
              ? 'previous'
              : 'none'
          const previousIn = (await isDirectory(join(indexDir, one.old))) ? one.old : undefined
          return { name: one.name, inPlace, ...(previousIn && { previousIn }) }
        }),
      )
      return {
        failed: {
          name: library.name,
          // The errno only: its message names this host's paths.
          reason: (error as NodeJS.ErrnoException).code ?? String(error),
        },
        libraries: left,
      }
    }
  }
  await sync(indexDir)
  for (const library of libraries)
    await rm(join(indexDir, library.staged), { recursive: true, force: true })
  await rm(journal, { force: true })
  await sync(indexDir)
  return undefined
}

/**
 * What is left where after a failed undo, in words, with entry names of the index directory
 * only (`<library.indexDir>/<entry>` in an HTTP answer, the directory itself in a log).
 */
export function describeLeft(left: UndoLeft, journal: string): string {
  const where = left.libraries.map(({ name, inPlace, previousIn }) => {
    const now =
      inPlace === 'restored'
        ? `the snapshot's index is in place`
        : inPlace === 'previous'
          ? 'its previous index is in place'
          : 'no index is in place'
    return `"${name}": ${now}${previousIn === undefined ? '' : `, its previous index is in ${previousIn}`}`
  })
  return `Undoing the restore failed at library "${left.failed.name}" (${left.failed.reason}); left as it is: ${where.join('; ')}. The restore journal ${basename(journal)} is kept: the next recovery of the index directory (a toolsel start, a server's index watch, any toolsel command on it) undoes the restore whole once the obstacle is gone.`
}

/** Whether `path` is the staged directory `library` names (same device and inode). */
async function isStaged(path: string, library: JournalLibrary): Promise<boolean> {
  const found = await lstat(path, { bigint: true }).catch(() => undefined)
  return (
    found !== undefined &&
    found.isDirectory() &&
    found.dev.toString() === library.dev &&
    found.ino.toString() === library.ino
  )
}

async function isDirectory(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isDirectory() ?? false
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined
}

/**
 * The wait before a failed undo is tried again: `firstMs` after the first failure, doubled after
 * each, at most `maxMs`. Tests shorten it; nothing else changes it.
 */
export const undoBackoff = { firstMs: 2000, maxMs: 60_000 }

/** Undos that failed in this process, by journal path: tries so far, when the next is due. */
const stuckUndos = new Map<string, { tries: number; dueAt: number; stamp: string }>()

/**
 * Whether the undo of `journal` is to be tried now: it never failed here, its backoff is over, or
 * what is in its way changed since it last failed (`undoStamp`).
 */
export async function undoDue(
  indexDir: string,
  journal: string,
  libraries: readonly JournalLibrary[],
): Promise<boolean> {
  const stuck = stuckUndos.get(journal)
  return (
    stuck === undefined ||
    Date.now() >= stuck.dueAt ||
    (await undoStamp(indexDir, journal, libraries)) !== stuck.stamp
  )
}

/** The undo of `journal` failed (again): its next try waits (`undoBackoff`). */
export async function undoFailed(
  indexDir: string,
  journal: string,
  libraries: readonly JournalLibrary[],
): Promise<void> {
  const tries = (stuckUndos.get(journal)?.tries ?? 0) + 1
  const wait = Math.min(undoBackoff.firstMs * 2 ** (tries - 1), undoBackoff.maxMs)
  const stamp = await undoStamp(indexDir, journal, libraries)
  stuckUndos.set(journal, { tries, dueAt: Date.now() + wait, stamp })
}

/** The undo of `journal` succeeded: the tries it failed before (0: none), forgotten. */
export function undoSucceeded(journal: string): number {
  const tries = stuckUndos.get(journal)?.tries ?? 0
  stuckUndos.delete(journal)
  return tries
}

/**
 * The journals of `indexDir` whose undo failed here and that are gone from its `entries` (another
 * process undid the restore, or the journal was removed), forgotten.
 */
export function goneStuckJournals(indexDir: string, entries: readonly string[]): string[] {
  const gone: string[] = []
  for (const journal of stuckUndos.keys()) {
    if (resolve(journal, '..') === resolve(indexDir) && !entries.includes(basename(journal))) {
      stuckUndos.delete(journal)
      gone.push(journal)
    }
  }
  return gone
}

/**
 * What is in the way of an undo, as `lstat` sees it: the journal, each library's entry, staged
 * and `.old-` names, and the index directory's owner and mode. Not the index directory's times:
 * every try (this process's, another server's) takes and drops lock files there.
 */
async function undoStamp(
  indexDir: string,
  journal: string,
  libraries: readonly JournalLibrary[],
): Promise<string> {
  const names = [journal, ...libraries.flatMap(({ name, staged, old }) => [name, staged, old])]
  const stamps = await Promise.all(
    names.map(async (name) => {
      const found = await lstat(join(indexDir, name), { bigint: true }).catch(() => undefined)
      return found === undefined ? '-' : `${found.ino}:${found.mode}:${found.size}:${found.ctimeNs}`
    }),
  )
  const dir = await lstat(indexDir, { bigint: true }).catch(() => undefined)
  return [`${dir?.mode}:${dir?.uid}:${dir?.gid}`, ...stamps].join(' ')
}
