/**
 * The fingerprint of the demo's source: what a saved demo (`indexes/demo`) records in its
 * manifest's `source.fingerprint`, so that a start compares a few hashes instead of importing
 * the demo's 23 files (70-160 ms warm, 500 ms cold) to learn that nothing changed.
 *
 * It covers what makes the demo's tools: the bytes of every tool file the directory import
 * reads (names and contents, in its order) and the code that imports them (toolsel's
 * `library/` modules: importers, schema rewrites, the tool model), so that a `git pull` that
 * changes either is noticed. The code is read from `src/library` where the checkout has it (the
 * same bytes whether bin/toolsel.mjs runs `src/` or `dist/`), else from the running tree's
 * `library/` (an image with `dist/` only). The code's part is computed once per process. Not
 * covered: modules outside `library/` and npm dependencies (the YAML parser): an upgrade that
 * changes the demo's tools through them alone is noticed at the next change of the files or of
 * `library/` (or `toolsel index src/library/demo/servers --name demo`).
 *
 * Each file is hashed as it is read, one at a time, and only a regular file (links followed) of
 * at most `maxFileBytes` (the import's limit): anything else (a link to /dev/zero or to a FIFO, a
 * file past the limit or still growing past it) fails the fingerprint unread or at the limit, so
 * the start imports the files as before round 44 and the import says what is wrong. Round 44
 * (hard41): a link to /dev/zero was read whole, every file at once (8.8 GB resident in 2 min).
 * @module
 */
import { createHash, type Hash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { toolFileNames } from '../library/importers/import-tools-from-path.ts'
import { DEFAULT_MAX_TOOL_FILE_BYTES } from '../library/importers/import-tools.ts'
import { FileTooLargeError, openForReading } from '../read-text-file.ts'

/** Bump when what the fingerprint covers changes: an older one then never compares equal. */
const FINGERPRINT_VERSION = 1

/** The running tree's `library/` (src/library or dist/library). */
const RUNNING_LIBRARY_DIR = fileURLToPath(new URL('../library', import.meta.url))

/**
 * `sha256:<hex>` of the demo's tool files in `dir` and of the code that imports them. Rejects
 * for a file the import would refuse or could not read (not regular, past `maxFileBytes`).
 */
export async function demoFingerprint(
  dir: string,
  maxFileBytes = DEFAULT_MAX_TOOL_FILE_BYTES,
): Promise<string> {
  const hash = createHash('sha256').update(`toolsel-demo-fingerprint ${FINGERPRINT_VERSION}\n`)
  hash.update(`code ${await importerCodeHash()}\n`)
  await hashToolFiles(hash, dir, maxFileBytes)
  return `sha256:${hash.digest('hex')}`
}

/** The tool files `importToolsFromPath` reads in `dir` (`toolFileNames`), in its order. */
async function hashToolFiles(hash: Hash, dir: string, maxFileBytes: number): Promise<void> {
  const names = toolFileNames(await readdir(dir, { withFileTypes: true }))
  for (const name of names) await hashFile(hash, name, join(dir, name), maxFileBytes)
}

/**
 * Adds `file ${name} ${size}\n` and the file's bytes to `hash` (as version 1 always did), read in
 * chunks, not kept: a regular file only, opened non-blocking (a FIFO without a writer does not
 * hang the open), of at most `maxBytes`, that holds the size its fstat said when read (not one
 * written meanwhile, nor /proc's that say 0).
 */
async function hashFile(hash: Hash, name: string, path: string, maxBytes: number): Promise<void> {
  const { handle, stats } = await openForReading(path, { regularOnly: true })
  try {
    if (stats.size > maxBytes) throw new FileTooLargeError(maxBytes)
    hash.update(`file ${JSON.stringify(name)} ${stats.size}\n`)
    const chunk = Buffer.allocUnsafe(Math.min(stats.size + 1, 1024 * 1024))
    let total = 0
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) break
      total += bytesRead
      if (total > stats.size) break
      hash.update(chunk.subarray(0, bytesRead))
    }
    if (total !== stats.size) throw new Error(`${path} changed while it was read`)
  } finally {
    await handle.close()
  }
}

let codeHash: Promise<string> | undefined

function importerCodeHash(): Promise<string> {
  codeHash ??= hashCode().catch(() => 'unreadable')
  return codeHash
}

async function hashCode(): Promise<string> {
  const checkout = resolve(RUNNING_LIBRARY_DIR, '../../src/library')
  const root = existsSync(checkout) ? checkout : RUNNING_LIBRARY_DIR
  const demo = join(root, 'demo') + sep
  const files = (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => !path.startsWith(demo))
    .sort()
  const hash = createHash('sha256')
  for (const path of files) {
    const bytes = await readFile(path)
    hash.update(`${JSON.stringify(relative(root, path))} ${bytes.length}\n`).update(bytes)
  }
  return hash.digest('hex')
}
