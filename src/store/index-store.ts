/**
 * Indexes on disk: `indexes/<library>/{manifest.json, tools.jsonl, bm25.bin, …}`. Save and load
 * live together so their formats can't drift apart.
 *
 * Writes are atomic at the directory level: everything is written into
 * `.tmp-<name>+<pid>.<start>-<random>/` and renamed into place. POSIX rename can't replace a
 * non-empty directory, so an existing index is first renamed to `.old-<name>+<pid>.<start>-<random>/`; if the process dies between the two renames,
 * `recoverIndexDir` (run before every load) moves the old index back. A crash therefore leaves
 * either the old index or the new one, never a half-written one.
 *
 * Several processes may write one index directory (`serve --workers N`): the two renames run
 * under the library's lock file (`.lock-<name>`, index-dir-claims.ts), so commits of one library
 * follow one another (the last committed wins), and a recovery touches only the work
 * directories of dead writers (the pid and its start time in their names).
 * @module
 */
import { removeOnSignal } from '../signal-cleanup.ts'
import { createHash } from 'node:crypto'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { testHoldPoint, testStopPoint } from '../config/env-vars.ts'
import type { Config } from '../config/schema.ts'
import { errorMessage, throwIfAborted, ToolselError } from '../errors.ts'
import { assertLibraryName, ToolLibrary, type ToolLineIndex } from '../library/tool-library.ts'
import { ToolsFile } from '../library/tools-file.ts'
import type { Logger } from '../log.ts'
import type { Retriever } from '../contracts.ts'
import type { IndexedLibrary } from './indexed-library.ts'
import { partNameProblem, requirePart, type RetrieverKind } from './kinds/index.ts'
import {
  INDEX_FORMAT_VERSION,
  IndexManifestSchema,
  MANIFEST_FILE,
  MAX_MANIFEST_BYTES,
  TOOLS_INDEX_FILE,
  manifestMismatch,
  readManifestText,
  rebuildHint,
  type IndexManifest,
} from './manifest.ts'
import { FileTooLargeError, NotRegularFileError } from '../read-text-file.ts'
import {
  readToolsIndexFile,
  writeToolsIndexFile,
  type KnownToolLines,
  type PreparedToolsIndex,
} from './tools-index-file.ts'
import { loadExamples, saveExamples } from './examples-part.ts'
import { pathExists } from './path-exists.ts'
import { recordIndexFiles } from './index-files-record.ts'
import { indexFileBound, indexFileProblem, readIndexFileBytes } from './index-file-read.ts'
import { isDiskFull, syncPath, syncTree } from '../write-file-atomically.ts'
import { MAX_TOOL_ID_CHARS, overlongIdPositions } from '../library/tool-id-limit.ts'
import {
  refusedNameCharacter,
  shownName,
  unshowableIdPositions,
} from '../library/name-characters.ts'
import {
  describeLeft,
  goneStuckJournals,
  journalLibraries,
  readJournal,
  undoDue,
  undoFailed,
  undoRestore,
  undoSucceeded,
  writeJournal,
  type UndoLeft,
} from './restore-journal.ts'
import {
  claim,
  isAbandoned,
  isStrayLock,
  isUnknownWriterEntry,
  parseJournalEntry,
  parseWorkEntry,
  release,
  reportUnknownEntry,
  requireWriterProtocol,
  restoreJournalPath,
  tryLibraryLock,
  unlockLibrary,
  withLibraryLock,
  withLibraryLocks,
  workDirPath,
  WRITER_PROTOCOL,
  writerProtocol,
  indexDirWarnings,
} from './index-dir-claims.ts'
import { assertTrustedPath } from '../trusted-path.ts'

export interface SaveOptions {
  /**
   * Called once everything is written, just before the index is renamed into place (the commit
   * point); throwing from it abandons the save and leaves the old index as it was.
   */
  beforeCommit?: () => void
  /**
   * The tools file's sha256 and `tools.idx` bytes, made beforehand for the library's tools file
   * bytes `toolLines` (an upload's import worker: `toolsIndexFileBytes`); written as they are
   * when the library's bytes are that very buffer, else made here.
   */
  toolsIndex?: PreparedToolsIndex
  /**
   * How long the commit waits for another process's commit of this library (its lock file),
   * then fails with LIBRARY_BUSY. Default LIBRARY_LOCK_TIMEOUT_MS.
   */
  lockTimeoutMs?: number
  /**
   * Called with the index's directory once it is committed, still holding the library's lock,
   * so that what is served changes in step with the disk: another process's load of the library
   * swaps its version in under that lock too (`syncSavedLibrary`), and so never replaces this
   * one with an older one. Synchronous; what it throws is thrown once the commit is done (the
   * index stays saved). `replaced`: an index of the library was saved there (this one took its
   * place); false when there was none (another process may have deleted it meanwhile).
   */
  onCommit?: (dir: string, replaced: boolean) => void
  /**
   * Called, instead of the save failing, when the index is committed (served, and what every
   * later load reads) but flushing the index directory to the disk afterwards failed (an
   * fsync's EIO): the write happened and is not undone (other processes may serve it already),
   * but it may not survive a crash of the machine. Default: `process.emitWarning`.
   */
  onUnsynced?: (warning: string) => void
  /**
   * Abandons the save (a stopping server's writes): checked between the files written into the
   * work directory (a write under way is cut off), and under the lock before `beforeCommit`.
   * Once aborted, the work directory is removed, nothing is committed, and the abort's error is
   * thrown (`throwIfAborted`); a commit already under way is finished.
   */
  signal?: AbortSignal
}

