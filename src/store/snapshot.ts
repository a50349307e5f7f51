/**
 * Snapshots: a copy of every saved library index in one directory, to back up or move a
 * service's libraries (the idea of Meilisearch snapshots and Qdrant collection snapshots).
 *
 * Layout: `<dir>/snapshot.json` (the snapshot manifest, versioned) and `<dir>/indexes/<name>/`,
 * each an index directory exactly as `saveIndexedLibrary` writes it. A snapshot is written from
 * libraries held in memory (immutable once built), so every index in it is whole and of one
 * version, whatever is uploaded meanwhile; the directory is written under a temporary name next
 * to `<dir>` and renamed into place, so `<dir>` either holds a complete snapshot or does not
 * exist (one a killed writer left there is removed by the next snapshot written beside it:
 * `sweepSnapshotTemporaries`). Restoring loads each index (validating it), writes them all beside their places, then
 * renames them all into the index directory (undone when one fails), replacing indexes of the
 * same name.
 * @module
 */
import { removeOnSignal } from '../signal-cleanup.ts'
import { randomBytes } from 'node:crypto'
import { lstat, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { z } from 'zod'
import { testStopPoint } from '../config/env-vars.ts'
import type { Config } from '../config/schema.ts'
import { errorMessage, isToolselError, throwIfAborted, ToolselError } from '../errors.ts'
import { LIBRARY_NAME_PATTERN, LIBRARY_NAME_RULE } from '../library/tool-library.ts'
import { FileTooLargeError, NotRegularFileError, readFileUpTo } from '../read-text-file.ts'
import type { Logger } from '../log.ts'
import type { IndexedLibrary } from './library-lifecycle.ts'
import {
  commitStagedIndexes,
  indexFs,
  listIndexes,
  loadIndexedLibrary,
  recoverIndexDir,
  saveIndexedLibrary,
  stageIndexedLibrary,
  syncCommitted,
  type StagedIndex,
} from './library-lifecycle.ts'
import { pathExists } from './path-exists.ts'
import { claim, release } from './index-dir-claims.ts'
import { sweepDeadWriters, WRITER_TAG_SOURCE, writerTag } from './dead-writers.ts'
import { isDiskFull } from '../write-file-atomically.ts'

export const SNAPSHOT_FILE = 'snapshot.json'
export const SNAPSHOT_FORMAT = 'toolsel-snapshot'
export const SNAPSHOT_VERSION = 1
/**
 * Largest `snapshot.json` read (about 300 bytes a library): a larger one, or a device such as
 * /dev/zero in its place, is refused after that many bytes, not read into memory.
 */
export const SNAPSHOT_MANIFEST_MAX_BYTES = 16 * 1024 * 1024
/** Most files and directories under one library of a snapshot (an index holds about ten). */
const SNAPSHOT_MAX_ENTRIES = 1000
/** Deepest directory under a library of a snapshot (a named dense part is one level down). */
const SNAPSHOT_MAX_DEPTH = 3

const SnapshotManifestSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.number().int(),
  createdAt: z.string(),
  libraries: z.array(
    z.object({
      name: z.string(),
      tools: z.number().int(),
      contentHash: z.string(),
      indexCreatedAt: z.string(),
      retrievers: z.array(z.string()),
      examples: z.number().int(),
    }),
  ),
})

export type SnapshotManifest = z.infer<typeof SnapshotManifestSchema>

/**
 * A snapshot being written, next to its target: `.snapshot-tmp-<name>+<pid>.<start>@<host>-<hex>`
 * (`<name>` the target's, cut to 100 characters; `.<start>` absent where the writer's start time
 * is unknown, see index-dir-claims.ts `startTime`; `<host>` the first 8 hex digits of the SHA-256
 * of the writer's host name). A writer killed before its rename (SIGKILL, a power loss) leaves it;
 * the next snapshot written into the same directory removes it (`sweepSnapshotTemporaries`).
 */
const SNAPSHOT_TEMPORARY = new RegExp(
  String.raw`^\.snapshot-tmp-.+\+${WRITER_TAG_SOURCE}-[0-9a-f]{12}$`,
)

function snapshotTemporaryPath(target: string): string {
  const name = basename(target).slice(0, 100)
  return join(
    dirname(target),
    `.snapshot-tmp-${name}+${writerTag()}-${randomBytes(6).toString('hex')}`,
  )
}

/**
 * Removes the temporary directories (SNAPSHOT_TEMPORARY) in `parent` whose writer is provably
 * gone (dead-writers.ts `sweepDeadWriters`: this host's, this user's, its process gone; never a
 * live writer's). Left alone too: names of any other shape (the `.tmp-<name>-<hex>` of versions
 * before round 38 carry no pid). Answers the paths removed; never fails.
 */
