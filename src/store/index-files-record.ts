/**
 * The manifest's record of an index's files (`files`): each file's size and sha256 as the save
 * wrote them, so that a check of a saved index its server serves already (an unchanged upload's
 * `savedIndexProblem`) can tell from `lstat` alone that the files are still the ones written,
 * without reading them (a dense part's vectors and HNSW graph): each is there, a regular file
 * of its recorded size, and modified no later than the manifest, which a save writes last (a
 * file written again since has a later time). A copy of the directory whose times differ (`cp
 * -r`) fails that, and is checked by a load as before. The record is deterministic (the same
 * files make the same manifest); the sha256 lets a reader check the bytes themselves.
 * @module
 */
import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { sha256OfFile } from '../file-sha256.ts'
import {
  FILES_RECORD_VERSION,
  FilesRecordSchema,
  MANIFEST_FILE,
  type FilesRecord,
} from './manifest.ts'

/** Deepest file recorded (a named dense part's files are one directory down). */
const MAX_DEPTH = 3

/**
 * The record of every file under `dir` (a save's work directory, all written), the manifest
 * excepted; `known` gives the sha256 of files hashed already (the tools file's).
 */
export async function recordIndexFiles(
  dir: string,
  known: Readonly<Record<string, string>> = {},
): Promise<FilesRecord> {
  const entries: FilesRecord['entries'] = {}
  const walk = async (relative: string, depth: number): Promise<void> => {
    for (const entry of (await readdir(join(dir, relative), { withFileTypes: true })).sort(
      (one, other) => (one.name < other.name ? -1 : 1),
    )) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`
      if (entry.isDirectory() && depth < MAX_DEPTH) await walk(path, depth + 1)
      if (!entry.isFile() || path === MANIFEST_FILE) continue
      const found = await lstat(join(dir, path))
      entries[path] = {
        size: found.size,
        sha256: known[path] ?? (await sha256OfFile(join(dir, path))),
      }
    }
  }
  await walk('', 1)
  return { version: FILES_RECORD_VERSION, entries }
}

/**
 * Whether every file the manifest's `files` lists is under `dir` as recorded (a regular file of
 * its size, modified no later than the manifest); undefined when `files` is no record this
 * version reads (an index saved before round 33): the caller checks the index another way.
 */
export async function filesAsRecorded(dir: string, files: unknown): Promise<boolean | undefined> {
  const parsed = FilesRecordSchema.safeParse(files)
  if (!parsed.success || parsed.data.version !== FILES_RECORD_VERSION) return undefined
  const manifest = await lstat(join(dir, MANIFEST_FILE), { bigint: true }).catch(() => undefined)
  if (manifest === undefined) return false
  for (const [path, recorded] of Object.entries(parsed.data.entries)) {
    const found = await lstat(join(dir, path), { bigint: true }).catch(() => undefined)
    if (
      found === undefined ||
      !found.isFile() ||
      Number(found.size) !== recorded.size ||
      found.mtimeNs > manifest.mtimeNs
    )
      return false
  }
  return true
}
