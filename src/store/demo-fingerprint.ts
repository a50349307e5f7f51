/**
 * The fingerprint of the demo's source: what a saved demo (`indexes/demo`) records in its
 * manifest's `source.fingerprint`, so that a start compares a few hashes instead of importing
 * the demo's 23 files (70-160 ms warm, 500 ms cold) to learn that nothing changed.
 *
 * It covers what makes the saved demo, so that a `git pull` or an `npm install` that changes any
 * of it is noticed (the start then imports the files, compares and rebuilds as needed):
 * - the bytes of every tool file the directory import reads (names and contents, in its order);
 * - the code that imports and indexes them and writes the index: every module reachable by its
 *   static imports (`import … from`, `import()`, `require()`, `new URL(…, import.meta.url)`) from
 *   the directory import, the index build and the store (`BUILD_ENTRY_MODULES`: importers, schema
 *   rewrites, tokenizer, BM25 postings, the retriever kinds, the manifest and its format
 *   version…), read from `src/` where the checkout has it (the same bytes whether
 *   bin/toolsel.mjs runs `src/` or `dist/`), else from the running tree (an image with `dist/`
 *   only); the demo's own directory is never among them;
 * - the npm packages those modules import, as installed (`node_modules/.package-lock.json`):
 *   each one's path, version and integrity, and those of the packages it depends on, found as
 *   Node finds them, so that an upgrade of the YAML parser or of wink's stemmer is noticed;
 * - the index format version and the BM25 tokenizer's probes (store/kinds/tokenizer-probe.ts:
 *   its terms for a fixed text, which also cover this Node's ICU word breaks).
 * Until round 45 (qa16) only `library/` was covered: a change of the tokenizer left the demo
 * "current", and its load then refused it as built by another tokenizer: the start failed.
 * The code's and packages' part is computed once per process: 151 modules (800 KB) and one
 * lockfile read, 45 ms warm under load 17 on 2 cores (library/ alone: 43 modules); the probes
 * are those the BM25 load computes anyway.
 *
 * Each file is hashed as it is read, one at a time, and only a regular file (links followed) of
 * at most `maxFileBytes` (the import's limit): anything else (a link to /dev/zero or to a FIFO, a
 * file past the limit or still growing past it) fails the fingerprint unread or at the limit, so
 * the start imports the files as before round 44 and the import says what is wrong. Round 44
 * (hard41): a link to /dev/zero was read whole, every file at once (8.8 GB resident in 2 min).
 * @module
 */
import { createHash, type Hash } from 'node:crypto'
import { existsSync, type Stats } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { isBuiltin } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { toolFileNames } from '../library/importers/import-tools-from-path.ts'
import { DEFAULT_MAX_TOOL_FILE_BYTES } from '../library/importers/import-tools.ts'
import { FileTooLargeError, openForReading, readChunksUpTo } from '../read-text-file.ts'
import { tokenizerProbes } from './kinds/tokenizer-probe.ts'
import { INDEX_FORMAT_VERSION } from './manifest.ts'

/** Bump when what the fingerprint covers changes: an older one then never compares equal. */
const FINGERPRINT_VERSION = 2

/** The running tree: src/ or dist/. */
const RUNNING_TREE = fileURLToPath(new URL('..', import.meta.url))

/**
 * The modules (under src/ or dist/, without extension) whose code, and whatever it imports, makes
 * the saved demo: the directory import, the index build, the store that writes it.
 */
export const BUILD_ENTRY_MODULES = [
  'library/importers/import-tools-from-path',
  'store/build-index',
  'store/index-store',
]

/**
 * `sha256:<hex>` of the demo's tool files in `dir` and of what indexes them. Rejects for a file
 * the import would refuse or could not read (not regular, past `maxFileBytes`).
 */