export async function sweepSnapshotTemporaries(parent: string): Promise<string[]> {
  return sweepDeadWriters(parent, SNAPSHOT_TEMPORARY, 'directory')
}

/**
 * Writes `libraries` as a new snapshot at `dir` (which must not exist yet). A failure before the
 * rename that names it leaves nothing; once it is renamed into place, a failed flush of its
 * parent directory is reported to `onUnsynced` (see `SaveOptions.onUnsynced`), not thrown.
 * First removes what writers that died left in `dir`'s parent (`sweepSnapshotTemporaries`),
 * reporting each path to `onSwept`. `signal`'s abort (a stopping server's) stops it at its next
 * check (between the files of each library, before the manifest and before the rename) with its
 * reason, removing the temporary directory: nothing of it is left.
 */
export async function writeSnapshot(
  dir: string,
  libraries: readonly IndexedLibrary[],
  options: {
    onUnsynced?: (warning: string) => void
    onSwept?: (removed: string) => void
    signal?: AbortSignal
  } = {},
): Promise<SnapshotManifest> {
  throwIfAborted(options.signal)
  const target = resolve(dir)
  if (await pathExists(target)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Snapshot directory ${target} already exists; name a new one (a snapshot never overwrites another).`,
    )
  }
  for (const removed of await sweepSnapshotTemporaries(dirname(target))) options.onSwept?.(removed)
  const temporary = snapshotTemporaryPath(target)
  // Ours while this write lasts: a sweep of this process leaves it alone.
  claim(temporary)
  // Ctrl-C (SIGINT), SIGTERM or SIGHUP mid-write removes it (was left until the next snapshot's
  // sweep beside <dir>); after its rename into place there is nothing to remove.
  const stopCleanup = removeOnSignal(temporary)
  try {
    return await writeSnapshotAt(target, temporary, libraries, options)
  } finally {
    stopCleanup()
    release(temporary)
  }
}

async function writeSnapshotAt(
  target: string,
  temporary: string,
  libraries: readonly IndexedLibrary[],
  options: { onUnsynced?: (warning: string) => void; signal?: AbortSignal },
): Promise<SnapshotManifest> {
  const { signal } = options
  try {
    await mkdir(dirname(target), { recursive: true })
    await mkdir(temporary)
  } catch (error) {
    throw snapshotWriteFailed(target, error)
  }
  try {
    for (const indexed of libraries) {
      // Not committed yet (the snapshot is, by its rename): a failed flush fails the snapshot.
      await saveIndexedLibrary(join(temporary, 'indexes'), indexed, {
        onUnsynced: (warning) => {
          throw new Error(warning)
        },
        signal,
      })
      if (indexed === libraries[0]) testStopPoint('TOOLSEL_TEST_STOP_IN_SNAPSHOT_WRITE')
    }
    const manifest: SnapshotManifest = {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      createdAt: new Date().toISOString(),
      libraries: libraries.map((indexed) => ({
        name: indexed.library.name,
        tools: indexed.library.size,
        contentHash: indexed.library.contentHash,
        indexCreatedAt: indexed.manifest.createdAt,
        retrievers: Object.keys(indexed.manifest.retrievers),
        examples: indexed.examples?.set.size ?? 0,
      })),
    }
    throwIfAborted(signal)
    // The manifest goes last, then the rename: a directory without one is no snapshot.
    await writeFile(join(temporary, SNAPSHOT_FILE), `${JSON.stringify(manifest, null, 2)}\n`)
    // On the disk before the rename names it (each index's files were by its save), and the
    // rename after it.
    await indexFs.syncPath(join(temporary, SNAPSHOT_FILE))
    await indexFs.syncPath(temporary)
    throwIfAborted(signal)
    await rename(temporary, target)
    await syncCommitted(dirname(target), `Snapshot ${basename(target)}`, options.onUnsynced)
    return manifest
  } catch (error) {
    await rm(temporary, { recursive: true, force: true })
    throw snapshotWriteFailed(target, error)
  }
}

/**
 * A file system error writing a snapshot (a path under a file, no permission, a full disk),
 * also one met by the save of a library into it (its INDEX_WRITE_FAILED or INSUFFICIENT_STORAGE
 * speaks of an index directory and of the served index: not what failed here). A full disk or
 * quota is INSUFFICIENT_STORAGE (507), the rest INTERNAL; other errors are passed on as they are.
 */
function snapshotWriteFailed(target: string, error: unknown): unknown {
  const saveFailed =
    isToolselError(error, 'INSUFFICIENT_STORAGE') || isToolselError(error, 'INDEX_WRITE_FAILED')
  if (error instanceof ToolselError && !saveFailed) return error
  const cause = saveFailed ? (error as ToolselError).cause : error
  const reason = errorMessage(cause)
  const errno = (cause as NodeJS.ErrnoException | null)?.code
  if (isDiskFull(errno)) {
    return new ToolselError(
      'INSUFFICIENT_STORAGE',
      `Cannot write the snapshot ${target}: no space left on its disk (${reason}). Nothing was written (its partial copy was removed); the libraries stay saved and served as they were. Free space there, or write snapshots elsewhere.`,
      { cause, details: { errno } },
    )
  }
  return new ToolselError(
    'INTERNAL',
    `Cannot write the snapshot ${target}: ${reason}. Nothing was written; pick a writable directory.`,
    { cause },
  )
}

/** Reads and checks `<dir>/snapshot.json` (at most SNAPSHOT_MANIFEST_MAX_BYTES of it). */
export async function readSnapshotManifest(dir: string): Promise<SnapshotManifest> {
  const file = join(dir, SNAPSHOT_FILE)
  let text: string
  try {
    // A device or pipe (a FIFO without a writer hung the restore) is refused unread.
    text = await readFileUpTo(file, SNAPSHOT_MANIFEST_MAX_BYTES, { regularOnly: true })
  } catch (error) {
    if (error instanceof FileTooLargeError || error instanceof NotRegularFileError) {
      const problem =
        error instanceof FileTooLargeError
          ? `it is ${error.message} (toolsel writes about 300 bytes a library)`
          : error.message
      throw new ToolselError(
        'INDEX_CORRUPT',
        `${file} is not a valid snapshot manifest: ${problem}; nothing was restored.`,
      )
    }
    const kind = await stat(dir).then(
      (found) => (found.isDirectory() ? 'directory' : 'file'),
      () => undefined,
    )
    const missing =
      kind === 'directory'
        ? `it has no ${SNAPSHOT_FILE}`
        : kind === 'file'
          ? 'it is a file; a snapshot is the directory `toolsel snapshot <dir>` wrote'
          : 'no such directory'
    throw new ToolselError(
      'INVALID_INPUT',
      `${dir} is not a toolsel snapshot: ${missing}. Write one with: toolsel snapshot <dir>.`,
    )
  }
  let parsed: ReturnType<typeof SnapshotManifestSchema.safeParse>
  try {
    parsed = SnapshotManifestSchema.safeParse(JSON.parse(text))
  } catch {
    parsed = SnapshotManifestSchema.safeParse(undefined)
  }
  if (!parsed.success) {
    throw new ToolselError('INDEX_CORRUPT', `${file} is not a valid snapshot manifest.`)
  }
  if (parsed.data.version !== SNAPSHOT_VERSION) {
    throw new ToolselError(
      'INDEX_MISMATCH',
      `${file} has snapshot version ${parsed.data.version}; this toolsel reads version ${SNAPSHOT_VERSION}.`,
    )
  }
  return parsed.data
}

/**
 * Loads every saved index under `indexDir`, for a snapshot taken without a running service
 * (`toolsel snapshot <dir>`). An index replaced while it is read fails its checks; it is read
 * again once.
 */
export async function loadSavedIndexes(
  indexDir: string,
  config: Config,
  logger?: Logger,
): Promise<IndexedLibrary[]> {
  const loaded: IndexedLibrary[] = []
  for (const name of await listIndexes(indexDir)) {
    const dir = join(indexDir, name)
    try {
      loaded.push(await loadIndexedLibrary(dir, config, { logger }))
    } catch {
      loaded.push(await loadIndexedLibrary(dir, config, { logger }))
    }
  }
  return loaded
}

/**
 * Restores a snapshot into `indexDir`: every index is loaded from the snapshot first (so a
 * damaged snapshot changes nothing), then every one is written into a work directory of
 * `indexDir` (so a full disk, or any failure writing one, removes them all and changes nothing),
 * then all are renamed into place together, replacing indexes of the same name
 * (`commitStagedIndexes`: a rename failing part-way is undone, and changes nothing). Other
 * indexes in `indexDir` are left alone. Returns the restored library names.
 */
export async function restoreSnapshot(
  dir: string,
  indexDir: string,
  config: Config,
  logger?: Logger,
): Promise<string[]> {
  const manifest = await readSnapshotManifest(dir)
  // Before anything is loaded: a name that is no library name (`../x`, `/abs`) would read an
  // index from outside the snapshot, and a link or device inside one would be followed.
  await checkSnapshotFiles(dir, manifest)
  const indexes: IndexedLibrary[] = []
  for (const entry of manifest.libraries) {
    const indexed = await loadIndexedLibrary(join(dir, 'indexes', entry.name), config, { logger })
    if (indexed.library.contentHash !== entry.contentHash) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Snapshot ${dir}: index "${entry.name}" does not match the snapshot manifest (content hash differs); nothing was restored.`,
      )
    }
    // The index is saved under the name in its own manifest: it must be the one listed.
    if (indexed.library.name !== entry.name) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Snapshot ${dir}: index "${entry.name}" holds library "${indexed.library.name}" (its manifest names another library); nothing was restored.`,
      )
    }
    indexes.push(indexed)
  }
  // A restore left half-done before (killed between its renames) undone first.
  await recoverIndexDir(indexDir)
  // Every index written whole beside its place first: a full disk (or any failure) while one is
  // written removes them all and changes nothing. Then each is renamed into place.
  const staged: StagedIndex[] = []
  try {
    for (const indexed of indexes) staged.push(await stageIndexedLibrary(indexDir, indexed))
  } catch (error) {
    await Promise.all(staged.map((one) => one.discard()))
    throw restoreFailed(dir, error)
  }
  try {
    return await commitStagedIndexes(indexDir, staged)
  } catch (error) {
    throw restoreFailed(dir, error)
  }
}

/**
 * A restore that failed writing, the error's code kept (INSUFFICIENT_STORAGE…): nothing restored,
 * or, when undoing the renames failed too (`details.undo` of `commitStagedIndexes`), what is left
 * where and that the next recovery finishes the undo (`details.notUndone`).
 */
function restoreFailed(dir: string, error: unknown): unknown {
  if (!(error instanceof ToolselError)) return error
  const undo = error.details?.undo
  const outcome =
    typeof undo === 'string'
      ? `Snapshot ${dir}: ${undo}`
      : 'Nothing was restored: every index in library.indexDir is as it was.'
  return new ToolselError(error.code, `${error.message} ${outcome}`, {
    cause: error.cause ?? error,
    details: { ...error.details },
  })
}

/**
 * INDEX_CORRUPT unless every library of `manifest` is listed once under a library name and
 * `<dir>/indexes/<name>/` holds only plain files and directories (what `writeSnapshot` writes):
 * no symbolic link, device or pipe, at most SNAPSHOT_MAX_ENTRIES entries SNAPSHOT_MAX_DEPTH deep.
 */
async function checkSnapshotFiles(dir: string, manifest: SnapshotManifest): Promise<void> {
  const refuse = (problem: string): never => {
    throw new ToolselError('INDEX_CORRUPT', `Snapshot ${dir}: ${problem}; nothing was restored.`)
  }
  const seen = new Set<string>()
  for (const { name } of manifest.libraries) {
    if (!LIBRARY_NAME_PATTERN.test(name)) {
      refuse(
        `${SNAPSHOT_FILE} lists library ${JSON.stringify(name)}, which is not a library name (${LIBRARY_NAME_RULE})`,
      )
    }
    if (seen.has(name)) refuse(`${SNAPSHOT_FILE} lists library "${name}" twice`)
    seen.add(name)
  }
  const walk = async (relative: string, depth: number, count: { entries: number }) => {
    const found = await lstat(join(dir, relative)).catch(() => undefined)
    if (found === undefined) return // A missing index is reported by its load.
    if (found.isSymbolicLink())
      refuse(`${relative} is a symbolic link (a snapshot holds only plain files and directories)`)
    if (found.isFile()) return
    if (!found.isDirectory()) refuse(`${relative} is not a plain file (a device, pipe or socket)`)
    if (depth > SNAPSHOT_MAX_DEPTH) refuse(`${relative} is nested too deep for an index`)
    for (const entry of await readdir(join(dir, relative))) {
      if (++count.entries > SNAPSHOT_MAX_ENTRIES)
        refuse(`${relative} holds more than ${SNAPSHOT_MAX_ENTRIES} files`)
      await walk(join(relative, entry), depth + 1, count)
    }
  }
  if ((await lstat(join(dir, 'indexes')).catch(() => undefined))?.isSymbolicLink())
    refuse('indexes is a symbolic link (a snapshot holds only plain files and directories)')
  for (const { name } of manifest.libraries) await walk(join('indexes', name), 1, { entries: 0 })
}
