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
 * A module or package record that cannot be read (EACCES, say) fails it too: until round 46 the
 * code's part was then the constant "unreadable", equal however the code changed.
 *
 * Since round 46 (qa17) a fingerprint is cached (`cache`, `demoFingerprintCache()`: a file in
 * `node_modules/.cache/toolsel/`) with the identity of everything it read or looked for (device,
 * inode, mode, size, mtime and ctime in ns of each file and of the demo's directory; the paths it
 * found nothing at): while all of them are the same, a start stats them (about 180 paths) and
 * hashes nothing. The code's part cost 30-120 ms at each cold start (round 45's README figures).
 * A file written changes its ctime, which no one can set back; a fingerprint is cached only when
 * every input's mtime and ctime are over `RACY_MARGIN_NS` older than its reading (a file written
 * in the same clock tick as it was stat'ed would otherwise look the same: git's "racy" files).
 * @module
 */
import { createHash, type Hash } from 'node:crypto'
import { existsSync, statSync, type BigIntStats, type Stats } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { isBuiltin } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  cacheFileCandidates,
  readCacheFile,
  writeCacheFile,
  type CacheFile,
} from '../cache-file.ts'
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
 * What a fingerprint depends on besides the bytes it hashed: the paths it read (files, the
 * demo's directory and the directories it found by looking: their identities are cached) and
 * those it looked for and found nothing at (`missing`: one that appears may change it).
 */
export interface FingerprintInputs {
  read: Set<string>
  missing: Set<string>
}

/**
 * `sha256:<hex>` of the demo's tool files in `dir` and of what indexes them. Rejects for a file
 * the import would refuse or could not read (not regular, past `maxFileBytes`), or a module of
 * the code that cannot be read. With `cache` (`demoFingerprintCache()`), the one cached there
 * while nothing it read changed (nothing hashed), else computed and cached.
 */
export async function demoFingerprint(
  dir: string,
  maxFileBytes = DEFAULT_MAX_TOOL_FILE_BYTES,
  cache: readonly CacheFile[] = [],
): Promise<string> {
  const probes = tokenizerProbes()
  const key = JSON.stringify([
    FINGERPRINT_VERSION,
    INDEX_FORMAT_VERSION,
    probes.core,
    probes.segmented,
    resolve(dir),
    maxFileBytes,
    codeRoot(),
  ])
  const cached = cache.length > 0 ? await cachedFingerprint(cache, key) : undefined
  if (cached !== undefined) return cached
  const started = wallClockNs()
  const hash = createHash('sha256').update(`toolsel-demo-fingerprint ${FINGERPRINT_VERSION}\n`)
  hash.update(`format ${INDEX_FORMAT_VERSION}\n`)
  hash.update(`tokenizer ${probes.core} ${probes.segmented}\n`)
  const code = await buildCodeHash()
  hash.update(`code ${code.hash}\n`)
  const inputs: FingerprintInputs = { read: new Set(), missing: new Set() }
  await hashToolFiles(hash, dir, maxFileBytes, inputs)
  const fingerprint = `sha256:${hash.digest('hex')}`
  if (cache.length > 0) {
    // The code's part was read once per process, maybe long before: against that time.
    const groups = [
      { inputs: code.inputs, since: code.started },
      { inputs, since: started },
    ]
    await cacheFingerprint(cache, key, fingerprint, groups).catch(() => {})
  }
  return fingerprint
}

/** The tool files `importToolsFromPath` reads in `dir` (`toolFileNames`), in its order. */
async function hashToolFiles(
  hash: Hash,
  dir: string,
  maxFileBytes: number,
  inputs: FingerprintInputs,
): Promise<void> {
  inputs.read.add(resolve(dir))
  const names = toolFileNames(await readdir(dir, { withFileTypes: true }))
  for (const name of names) {
    inputs.read.add(resolve(dir, name))
    await hashFile(hash, name, join(dir, name), maxFileBytes)
  }
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

let codeHash: Promise<{ hash: string; inputs: FingerprintInputs; started: bigint }> | undefined

/**
 * `moduleClosureHash` of `BUILD_ENTRY_MODULES` in this checkout, with what it read, once per
 * process. Rejects (every fingerprint of the process then does) when a module cannot be read.
 */
function buildCodeHash(): Promise<{ hash: string; inputs: FingerprintInputs; started: bigint }> {
  codeHash ??= (async () => {
    const started = wallClockNs()
    const inputs: FingerprintInputs = { read: new Set(), missing: new Set() }
    const root = codeRoot()
    // Which tree is hashed: src/ appearing (or going) changes it.
    const checkout = resolve(RUNNING_TREE, '../src')
    if (root === checkout) inputs.read.add(checkout)
    else inputs.missing.add(checkout)
    const hash = await moduleClosureHash(root, BUILD_ENTRY_MODULES, inputs)
    return { hash, inputs, started }
  })()
  return codeHash
}

/** The checkout's src/ when there is one, else the running tree (dist/ only). */
function codeRoot(): string {
  const checkout = resolve(RUNNING_TREE, '../src')
  return existsSync(checkout) ? checkout : RUNNING_TREE
}

/** The wall clock in ns, as file times are. */
function wallClockNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n
}

/**
 * How much older than its reading every input must be for a fingerprint to be cached: a file's
 * times have the file system's granularity (1 s on ext3, 2 s on FAT; some network file systems
 * keep the server's clock), and one written within a tick of its stat looks unchanged.
 */
const RACY_MARGIN_NS = 2_000_000_000n

/** Most fingerprints a cache file keeps (checkouts of one node_modules, other demo dirs). */
const CACHE_ENTRIES = 8

/** Largest cache file read (8 entries of about 200 paths: about 0.2 MB). */
const CACHE_MAX_BYTES = 4 * 1024 * 1024

/** The cache file's layout version. */
const CACHE_VERSION = 1

/** A cached fingerprint: its key, and the identity of each path it read; `missing` paths. */
interface CacheEntry {
  key: string
  fingerprint: string
  read: [path: string, identity: string][]
  missing: string[]
}

/**
 * Where fingerprints are cached: `node_modules/.cache/toolsel/` of the node_modules that the code
 * finds its packages in, else the per-user one of the OS temp directory.
 */
export function demoFingerprintCache(): CacheFile[] {
  const name = `demo-fingerprint.v${CACHE_VERSION}.json`
  const modules = findUpwards(codeRoot(), 'node_modules')
  const places = cacheFileCandidates(modules ?? codeRoot(), name)
  return modules === undefined ? places.filter((place) => place.shared) : places
}

/**
 * A path's identity: device, inode, mode, size, mtime and ctime (ns); undefined when absent.
 * Synchronous: about 180 stats take about 1 ms so, where through the thread pool they took 8 ms
 * under load.
 */
function identity(path: string): string | undefined {
  const info = statSync(path, { bigint: true, throwIfNoEntry: false })
  return info && identityOf(info)
}

function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.mode}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`
}

/** The entries of the first cache file that reads as one (none when none does). */
async function readCacheEntries(cache: readonly CacheFile[]): Promise<CacheEntry[]> {
  for (const { file } of cache) {
    const bytes = await readCacheFile(file, CACHE_MAX_BYTES).catch(() => undefined)
    if (bytes === undefined) continue
    try {
      const parsed = JSON.parse(bytes.toString('utf8')) as { version?: unknown; entries?: unknown }
      if (parsed.version === CACHE_VERSION && Array.isArray(parsed.entries))
        return (parsed.entries as CacheEntry[]).filter(
          (entry) =>
            typeof entry?.key === 'string' &&
            typeof entry.fingerprint === 'string' &&
            Array.isArray(entry.read) &&
            Array.isArray(entry.missing),
        )
    } catch {
      // Not JSON (a write cut short elsewhere): as if absent.
    }
  }
  return []
}

/**
 * The fingerprint cached for `key` while each path it read is the same and none it missed is
 * there. An entry that is not of the layout (a `read` item no pair) or a path that can't be
 * stat'ed is a miss: the fingerprint is computed and cached again (was: it rejected, and every
 * start imported the demo to compare, the cache never written again).
 */
async function cachedFingerprint(
  cache: readonly CacheFile[],
  key: string,
): Promise<string | undefined> {
  const entry = (await readCacheEntries(cache)).find((candidate) => candidate.key === key)
  if (entry === undefined) return undefined
  try {
    const same =
      entry.read.every(([path, known]) => identity(String(path)) === known) &&
      entry.missing.every((path) => identity(String(path)) === undefined)
    return same ? entry.fingerprint : undefined
  } catch {
    return undefined
  }
}

/**
 * Caches `fingerprint` of `key` with the identities of the inputs of `groups` now, unless one of
 * them was written less than RACY_MARGIN_NS before its group's reading started (`since`), or was
 * missing and is there now.
 */
async function cacheFingerprint(
  cache: readonly CacheFile[],
  key: string,
  fingerprint: string,
  groups: ReadonlyArray<{ inputs: FingerprintInputs; since: bigint }>,
): Promise<void> {
  const read = new Map<string, string>()
  const missing = new Set<string>()
  for (const { inputs, since } of groups) {
    for (const path of inputs.read) {
      const info = statSync(path, { bigint: true })
      if (info.mtimeNs > since - RACY_MARGIN_NS || info.ctimeNs > since - RACY_MARGIN_NS) return
      read.set(path, identityOf(info))
    }
    for (const path of inputs.missing) {
      if (identity(path) !== undefined) return
      missing.add(path)
    }
  }
  const entry: CacheEntry = {
    key,
    fingerprint,
    read: [...read].sort(([a], [b]) => (a < b ? -1 : 1)),
    missing: [...missing].sort(),
  }
  const entries = [
    entry,
    ...(await readCacheEntries(cache)).filter((other) => other.key !== key),
  ].slice(0, CACHE_ENTRIES)
  const bytes = Buffer.from(JSON.stringify({ version: CACHE_VERSION, entries }))
  for (const { file, shared } of cache)
    if (await writeCacheFile(file, bytes, () => {}, shared)) return
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
export async function moduleClosureHash(
  root: string,
  entries: readonly string[],
  inputs?: FingerprintInputs,
): Promise<string> {
  const { files, packages } = await moduleClosure(root, entries, inputs)
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
 * `inputs` gets each path read and each looked for and not found.
 */
export async function moduleClosure(
  root: string,
  entries: readonly string[],
  inputs: FingerprintInputs = { read: new Set(), missing: new Set() },
): Promise<{ files: Map<string, Buffer>; packages: string[] }> {
  const demo = join(root, 'library', 'demo') + sep
  const files = new Map<string, Buffer>()
  const imported = new Set<string>()
  const named = new Set<string>()
  let pending = entries.map((entry) => join(root, `${entry}.ts`))
  while (pending.length > 0) {
    const fresh = [...new Set(pending)].filter((path) => !named.has(path))
    for (const path of fresh) named.add(path)
    const found = (await Promise.all(fresh.map((path) => existingFile(path, inputs)))).filter(
      (path): path is string => path !== undefined && !files.has(path) && !path.startsWith(demo),
    )
    const unique = [...new Set(found)]
    const read = await Promise.all(unique.map((path) => readFile(path)))
    pending = []
    unique.forEach((path, at) => {
      inputs.read.add(path)
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
  return { files, packages: await packageRecords(root, imported, inputs) }
}

/**
 * `path` when it is a file; else its compiled `.js` for a `.ts` (dist/); else undefined. What it
 * looked at goes into `inputs`: one that is there but no file (a directory) as read.
 */
async function existingFile(path: string, inputs: FingerprintInputs): Promise<string | undefined> {
  const isFile = async (candidate: string) => {
    const stats: Stats | undefined = await stat(candidate).catch(() => undefined)
    if (stats === undefined) inputs.missing.add(candidate)
    else if (!stats.isFile()) inputs.read.add(candidate)
    return stats?.isFile() === true
  }
  if (await isFile(path)) return path
  if (!path.endsWith('.ts')) return undefined
  const compiled = `${path.slice(0, -3)}.js`
  return (await isFile(compiled)) ? compiled : undefined
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
async function packageRecords(
  root: string,
  names: ReadonlySet<string>,
  inputs: FingerprintInputs,
): Promise<string[]> {
  const modules = findUpwards(root, 'node_modules', inputs)
  if (modules === undefined) return [...names].sort().map((name) => `${name}@missing`)
  const lockFile = join(modules, '.package-lock.json')
  const lock = await readPackageFile(lockFile, inputs)
    .then((text) =>
      text === undefined
        ? undefined
        : (JSON.parse(text) as { packages?: Record<string, LockedPackage> }).packages,
    )
    .catch((error: unknown) => {
      // Not JSON (a write cut short): the packages' own records, as without a lockfile.
      if (error instanceof SyntaxError) return undefined
      throw error
    })
  if (lock === undefined) {
    const records = await Promise.all(
      [...names].map(async (name) => {
        const json = await readPackageFile(join(modules, name, 'package.json'), inputs)
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

/**
 * The text of `file`, or undefined when there is none (ENOENT, ENOTDIR); any other failure
 * (EACCES) rejects: an unreadable record must not read as a missing one, the same however the
 * file changes. `inputs` gets the path.
 */
async function readPackageFile(
  file: string,
  inputs: FingerprintInputs,
): Promise<string | undefined> {
  try {
    const text = await readFile(file, 'utf8')
    inputs.read.add(file)
    return text
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
    inputs.missing.add(file)
    return undefined
  }
}

/** The nearest `name` directory in `dir` or a directory above it; each place tried in `inputs`. */
function findUpwards(dir: string, name: string, inputs?: FingerprintInputs): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, name))) {
      inputs?.read.add(join(at, name))
      return join(at, name)
    }
    inputs?.missing.add(join(at, name))
    if (dirname(at) === at) return undefined
  }
}