export async function demoFingerprint(
  dir: string,
  maxFileBytes = DEFAULT_MAX_TOOL_FILE_BYTES,
): Promise<string> {
  const hash = createHash('sha256').update(`toolsel-demo-fingerprint ${FINGERPRINT_VERSION}\n`)
  const probes = tokenizerProbes()
  hash.update(`format ${INDEX_FORMAT_VERSION}\n`)
  hash.update(`tokenizer ${probes.core} ${probes.segmented}\n`)
  hash.update(`code ${await buildCodeHash()}\n`)
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
    const total = await readChunksUpTo(handle, stats.size, (chunk) => hash.update(chunk)).catch(
      (error: unknown) => {
        // Grown past its fstat's size since.
        if (error instanceof FileTooLargeError) return -1
        throw error
      },
    )
    if (total !== stats.size) throw new Error(`${path} changed while it was read`)
  } finally {
    await handle.close()
  }
}

let codeHash: Promise<string> | undefined

/** `moduleClosureHash` of `BUILD_ENTRY_MODULES` in this checkout, once per process. */
function buildCodeHash(): Promise<string> {
  codeHash ??= moduleClosureHash(codeRoot(), BUILD_ENTRY_MODULES).catch(() => 'unreadable')
  return codeHash
}

/** The checkout's src/ when there is one, else the running tree (dist/ only). */
function codeRoot(): string {
  const checkout = resolve(RUNNING_TREE, '../src')
  return existsSync(checkout) ? checkout : RUNNING_TREE
}

/**
 * Specifiers of the modules and files a module's code names: `import|export … from '…'`,
 * `import('…')`, `import '…'`, `require('…')`, `require.resolve('…')`, `new URL('…'` and
 * `siblingModule('name'` (worker-thread.ts).
 */