/**
 * The file system calls of the index store that a test replaces to make one fail as a failing
 * disk does (an fsync's EIO), which a real file system won't do on demand. Nothing else changes
 * them.
 */
export const indexFs = { syncPath }

/**
 * `indexFs.syncPath(indexDir)` after a change in it is committed (`what`: "Library x's save"):
 * a failure is reported to `onUnsynced`, never thrown, as the change has happened.
 */
export async function syncCommitted(
  indexDir: string,
  what: string,
  onUnsynced: ((warning: string) => void) | undefined,
): Promise<void> {
  try {
    await indexFs.syncPath(indexDir)
  } catch (error) {
    const reason = errorMessage(error)
    const warning = `${what} is committed in ${indexDir}, but flushing that directory to the disk failed (${reason}): it is served and saved, and may not survive a crash of the machine. Check the disk.`
    if (onUnsynced) onUnsynced(warning)
    else process.emitWarning(warning, 'ToolselDurabilityWarning')
  }
}

export async function saveIndexedLibrary(
  indexDir: string,
  indexed: IndexedLibrary,
  options: SaveOptions = {},
): Promise<string> {
  return (await stageIndexedLibrary(indexDir, indexed, options)).commit(options)
}

/** An index written whole into a work directory of its index directory, not committed yet. */
export interface StagedIndex {
  /** The library's name. */
  readonly name: string
  /**
   * Renames it into place (replacing the index of its name) under the library's lock, as
   * `saveIndexedLibrary` does; returns the index's directory. Once, and not after `discard`.
   */
  commit(options?: SaveOptions): Promise<string>
  /** Removes the work directory (nothing was committed). */
  discard(): Promise<void>
}

/**
 * The first half of `saveIndexedLibrary`: every file of `indexed` written into a work directory
 * (`.tmp-<name>+…`, left alone by other processes' recoveries while this one lives) and flushed
 * to the disk. Whatever fails here (a full disk, EACCES) removes the work directory and changed
 * nothing (INSUFFICIENT_STORAGE, INDEX_WRITE_FAILED). Several libraries staged first and then
 * committed (a snapshot restore) change nothing when one of them can't be written.
 */
