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
 * @module
 */
import { createHash, type Hash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { toolFileNames } from '../library/importers/import-tools-from-path.ts'

/** Bump when what the fingerprint covers changes: an older one then never compares equal. */
const FINGERPRINT_VERSION = 1

/** The running tree's `library/` (src/library or dist/library). */
const RUNNING_LIBRARY_DIR = fileURLToPath(new URL('../library', import.meta.url))

/** `sha256:<hex>` of the demo's tool files in `dir` and of the code that imports them. */
export async function demoFingerprint(dir: string): Promise<string> {
  const hash = createHash('sha256').update(`toolsel-demo-fingerprint ${FINGERPRINT_VERSION}\n`)
  hash.update(`code ${await importerCodeHash()}\n`)
  await hashToolFiles(hash, dir)
  return `sha256:${hash.digest('hex')}`
}

/** The tool files `importToolsFromPath` reads in `dir` (`toolFileNames`), in its order. */
async function hashToolFiles(hash: Hash, dir: string): Promise<void> {
  const names = toolFileNames(await readdir(dir, { withFileTypes: true }))
  const contents = await Promise.all(names.map((name) => readFile(join(dir, name))))
  names.forEach((name, at) => {
    hash.update(`file ${JSON.stringify(name)} ${contents[at]!.length}\n`).update(contents[at]!)
  })
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