const SPECIFIER =
  /(?:\b(?:import|export)\s[^'"`;]*?\bfrom\s*|\bimport\s*\(\s*|(?:^|;)\s*import\s+|\brequire(?:\.resolve)?\(\s*|\bnew\s+URL\(\s*)(['"`])([^'"`\n$]+)\1|\bsiblingModule\(\s*(['"])([^'"\n]+)\3/gm

/** Extensions of the files whose specifiers are followed. */
const CODE_FILE = /\.(ts|js|mjs|cjs)$/

/**
 * The hex sha256 of `moduleClosure(root, entries)`: each file's path (from `root`) and bytes, in
 * path order, then its package records.
 */
export async function moduleClosureHash(root: string, entries: readonly string[]): Promise<string> {
  const { files, packages } = await moduleClosure(root, entries)
  const hash = createHash('sha256')
  for (const path of [...files.keys()].sort()) {
    const bytes = files.get(path)!
    hash.update(`${JSON.stringify(relative(root, path))} ${bytes.length}\n`).update(bytes)
  }
  for (const record of packages) hash.update(`package ${record}\n`)
  return hash.digest('hex')
}

/**
 * The modules reachable from `entries` (paths under `root`, without extension: `.ts`, else
 * `.js`), with their bytes, and the records of the npm packages they import (`packageRecords`).
 * Followed: every relative specifier in a module's text (`SPECIFIER`; one named in a comment
 * too, which costs a file more, never one less) that names a file (`.ts` also as its compiled
 * `.js`); a bare one names a package. Files of `root`'s `library/demo/` are left out
 * (demoFingerprint hashes the tool files it imports). Read a level at a time, its files at once.
 */
export async function moduleClosure(
  root: string,
  entries: readonly string[],
): Promise<{ files: Map<string, Buffer>; packages: string[] }> {
  const demo = join(root, 'library', 'demo') + sep
  const files = new Map<string, Buffer>()
  const imported = new Set<string>()
  const named = new Set<string>()
  let pending = entries.map((entry) => join(root, `${entry}.ts`))
  while (pending.length > 0) {
    const fresh = [...new Set(pending)].filter((path) => !named.has(path))
    for (const path of fresh) named.add(path)
    const found = (await Promise.all(fresh.map(existingFile))).filter(
      (path): path is string => path !== undefined && !files.has(path) && !path.startsWith(demo),
    )
    const unique = [...new Set(found)]
    const read = await Promise.all(unique.map((path) => readFile(path)))
    pending = []
    unique.forEach((path, at) => {
      files.set(path, read[at]!)
      if (!CODE_FILE.test(path)) return
      for (const match of read[at]!.toString('utf8').matchAll(SPECIFIER)) {
        const specifier = match[2] ?? `./${match[4]}.ts`
        if (specifier.startsWith('.')) pending.push(resolve(dirname(path), specifier))
        else if (!isBuiltin(specifier) && /^(@[\w.-]+\/)?[\w.-]+(\/|$)/.test(specifier))
          imported.add(packageName(specifier))
      }
    })
  }
  return { files, packages: await packageRecords(root, imported) }
}

/** `path` when it is a file; else its compiled `.js` for a `.ts` (dist/); else undefined. */
async function existingFile(path: string): Promise<string | undefined> {
  const isFile = (stats: Stats | undefined) => stats?.isFile() === true
  if (isFile(await stat(path).catch(() => undefined))) return path
  if (!path.endsWith('.ts')) return undefined
  const compiled = `${path.slice(0, -3)}.js`
  return isFile(await stat(compiled).catch(() => undefined)) ? compiled : undefined
}

/** The package a bare specifier names: `yaml`, `@scope/name` (of `@scope/name/sub`). */
function packageName(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/** An entry of npm's lockfiles' `packages`: an installed package. */
interface LockedPackage {
  version?: string
  integrity?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}

/**
 * What is installed of `names` (packages the code imports) as Node finds them from `root`, sorted:
 * from the `node_modules/.package-lock.json` that npm writes as it installs (one file, 180 KB for
 * toolsel's 480 packages), each package's install path, version and integrity (`node_modules/yaml@2.9.1 sha512-…`), and those of every
 * package it depends on, found as Node would (`node_modules` nested first, then upwards); without
 * it (another package manager), each imported package's `name@version` from its `package.json`.
 * A package not found is `name@missing`.
 */
async function packageRecords(root: string, names: ReadonlySet<string>): Promise<string[]> {
  const modules = findUpwards(root, 'node_modules')
  if (modules === undefined) return [...names].sort().map((name) => `${name}@missing`)
  const lock = await readFile(join(modules, '.package-lock.json'), 'utf8')
    .then((text) => (JSON.parse(text) as { packages?: Record<string, LockedPackage> }).packages)
    .catch(() => undefined)
  if (lock === undefined) {
    const records = await Promise.all(
      [...names].map(async (name) => {
        const json = await readFile(join(modules, name, 'package.json'), 'utf8').catch(
          () => undefined,
        )
        const version = json === undefined ? 'missing' : (JSON.parse(json).version ?? 'none')
        return `${name}@${version}`
      }),
    )
    return records.sort()
  }
  const records = new Set<string>()
  const seen = new Set<string>()
  const pending: [string, string][] = [...names].map((name) => ['', name])
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [from, name] = next
    const key = lockedPath(lock, from, name)
    if (key === undefined) {
      records.add(`${name}@missing`)
      continue
    }
    if (seen.has(key)) continue
    seen.add(key)
    const entry = lock[key]!
    records.add(`${key}@${entry.version ?? 'none'}${entry.integrity ? ` ${entry.integrity}` : ''}`)
    for (const dependency of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies }))
      pending.push([key, dependency])
  }
  return [...records].sort()
}

/**
 * The lockfile key of `name` as Node resolves it from the package installed at `from` (a key,
 * `node_modules/a/node_modules/b`; '' for the project): `from/node_modules/name`, then each
 * enclosing `node_modules` outwards.
 */
function lockedPath(
  lock: Record<string, LockedPackage>,
  from: string,
  name: string,
): string | undefined {
  for (let at = from; ;) {
    const key = at === '' ? `node_modules/${name}` : `${at}/node_modules/${name}`
    if (Object.hasOwn(lock, key)) return key
    if (at === '') return undefined
    const cut = at.lastIndexOf('/node_modules/')
    at = cut === -1 ? '' : at.slice(0, cut)
  }
}

/** The nearest `name` directory in `dir` or a directory above it. */
function findUpwards(dir: string, name: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, name))) return join(at, name)
    if (dirname(at) === at) return undefined
  }
}
