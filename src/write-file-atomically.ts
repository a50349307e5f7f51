/** Writing a user-named output file whole or not at all, and durably. @module */
import { mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { testStopPoint } from './config/env-vars.ts'
import { ToolselError } from './errors.ts'
import { sweepTemporaryFiles, temporaryFile } from './store/dead-writers.ts'
import { claim, release } from './store/index-dir-claims.ts'
import { fileProblem } from './read-text-file.ts'
import { removeOnSignal } from './signal-cleanup.ts'

/**
 * Writes `text` next to `file` and renames it over it, so a reader never sees half a file; a
 * failed write or rename removes the temporary file (`<file>.<pid>.<start>@<host>.tmp`, see
 * store/dead-writers.ts; one a killed writer left is removed by the next write of `<file>`) and
 * fails with INVALID_INPUT `Cannot write <what> "<file>": <reason>`. The file is flushed to the
 * disk before the rename and its directory after it (`syncPath`): after a power loss the file is
 * the old one or the new one, whole.
 */
export async function writeFileAtomically(
  file: string,
  text: string,
  what: string,
  options: WriteOptions = {},
): Promise<void> {
  await writeFilesAtomically([[file, text]], what, options)
}

export interface WriteOptions {
  /** Told each temporary file of a killed writer that was removed (`sweepDeadWriters`). */
  onSwept?: (removed: string) => void
}

/**
 * A cache file (the embedding cache, the word-vectors cache) replaced whole: `data` goes to a
 * temporary file of this writer's (store/dead-writers.ts `temporaryFile`, unique: two writes of
 * one file at once keep apart), created new (`wx`: never written through what a symlink planted at
 * the name points at), then renamed over `file`. What a writer of `file` killed before its rename
 * left is removed first (`sweepTemporaryFiles`: never a live writer's); a failed write removes its
 * temporary file and throws the error as it came. Not flushed to the disk (a cache lost at a
 * power loss is rebuilt). Answers the paths swept.
 */
export async function replaceCacheFile(
  file: string,
  data: Uint8Array,
  options: { mode?: number } = {},
): Promise<string[]> {
  const swept = await sweepTemporaryFiles([file])
  const temporary = temporaryFile(file, { unique: true })
  // Ours while this write lasts: a sweep of this process leaves it alone.
  claim(temporary)
  try {
    await writeFile(temporary, data, {
      flag: 'wx',
      ...(options.mode !== undefined && { mode: options.mode }),
    })
    testStopPoint('TOOLSEL_TEST_STOP_IN_FILE_WRITE')
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {})
    throw error
  } finally {
    release(temporary)
  }
  return swept
}

/**
 * Several files that belong together (training records and their data card): every one is
 * written to its temporary file first, and only then are they renamed over the targets, so a
 * failed (or interrupted) write leaves the old set whole instead of new records next to an old
 * card. A failure removes the temporary files.
 */
export async function writeFilesAtomically(
  files: ReadonlyArray<readonly [file: string, text: string]>,
  what: string,
  options: WriteOptions = {},
): Promise<void> {
  const temporaries = new Map(files.map(([file]) => [file, temporaryFile(file)]))
  const temporary = (file: string) => temporaries.get(file)!
  // What a writer of these files killed before its rename left (SIGKILL, a power loss).
  for (const removed of await sweepTemporaryFiles(files.map(([file]) => file)))
    options.onSwept?.(removed)
  let current = files[0]?.[0] ?? ''
  // Ours while this write lasts: a sweep of this process leaves them alone.
  for (const [file] of files) claim(temporary(file))
  // Ctrl-C, SIGTERM or SIGHUP removes them (also under a server's graceful stop, as before).
  const stops = files.map(([file]) => removeOnSignal(temporary(file), { always: true }))
  const stopCleanup = () => stops.forEach((stop) => stop())
  try {
    for (const [file, text] of files) {
      current = file
      await mkdir(dirname(file), { recursive: true })
      // `wx`: a new file, never through what is already there. The name is predictable (pid
      // and start time show in /proc), so in a directory another user can write in, a symlink
      // planted there would otherwise have this write overwrite its target and the rename
      // put the symlink in place of `file`.
      await writeFile(temporary(file), text, { flag: 'wx' })
      await syncPath(temporary(file))
    }
    testStopPoint('TOOLSEL_TEST_STOP_IN_FILE_WRITE')
    for (const [file] of files) {
      current = file
      await rename(temporary(file), file)
    }
    for (const dir of new Set(files.map(([file]) => dirname(file)))) await syncPath(dir)
  } catch (error) {
    await Promise.all(files.map(([file]) => rm(temporary(file), { force: true }).catch(() => {})))
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot write ${what} "${current}": ${fileProblem(error)}`,
      { cause: error },
    )
  } finally {
    stopCleanup()
    for (const [file] of files) release(temporary(file))
  }
}

/**
 * Flushes the file or directory at `path` to the disk (fsync): a file before it is renamed into
 * place, so the name never points at data still only in memory; a directory after a rename in
 * it, so the rename itself survives a power loss. A directory the system won't open or flush
 * (not every one lets a directory be fsynced) is left as it is.
 */
export async function syncPath(path: string): Promise<void> {
  let handle
  try {
    handle = await open(path, 'r')
  } catch (error) {
    if (UNSYNCABLE.has((error as NodeJS.ErrnoException).code ?? '')) return
    throw error
  }
  try {
    await handle.sync()
  } catch (error) {
    if (!UNSYNCABLE.has((error as NodeJS.ErrnoException).code ?? '')) throw error
  } finally {
    await handle.close()
  }
}

/** Errors of a directory's open or fsync on systems that refuse them (Windows, some mounts). */
const UNSYNCABLE = new Set(['EISDIR', 'EPERM', 'EACCES', 'EINVAL', 'ENOTSUP', 'EBADF'])

/** `syncPath` of every file under `dir`, then of its directories (deepest first), `dir` last. */
export async function syncTree(dir: string, sync = syncPath): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await syncTree(path, sync)
    else if (entry.isFile()) await sync(path)
  }
  await sync(dir)
}

/**
 * Fails before a long job when its output path is a directory or its folder cannot be made (the
 * write at the end would refuse it after the work is done); makes the folder.
 */
export async function assertWritableFile(file: string, what: string): Promise<void> {
  await makeDirectory(dirname(file), what)
  const found = await stat(file).catch(() => undefined)
  if (found?.isDirectory()) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot write ${what} "${file}": it is a directory; name a file`,
    )
  }
}

/** `mkdir -p`, failing with INVALID_INPUT `Cannot write <what> to "<dir>": <reason>`. */
export async function makeDirectory(dir: string, what: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true })
  } catch (error) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot write ${what} to "${dir}": ${fileProblem(error)}`,
      {
        cause: error,
      },
    )
  }
}

/** Whether a file system error's `code` says the disk or the user's quota is full (507, not 500). */
export function isDiskFull(code: unknown): boolean {
  return code === 'ENOSPC' || code === 'EDQUOT'
}