export async function stageIndexedLibrary(
  indexDir: string,
  indexed: IndexedLibrary,
  options: Pick<SaveOptions, 'toolsIndex' | 'signal'> = {},
): Promise<StagedIndex> {
  const { signal } = options
  throwIfAborted(signal)
  const name = indexed.library.name
  assertLibraryName(name)
  const failedWrite = (error: unknown) => {
    throw writeFailed(name, indexDir, error)
  }
  await mkdir(indexDir, { recursive: true }).catch(failedWrite)
  const temporary = workDirPath(indexDir, 'tmp', name)
  claim(temporary)
  await mkdir(temporary).catch((error: unknown) => {
    release(temporary)
    failedWrite(error)
  })
  // Ctrl-C (SIGINT), SIGTERM or SIGHUP while it is written or waits for its commit removes it
  // (was left, 4 KB to the index's size, until the next writer's sweep); the commit's renames
  // are the journal's and the recovery's (restore-journal.ts).
  const stopCleanup = removeOnSignal(temporary)
  const discard = async () => {
    stopCleanup()
    await rm(temporary, { recursive: true, force: true })
    release(temporary)
  }
  try {
    await requireWriterProtocol(indexDir, temporary)
    const toolsPath = join(temporary, indexed.manifest.toolsFile)
    // A library loaded from an index whose tools file the load checked: that file copied in 1 MiB
    // blocks read and written off the event loop, its CRC-32 checked on the way against the
    // load's (a file changed in place since: INDEX_CORRUPT), so the manifest's sha256 and the
    // loaded line spans still describe the copy and are written as they are (until round 53 the
    // whole file was read into one buffer in one turn, then hashed, scanned and checksummed).
    const checked = indexed.library.checkedToolsFile()
    let toolLines: readonly Buffer[] = []
    // What tools.idx records of the copied file, and its sha256: the load's.
    let copied: { lines: KnownToolLines; sha256: string } | undefined
    if (checked) {
      const { sha256, crc32 } = await checked.file.copyTo(toolsPath, signal)
      const { starts, ends, file, ids, table } = checked
      const lines = {
        starts,
        ends,
        bytes: file.size,
        crc32,
        ...(table && { ids: { list: ids, table } }),
      }
      copied = { lines, sha256 }
    } else {
      // The bytes of a library over bytes (one chunk), or JSON.stringify of every tool, in
      // slices, for an uploaded one: chunks written in turn, never concatenated (a Buffer.concat
      // of the whole file was one turn of its own).
      toolLines = await indexed.library.toJsonLineChunksSliced(signal)
      await writeFile(toolsPath, toolLines, { signal })
    }
    testStopPoint('TOOLSEL_TEST_STOP_IN_INDEX_WRITE')
    await testHoldPoint('TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE', signal)
    for (const [name, entry] of Object.entries(indexed.manifest.retrievers)) {
      throwIfAborted(signal)
      const retriever = indexed.retrievers.get(name)
      if (!retriever) {
        throw new ToolselError(
          'INTERNAL',
          `Library "${indexed.library.name}" lists a ${name} retriever in its manifest but holds none to save.`,
        )
      }
      await requirePart(name).kind.save?.(retriever, entry, temporary)
    }
    throwIfAborted(signal)
    await saveExamples(indexed, temporary)
    throwIfAborted(signal)
    // The tools file's hash lets a load trust the manifest's content hash without hashing every
    // tool, and its index spares the load a scan of the file.
    const prepared =
      toolLines.length === 1 && options.toolsIndex?.toolLines === toolLines[0]
        ? options.toolsIndex
        : undefined
    const toolsFileHash = copied?.sha256 ?? prepared?.toolsFileHash ?? sha256Chunks(toolLines)
    if (prepared) await writeFile(join(temporary, TOOLS_INDEX_FILE), prepared.bytes, { signal })
    else {
      await writeToolsIndexFile(
        join(temporary, TOOLS_INDEX_FILE),
        indexed.library.idList,
        copied?.lines ?? toolLines,
        toolsFileHash,
        indexed.library.knownToolHashBytes(),
      )
    }
    // The manifest goes last: a directory without one is never mistaken for an index. It
    // records every file as written, for a check that need not read them (`filesAsRecorded`).
    const manifest = {
      ...indexed.manifest,
      toolsFileHash,
      toolsIndexFile: TOOLS_INDEX_FILE,
      files: await recordIndexFiles(temporary, { [indexed.manifest.toolsFile]: toolsFileHash }),
    }
    throwIfAborted(signal)
    await writeFile(join(temporary, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, {
      signal,
    })
    // On the disk before the renames name it: a power loss leaves the old index or the new one.
    await syncTree(temporary, indexFs.syncPath)
  } catch (error) {
    await discard()
    // Abandoned (a stopping server's write), not a failure of the disk.
    throwIfAborted(signal)
    failedWrite(error)
  }
  let used = false
  const take = () => {
    if (used) throw new Error(`Library "${name}"'s staged index was committed or discarded`)
    used = true
    stopCleanup()
  }
  const commit = async (commitOptions: SaveOptions = {}): Promise<string> => {
    take()
    try {
      await commitStaged(indexDir, name, temporary, commitOptions)
    } finally {
      release(temporary)
    }
    return join(indexDir, name)
  }
  const staged: StagedIndex = {
    name,
    commit,
    discard: async () => {
      if (used) return
      used = true
      await discard()
    },
  }
  stagedWork.set(staged, { indexDir, temporary, take })
  return staged
}

/** Where each staged index was written, for `commitStagedIndexes`. */
const stagedWork = new WeakMap<
  StagedIndex,
  { indexDir: string; temporary: string; take: () => void }
>()

/**
 * Renames library `name`'s staged `temporary` into place, its index (if any) moved to `old`
 * first; true when there was one. A failure puts the old index back and throws.
 */
async function swapIn(
  indexDir: string,
  name: string,
  temporary: string,
  old: string,
): Promise<boolean> {
  const target = join(indexDir, name)
  const hadOld = await pathExists(target)
  if (hadOld) await rename(target, old)
  try {
    await rename(temporary, target)
  } catch (error) {
    // Not committed: the old index goes back (else the next recovery moves it back).
    if (hadOld) await rename(old, target).catch(() => undefined)
    throw error
  }
  return hadOld
}

/**
 * Commits several staged indexes of `indexDir` together (a snapshot restore): under every
 * library's lock at once, a journal naming them is written (restore-journal.ts), then each old
 * index is moved aside and the new one renamed in; the journal's removal commits them all. When
 * a rename fails (EPERM, EIO…), those renamed in before it are taken out again and their old
 * indexes put back (`undoRestore`), so the index directory holds exactly what it held, and the
 * error is thrown (INDEX_WRITE_FAILED, naming the library that failed). When that undo fails
 * too, `details.undo` says what is left where and the journal stays, for the next recovery
 * (`recoverIndexDir`) to finish the undo; a process killed between the renames is undone so
 * too. The old indexes are deleted only once every one is in. The staged indexes are used up
 * either way (a failure removes their work, unless an undo left it to the journal).
 */
export async function commitStagedIndexes(
  indexDir: string,
  staged: readonly StagedIndex[],
  options: Pick<SaveOptions, 'lockTimeoutMs' | 'onUnsynced'> = {},
): Promise<string[]> {
  const entries = staged.map((one) => {
    const work = stagedWork.get(one)
    if (work === undefined || work.indexDir !== indexDir)
      throw new Error(`Library "${one.name}" was not staged in ${indexDir}`)
    work.take()
    return {
      name: one.name,
      temporary: work.temporary,
      old: workDirPath(indexDir, 'old', one.name),
    }
  })
  for (const { old } of entries) claim(old)
  const journal = restoreJournalPath(indexDir)
  claim(journal)
  claim(`${journal}.partial`)
  // Renamed in, in order, and whether each replaced an index.
  const swapped: { name: string; old: string; hadOld: boolean }[] = []
  // Set when an undo failed: its work is the journal's now, left for the next recovery.
  let left: UndoLeft | undefined
  try {
    await withLibraryLocks(
      indexDir,
      entries.map(({ name }) => name),
      async () => {
        const libraries = await journalLibraries(indexDir, entries).catch((error: unknown) => {
          throw writeFailed(entries[0].name, indexDir, error)
        })
        await writeJournal(journal, libraries, indexFs.syncPath).catch((error: unknown) => {
          throw writeFailed(entries[0].name, indexDir, error)
        })
        for (const entry of entries) {
          try {
            swapped.push({
              ...entry,
              hadOld: await swapIn(indexDir, entry.name, entry.temporary, entry.old),
            })
          } catch (error) {
            left = await undoRestore(indexDir, journal, libraries, indexFs.syncPath)
            const failed = writeFailed(entry.name, indexDir, error)
            if (left === undefined || !(failed instanceof ToolselError)) throw failed
            const errno = (error as NodeJS.ErrnoException).code ?? String(error)
            const message = `Library "${entry.name}" could not be renamed into place in ${indexDir} (${errno}), and undoing the libraries renamed in before it failed too.`
            throw new ToolselError(failed.code, message, {
              cause: error,
              details: {
                ...failed.details,
                notUndone: left.libraries.map(({ name }) => name),
                undo: describeLeft(left, journal),
              },
            })
          }
          testStopPoint('TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES', String(swapped.length))
        }
        // The commit point: from here on the restore stands.
        await rm(journal, { force: true })
      },
      options.lockTimeoutMs,
    )
  } catch (error) {
    if (left === undefined)
      await Promise.all(
        entries.map(({ temporary }) => rm(temporary, { recursive: true, force: true })),
      )
    await rm(`${journal}.partial`, { force: true })
    if (left === undefined) await rm(journal, { force: true })
    throw error
  } finally {
    for (const { temporary } of entries) release(temporary)
    release(journal)
    release(`${journal}.partial`)
  }
  try {
    for (const { old, hadOld } of swapped)
      if (hadOld) await rm(old, { recursive: true, force: true }).catch(() => undefined)
    await syncCommitted(
      indexDir,
      `The save of ${entries.map(({ name }) => `"${name}"`).join(', ')}`,
      options.onUnsynced,
    )
  } finally {
    for (const { old } of entries) release(old)
  }
  return entries.map(({ name }) => name)
}

/** The second half of `saveIndexedLibrary`: the staged `temporary` renamed into place. */
async function commitStaged(
  indexDir: string,
  name: string,
  temporary: string,
  options: SaveOptions,
): Promise<void> {
  const old = workDirPath(indexDir, 'old', name)
  const target = join(indexDir, name)
  // What `onCommit` threw.
  let failed: { error: unknown } | undefined
  try {
    const hadOld = await withLibraryLock(
      indexDir,
      name,
      async () => {
        throwIfAborted(options.signal)
        options.beforeCommit?.()
        // Past the last abort check: a stop no longer reaches it (a slow rename, for tests).
        await testHoldPoint('TOOLSEL_TEST_HOLD_IN_INDEX_COMMIT_FILE')
        claim(old)
        const hadOld = await swapIn(indexDir, name, temporary, old)
        try {
          options.onCommit?.(target, hadOld)
        } catch (error) {
          failed = { error }
        }
        return hadOld
      },
      options.lockTimeoutMs,
    )
    // Committed: a leftover .old- directory is removed by a later recoverIndexDir.
    if (hadOld) await rm(old, { recursive: true, force: true }).catch(() => undefined)
    // The renames themselves on the disk.
    await syncCommitted(indexDir, `Library "${name}"'s save`, options.onUnsynced)
    if (failed) throw failed.error
  } catch (error) {
    await rm(temporary, { recursive: true, force: true })
    // What `onCommit` threw comes after the commit; anything before it changed nothing.
    if (failed !== undefined && error === failed.error) throw error
    throw writeFailed(name, indexDir, error)
  } finally {
    release(old)
  }
}

/**
 * A file system error met while writing library `name`'s index before its commit (nothing was
 * changed): INSUFFICIENT_STORAGE (507) for a full disk or quota, else INDEX_WRITE_FAILED (500),
 * naming the directory and the errno. Other errors are passed on as they are.
 */
export function writeFailed(name: string, indexDir: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code
  if (error instanceof ToolselError || typeof code !== 'string') return error
  const full = isDiskFull(code)
  const reason = errorMessage(error)
  return new ToolselError(
    full ? 'INSUFFICIENT_STORAGE' : 'INDEX_WRITE_FAILED',
    `Library "${name}" could not be saved in ${indexDir}: ${full ? 'no space left on its disk' : 'the file system refused the write'} (${reason}). Nothing was changed: the previous index, if any, stays saved and served.${full ? ' Free space there, or choose another library.indexDir (TOOLSEL_INDEX_DIR).' : ' Check the disk and the directory.'}`,
    { cause: error, details: { library: name, indexDir, errno: code } },
  )
}

/**
 * Finishes or undoes an interrupted save and removes abandoned temporary directories: those of
 * a dead writer (the pid and start time in their name; the names of older versions, without a
 * pid, count as abandoned), and stale locks that a process died breaking. A live writer's are
 * left alone, whichever process it is.
 */
export async function recoverIndexDir(indexDir: string): Promise<void> {
  let entries: string[]
  try {
    entries = await readdir(indexDir)
  } catch {
    return
  }
  // Another (newer) version's protocol: whatever is there may be its live work.
  const protocol = await writerProtocol(indexDir)
  if (protocol !== undefined && protocol !== WRITER_PROTOCOL) return
  // A restore's journal first: the work directories it names are its to undo, not ones to
  // finish or remove one by one below.
  const kept = new Set<string>()
  let undone = false
  for (const entry of entries) {
    const journal = parseJournalEntry(entry)
    if (journal === undefined) continue
    const path = join(indexDir, entry)
    if (!isAbandoned(path, journal)) continue // Live: its work directories are live too.
    if (journal.partial) await rm(path, { force: true })
    else {
      const keep = await recoverRestore(indexDir, path)
      for (const name of keep) kept.add(name)
      undone ||= keep.length === 0
    }
  }
  if (undone) entries = await readdir(indexDir).catch(() => [])
  for (const journal of goneStuckJournals(indexDir, entries)) {
    indexDirWarnings.report(
      `Index directory ${indexDir}: the snapshot restore left half-done is no longer there (${basename(journal)} is gone: another process undid it, or it was removed).`,
    )
  }
  for (const entry of entries) {
    if (kept.has(entry)) continue
    const work = parseWorkEntry(entry)
    const path = join(indexDir, entry)
    if (isUnknownWriterEntry(entry)) reportUnknownEntry(indexDir, entry)
    else if (work === undefined && isStrayLock(path, entry)) await rm(path, { force: true })
    // A live writer's: being written, between its two renames, or being removed after them.
    if (work === undefined || !isAbandoned(path, work)) continue
    if (work.kind === 'old' && !entries.includes(work.name))
      await restoreOld(indexDir, work.name, path)
    else await rm(path, { recursive: true, force: true })
  }
}

/**
 * Undoes the restore whose writer died with its journal at `journal` in place (restore-journal.ts),
 * under the locks of all its libraries (when another process holds one, left for a later
 * recovery); the entries of the index directory to leave alone meanwhile (its work directories
 * and itself: none once undone). A failed undo, or a journal this version can't read, is
 * reported once (`indexDirWarnings`), naming what is left where; a failed undo is tried again on
 * a backoff (`undoDue`), and its success is reported.
 */
async function recoverRestore(indexDir: string, journal: string): Promise<string[]> {
  const libraries = await readJournal(journal)
  if (libraries === null) return []
  if (libraries === undefined) {
    reportOnce(
      journal,
      `${journal} is a restore journal this version can't read: left alone, and the work directories of its restore with it. If no other toolsel version writes ${indexDir}, look at it and remove it by hand.`,
    )
    // Unknown work directories: every .old- one is kept (it may be a previous index).
    return (await readdir(indexDir).catch(() => [] as string[])).filter(
      (entry) => parseWorkEntry(entry)?.kind === 'old',
    )
  }
  const keep = [basename(journal), ...libraries.flatMap(({ staged, old }) => [staged, old])]
  // An undo that failed here waits for its backoff, or for a change in its way (restore-journal.ts).
  if (!(await undoDue(indexDir, journal, libraries))) return keep
  const names = [...new Set(libraries.map(({ name }) => name))]
  const locked: string[] = []
  try {
    for (const name of names) {
      if (!(await tryLibraryLock(indexDir, name))) return keep
      locked.push(name)
    }
    const left = await undoRestore(indexDir, journal, libraries, indexFs.syncPath)
    if (left === undefined) {
      const failed = undoSucceeded(journal)
      if (failed > 0) {
        indexDirWarnings.report(
          `Index directory ${indexDir}: the snapshot restore left half-done is undone now (its undo failed ${failed} time${failed === 1 ? '' : 's'} before): every library's previous index is back in place.`,
        )
      }
      return []
    }
    reportOnce(
      `${journal} ${JSON.stringify(left)}`,
      `Index directory ${indexDir}: a snapshot restore was left half-done (its process is gone). ${describeLeft(left, journal)}`,
    )
    await undoFailed(indexDir, journal, libraries)
    return keep
  } finally {
    for (const name of locked) await unlockLibrary(indexDir, name)
  }
}

/** Restore warnings reported already (by key), so that a recovery every poll reports once. */
const reportedRestores = new Set<string>()

function reportOnce(key: string, message: string): void {
  if (reportedRestores.has(key)) return
  reportedRestores.add(key)
  indexDirWarnings.report(message)
}

/**
 * An abandoned `.old-` directory of a library that has none (its writer died between its two
 * renames): back into place, under the library's lock, so that no live writer's commit runs
 * meanwhile; when another process holds it, left for a later recovery. Removed when the library
 * is back meanwhile.
 */
async function restoreOld(indexDir: string, name: string, path: string): Promise<void> {
  if (!(await tryLibraryLock(indexDir, name))) return
  try {
    const target = join(indexDir, name)
    if (!(await pathExists(path))) return
    if (await pathExists(target)) await rm(path, { recursive: true, force: true })
    else {
      await rename(path, target)
      await syncCommitted(indexDir, `Library "${name}"'s restore of its previous index`, undefined)
    }
  } finally {
    await unlockLibrary(indexDir, name)
  }
}

/** Names of the built indexes in `indexDir` (directories holding a manifest). */
export async function listIndexes(indexDir: string): Promise<string[]> {
  await recoverIndexDir(indexDir)
  let entries: string[]
  try {
    entries = await readdir(indexDir)
  } catch {
    return []
  }
  const names: string[] = []
  for (const entry of entries.sort()) {
    if (!entry.startsWith('.') && (await pathExists(join(indexDir, entry, MANIFEST_FILE))))
      names.push(entry)
  }
  return names
}

/**
 * Deletes the saved index of library `name`; false when there is none. Whether there is one is
 * found under the library's lock: between another process's two renames of a save
 * (`commitStaged`) the library's directory is briefly not there, and a check before the lock
 * answered "none" (DELETE 204 without deleting, or 404) while that save then committed. `onDelete`
 * is called once it is gone (or found missing), under the lock when there is an index directory,
 * so that what is served changes in step with the disk (see `SaveOptions.onCommit`); `deleted`:
 * this call removed it.
 */
export async function deleteIndex(
  indexDir: string,
  name: string,
  options: { onDelete?: (deleted: boolean) => void; onUnsynced?: (warning: string) => void } = {},
): Promise<boolean> {
  assertLibraryName(name)
  const target = join(indexDir, name)
  if (!(await pathExists(indexDir))) {
    // No index directory, so no lock to take either: nothing is saved.
    options.onDelete?.(false)
    return false
  }
  await requireWriterProtocol(indexDir)
  // Rename first so a concurrent reader never sees a half-deleted directory; under the lock, so
  // that it is not between another process's two renames.
  const doomed = workDirPath(indexDir, 'tmp', name)
  claim(doomed)
  try {
    const found = await withLibraryLock(indexDir, name, async () => {
      const there = await pathExists(target)
      if (there) await rename(target, doomed)
      options.onDelete?.(there)
      return there
    })
    if (found) {
      await syncCommitted(indexDir, `Library "${name}"'s deletion`, options.onUnsynced)
      await rm(doomed, { recursive: true, force: true })
    }
    return found
  } finally {
    release(doomed)
  }
}

export async function isIndexDir(dir: string): Promise<boolean> {
  return pathExists(join(dir, MANIFEST_FILE))
}

/** The tools of the saved index at `dir`, its manifest and tools file checked; no retriever loaded. */
export async function readIndexTools(dir: string): Promise<ToolLibrary> {
  assertTrustedPath(dir, 'Index directory', 'INDEX_CORRUPT', { recursive: true })
  return readTools(dir, await readManifest(dir))
}

export async function loadIndexedLibrary(
  dir: string,
  config: Config,
  options: {
    logger?: Logger
    /**
     * The level of the warning of odd tool ids (`warnOfUnshowableIds`): default
     * `unshowableIdWarnings.level`; `toolsel select` asks for `debug` (quiet unless --log-level debug).
     */
    unshowableIds?: UnshowableIdsLevel
  } = {},
): Promise<IndexedLibrary> {
  // Its tools, parts, examples and learned models decide every answer: refused when any user can
  // write them (or a directory above), a warning when another uid owns them (`assertTrustedPath`).
  assertTrustedPath(dir, 'Index directory', 'INDEX_CORRUPT', { recursive: true })
  const manifest = await readManifest(dir)
  const rebuild = rebuildHint(manifest)
  if (manifest.formatVersion !== INDEX_FORMAT_VERSION) {
    throw manifestMismatch(
      manifest,
      `was built with index format ${manifest.formatVersion}; this version of toolsel reads format ${INDEX_FORMAT_VERSION}. ${rebuild}`,
    )
  }
  const library = await readTools(dir, manifest)
  if (library.contentHash !== manifest.contentHash || library.size !== manifest.toolCount) {
    throw new ToolselError(
      'INDEX_CORRUPT',
      `Index "${manifest.library}" at ${dir}: its tools file does not match its manifest (hash or count differs). ${rebuild}`,
    )
  }
  if (options.logger !== undefined)
    warnOfUnshowableIds(library, dir, options.logger, options.unshowableIds)
  const built = Object.keys(manifest.retrievers)
  const unknown = built.flatMap((name) => partNameProblem(name) ?? [])
  if (unknown.length > 0) {
    throw manifestMismatch(
      manifest,
      `has retrievers this version of toolsel does not know (${unknown.join('; ')}). ${rebuild}`,
    )
  }
  const retrievers = new Map<string, Retriever>()
  // Parts over other parts (fusions) last: their inputs are loaded by then.
  const parts = built.map(requirePart)
  const ordered = [
    ...parts.filter(({ kind }) => !isComposite(kind)),
    ...parts.filter(({ kind }) => isComposite(kind)),
  ]
  for (const { name, kind, arg } of ordered) {
    const entry = manifest.retrievers[name]
    const context = {
      part: name,
      arg,
      dir,
      manifest,
      entry,
      library,
      config,
      retrievers,
      logger: options.logger,
    }
    retrievers.set(name, await kind.load(context))
  }
  const examples = await loadExamples(dir, manifest, library, config.examples)
  return { library, manifest, retrievers, dir, ...(examples && { examples }) }
}

/** Ids a load's warning names (`warnOfUnshowableIds`); the count is complete. */
const LISTED_UNSHOWABLE_IDS = 3

export type UnshowableIdsLevel = 'warn' | 'info' | 'debug'

/**
 * The level of this process's warning of odd tool ids at load: `warn`; `toolsel serve --workers N`
 * sets `debug` in every worker but one (cli/serve-command.ts), so that N processes loading one
 * library log it once.
 */
export const unshowableIdWarnings: { level: UnshowableIdsLevel } = { level: 'warn' }

/** The libraries (name and content hash) whose odd ids this process has warned of. */
const warnedUnshowable = new Set<string>()

/**
 * One warning when the loaded library has tool ids holding a control character, a bidi override
 * or isolate, or a lone surrogate (`refusedNameCharacter`): imports take them with a warning, and
 * an index saved (or a snapshot taken) before imports warned of them was never checked, so every
 * load names them, whenever they were saved. The library is served as it is; the ids are checked, not the
 * names (reading those means parsing every tool; `suspectPositions` finds the ids to check with a
 * few byte searches of a million ids, bench/README round 35). A second warning names ids longer
 * than MAX_TOOL_ID_CHARS (imported before round 37 bounded them; no request can name such a
 * tool): refusing the load would break an index that served until then.
 */
function warnOfUnshowableIds(
  library: ToolLibrary,
  dir: string,
  logger: Logger,
  asked: UnshowableIdsLevel = unshowableIdWarnings.level,
): void {
  // Once per process for one content (a reload of the same tools, a restore of them): debug after.
  const key = `${library.name}\u0000${library.contentHash}`
  const level = warnedUnshowable.has(key) ? 'debug' : asked
  if (!logger.enabled(level)) return
  const positions = unshowableIdPositions(library.idList)
  const overlong = overlongIdPositions(library.idList)
  if (positions.length === 0 && overlong.length === 0) return
  if (level !== 'debug') warnedUnshowable.add(key)
  const more = (count: number) => (count > LISTED_UNSHOWABLE_IDS ? '; …' : '')
  if (positions.length > 0) {
    const listed = positions.slice(0, LISTED_UNSHOWABLE_IDS).map((position) => {
      const id = library.idList.at(position)!
      const { codePoint, index } = refusedNameCharacter(id)!
      return `${shownName(id)}: ${codePoint} at ${index}`
    })
    logger[level](
      `Library "${library.name}" (${dir}): ${positions.length} tool id(s) hold a control character, bidi override or isolate, or lone surrogate (imported and served as they are; such a tool may display as another one): ${listed.join('; ')}${more(positions.length)}. Rename them at the source and import the library again.`,
      { library: library.name, unshowableIds: positions.length },
    )
  }
  if (overlong.length > 0) {
    const listed = overlong.slice(0, LISTED_UNSHOWABLE_IDS).map((position) => {
      const id = library.idList.at(position)!
      return `${shownName(id)}: ${id.length} characters`
    })
    logger[level](
      `Library "${library.name}" (${dir}): ${overlong.length} tool id(s) are longer than ${MAX_TOOL_ID_CHARS} characters (imported before imports refused them; served as they are, but no request can name such a tool: GET …/tools/:id, tools/batch, MCP get_tool_schemas, usage examples and feedback take ids of at most ${MAX_TOOL_ID_CHARS}): ${listed.join('; ')}${more(overlong.length)}. Shorten them at the source and import the library again.`,
      { library: library.name, overlongIds: overlong.length },
    )
  }
}

function isComposite(kind: RetrieverKind): boolean {
  return kind.requires.length > 0 || kind.inputs !== undefined
}

/** The manifest of the index in `dir`; INDEX_CORRUPT when it is missing or invalid. */
export async function readManifest(dir: string): Promise<IndexManifest> {
  let text: string
  try {
    text = await readManifestText(dir)
  } catch (error) {
    if (error instanceof FileTooLargeError || error instanceof NotRegularFileError) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `The manifest at ${join(dir, MANIFEST_FILE)} is not read: ${error instanceof FileTooLargeError ? `it is larger than ${MAX_MANIFEST_BYTES} bytes (one is a few KB)` : error.message}. Rebuild the index with: toolsel index <file> --name <library>.`,
        { cause: error },
      )
    }
    throw new ToolselError(
      'INDEX_CORRUPT',
      `No index at ${dir}: ${MANIFEST_FILE} is missing. Build one with: toolsel index <file> --name <library>.`,
      { cause: error },
    )
  }
  const parsed = IndexManifestSchema.safeParse(safeJson(text))
  if (!parsed.success) {
    throw new ToolselError(
      'INDEX_CORRUPT',
      `The manifest at ${join(dir, MANIFEST_FILE)} is invalid (${parsed.error.issues[0]?.message ?? 'unreadable'}). Rebuild the index with: toolsel index <file> --name <library>.`,
    )
  }
  return parsed.data
}

/**
 * The library. With its tools index (`tools.idx`), when the tools file still has the size and
 * CRC-32 it was saved with (a different CRC-32: INDEX_CORRUPT), the file is kept open and read by
 * offset when a tool is needed (no tool is parsed at load: see ToolLibrary.fromLineIndex), and
 * the manifest's content hash is trusted. Without it
 * (an index saved before it was written) the file is read into memory and the file's sha256 in
 * the manifest vouches for the hash; without that either, or when the file changed, the file is
 * scanned and every tool hashed.
 */
async function readTools(dir: string, manifest: IndexManifest): Promise<ToolLibrary> {
  const path = join(dir, manifest.toolsFile)
  // A regular file of at most its recorded size and slack (index-file-read.ts).
  const bound = indexFileBound(manifest, manifest.toolsFile)
  const unreadable = (error: unknown): ToolselError => {
    if (error instanceof ToolselError) return error
    const problem = indexFileProblem(error, bound)
    return new ToolselError(
      'INDEX_CORRUPT',
      problem === undefined
        ? `Index "${manifest.library}" at ${dir}: its tools file is unreadable. ${rebuildHint(manifest)}`
        : `Index "${manifest.library}" at ${dir}: its tools file ${path} is not read: ${problem}. ${rebuildHint(manifest)}`,
      { cause: error, details: { file: path } },
    )
  }
  const { toolsFileHash, toolsIndexFile } = manifest
  if (toolsIndexFile !== undefined && toolsFileHash !== undefined) {
    const file = await ToolsFile.open(path, bound.maxBytes).catch((error: unknown) => {
      throw unreadable(error)
    })
    let lineIndex: ToolLineIndex | undefined
    try {
      lineIndex = await readToolsIndexFile(
        join(dir, toolsIndexFile),
        file,
        toolsFileHash,
        rebuildHint(manifest),
        indexFileBound(manifest, toolsIndexFile),
      )
    } catch (error) {
      file.release(0)
      throw error
    }
    if (lineIndex)
      return ToolLibrary.fromLineIndex(manifest.library, file, lineIndex, manifest.contentHash)
    file.release(0)
  }
  try {
    const bytes = await readIndexFileBytes(path, bound)
    const trusted =
      toolsIndexFile === undefined &&
      toolsFileHash !== undefined &&
      sha256Bytes(bytes) === toolsFileHash
    return ToolLibrary.fromJsonLines(manifest.library, bytes, {
      ...(trusted && { contentHash: manifest.contentHash }),
    })
  } catch (error) {
    throw unreadable(error)
  }
}

function sha256Bytes(bytes: Buffer): string {
  return sha256Chunks([bytes])
}

/** The sha256 of `chunks` one after the other, hex. */
function sha256Chunks(chunks: readonly Buffer[]): string {
  const hash = createHash('sha256')
  for (const chunk of chunks) hash.update(chunk)
  return hash.digest('hex')
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
