/**
 * A library's whole life in one module: importing its tools, indexing them (every retriever part
 * the build asks for), saving the index, loading it, and swapping it into the set of served
 * libraries. The service (uploads, usage examples, start-up loading), the MCP gateway's library
 * sync, MCP scoped views, the CLI and the benchmark all go through here; `build-index.ts` and
 * `index-store.ts` are its internals and nothing else imports them.
 *
 * @example
 * ```ts
 * const config = defaultConfig()
 * // Import a tool file and index it (BM25, plus whatever retrieve.build asks for) in memory:
 * const { indexed } = await importLibrary({ path: 'tools.json' }, 'mytools', config)
 * // Save it atomically under library.indexDir and serve it (a request sees old or new, never a mix):
 * await publishLibrary(service.libraries, indexed, { indexDir: config.library.indexDir })
 * // Later, at start-up:
 * const loaded = await loadLibraryReference('mytools', config, logger)
 * ```
 * @module
 */
import { createHash } from 'node:crypto'
import { mkdir, utimes } from 'node:fs/promises'
import { homedir } from 'node:os'
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { fileURLToPath } from 'node:url'
import type { Config } from '../config/schema.ts'
import { errorMessage, ToolselError } from '../errors.ts'
import type { ExampleSet } from '../examples/example-set.ts'
import {
  importTools,
  importToolsFromPath,
  type ImportFormat,
  type ImportResult,
  type OnDuplicate,
  type ProviderNames,
  summarizeImport,
  type ImportSummary,
} from '../library/importers/index.ts'
import type { Tool } from '../library/tool.ts'
import { assertLibraryName, ToolLibrary } from '../library/tool-library.ts'
import type { Logger } from '../log.ts'
import { buildIndexedLibrary, type BuildIndexOptions } from './build-index.ts'
import { builtParts, type IndexedLibrary } from './indexed-library.ts'
import { libraryNameFromPath } from './library-name.ts'
import {
  isIndexDir,
  loadIndexedLibrary,
  readIndexTools,
  readManifest,
  recoverIndexDir,
  saveIndexedLibrary,
  type SaveOptions,
  type UnshowableIdsLevel,
} from './index-store.ts'
import { readStoredExamples } from './examples-part.ts'
import { demoFingerprint, demoFingerprintCache } from './demo-fingerprint.ts'
import { assertTrustedPath } from '../trusted-path.ts'
import { pathExists } from './path-exists.ts'
import { pruneDemoCache } from './demo-cache-prune.ts'
import { filesAsRecorded } from './index-files-record.ts'
import { withLibraryLock } from './index-dir-claims.ts'
export { indexDirWarnings } from './index-dir-claims.ts'
import type { PreparedToolsIndex } from './tools-index-file.ts'
import { bm25Settings, builtWithOtherTokenizer } from './kinds/bm25-kind.ts'
import {
  buildSettingsOf,
  sameBuildSettings,
  splitPartList,
  withRequirements,
} from './kinds/index.ts'
import {
  INDEX_FORMAT_VERSION,
  readManifestText,
  readManifestTextSync,
  type IndexManifest,
} from './manifest.ts'
import { Bm25Retriever } from '../retrieve/bm25/bm25-retriever.ts'
import { importHeapLimitMb, importUploadInWorker } from './upload-import.ts'
import { type SavedTools, uploadText } from './upload-import-worker.ts'
import { groupWarnings } from '../library/importers/group-warnings.ts'

export { buildIndexedLibrary, type BuildIndexOptions, type BuildProgress } from './build-index.ts'
export {
  commitStagedIndexes,
  deleteIndex,
  indexFs,
  isIndexDir,
  listIndexes,
  loadIndexedLibrary,
  readIndexTools,
  readManifest,
  recoverIndexDir,
  saveIndexedLibrary,
  stageIndexedLibrary,
  syncCommitted,
  unshowableIdWarnings,
  type SaveOptions,
  type StagedIndex,
} from './index-store.ts'
export type { PreparedToolsIndex } from './tools-index-file.ts'
export type { IndexedLibrary } from './indexed-library.ts'
export { libraryNameFromPath } from './library-name.ts'

/** The demo library that ships with toolsel: one MCP `tools/list` file per server. */
export const DEMO_LIBRARY_DIR = fileURLToPath(new URL('../library/demo/servers', import.meta.url))
export const DEMO_LIBRARY_NAME = 'demo'

/** Indexes `tools` in memory as the library `name`. */
export function indexTools(
  name: string,
  tools: readonly Tool[],
  config: Config,
  options: BuildIndexOptions = {},
): Promise<IndexedLibrary> {
  return buildIndexedLibrary(new ToolLibrary(name, tools), config, options)
}

interface ImportSettings {
  format?: ImportFormat
  namespace?: string
  /** Two records with one id: error (default), rename, first or last. */
  onDuplicate?: OnDuplicate
  /** Tool names toolsel wrote (`sms--send_sms`): read back as ids (decode, default) or keep. */
  providerNames?: ProviderNames
  /** A tool file larger than this is refused (default 256 MiB; `library.maxFileBytes`). */
  maxFileBytes?: number
  /** Most tools (and tool file records) imported (default 2,000,000; `library.maxTools`). */
  maxTools?: number
}

/**
 * Where the tools come from: a file or directory of tool files, or the text of one file (an
 * upload: named `<name>.json` in messages and `source.file`, `.yaml`/`.csv` by its text, unless
 * `inputName` names it: `stdin`).
 */
export type LibraryInput =
  | ({ path: string } & ImportSettings)
  | ({ text: string; fileName?: string; inputName?: string } & ImportSettings)

/**
 * Imports tools (any supported format) as the library `name`, not indexed yet; `source` is what
 * its manifest records (the file and format: the rebuild hint of later load errors names them).
 */
export async function importAsLibrary(
  input: LibraryInput,
  name: string,
): Promise<{ library: ToolLibrary; imported: ImportResult; source: BuildIndexOptions['source'] }> {
  const settings = {
    format: input.format,
    namespace: input.namespace,
    onDuplicate: input.onDuplicate,
    providerNames: input.providerNames,
    maxFileBytes: input.maxFileBytes,
    maxTools: input.maxTools,
    // The demo's files are regular files: a link there to a FIFO hung every start in its open
    // (round 44, hard41), a device was read up to maxFileBytes. Other paths may be pipes
    // (`toolsel index <(curl …)`).
    regularOnly: 'path' in input && isDemoSource(input.path),
  }
  // Before the import: files changed while it reads them are then noticed by the next start.
  const fingerprint =
    'path' in input && isDemoSource(input.path)
      ? await demoFingerprint(input.path, input.maxFileBytes, demoFingerprintCache()).catch(
          () => undefined,
        )
      : undefined
  const imported =
    'path' in input
      ? await importToolsFromPath(input.path, settings)
      : await importTools(input.text, {
          ...settings,
          fileName: input.fileName,
          uploadName: name,
          inputName: input.inputName,
        })
  const library = new ToolLibrary(name, imported.tools)
  const source = {
    ...('path' in input && { path: resolve(input.path) }),
    format: imported.format,
    ...(fingerprint !== undefined && { fingerprint }),
  }
  return { library, imported, source }
}

/**
 * Imports tools (any supported format) and indexes them as the library `name` (`importAsLibrary`,
 * then the build). `prepare` sees the library before it is indexed (to choose its usage examples,
 * say).
 */
export async function importLibrary(
  input: LibraryInput,
  name: string,
  config: Config,
  options: BuildIndexOptions & {
    prepare?: (
      library: ToolLibrary,
      imported: ImportResult,
    ) => BuildIndexOptions | void | Promise<BuildIndexOptions | void>
  } = {},
): Promise<{ indexed: IndexedLibrary; imported: ImportResult }> {
  const { prepare, ...buildOptions } = options
  const { library, imported, source } = await importAsLibrary(input, name)
  const indexed = await buildIndexedLibrary(library, config, {
    source,
    ...buildOptions,
    ...(await prepare?.(library, imported)),
  })
  return { indexed, imported }
}

/**
 * Whether building `library` with `build` would make the index that `saved` describes again: the
 * same tools (count and content hash: every tool's JSON, in order), the same source (file and
 * format), the same usage examples (version, count and cap), and the same parts built the same
 * way (`buildsSameParts`). A re-upload of the same tools then keeps the saved index as it is:
 * nothing built, nothing written. `?rebuild=true` / `toolsel index --rebuild` builds anyway.
 */
export function buildsSameIndex(
  saved: IndexManifest,
  library: ToolLibrary,
  build: BuildIndexOptions,
  config: Config,
): boolean {
  const examples =
    build.examples !== undefined && build.examples.version > 0 ? build.examples : undefined
  return (
    saved.library === library.name &&
    saved.toolCount === library.size &&
    saved.contentHash === library.contentHash &&
    saved.source.path === build.source?.path &&
    saved.source.format === build.source?.format &&
    saved.examples?.version === examples?.version &&
    saved.examples?.count === examples?.size &&
    saved.examples?.cap === examples?.cap &&
    buildsSameParts(saved, build.retriever, config)
  )
}

/**
 * The half of `buildsSameIndex` that needs no tools: the same retriever parts (names and
 * default, `retriever` or `retrieve.build`), each built with the same settings as the manifest
 * records (`build`: BM25's k1, b, field weights and tokenizer; the dense embedder, text, index
 * kind and HNSW parameters; see each kind's `buildSettings`). An index saved without that record
 * (before round 26) is never the same: its next build rebuilds it once.
 */
export function buildsSameParts(
  saved: IndexManifest,
  retriever: BuildIndexOptions['retriever'],
  config: Config,
): boolean {
  const wanted = splitPartList(retriever ?? config.retrieve.build)
  const parts = withRequirements(wanted, config)
  const savedParts = Object.keys(saved.retrievers)
  return (
    saved.defaultRetriever === (wanted[0] ?? 'bm25') &&
    parts.length === savedParts.length &&
    parts.every((part) => savedParts.includes(part.name)) &&
    sameBuildSettings(saved.build, buildSettingsOf(parts, config))
  )
}

/** The manifest of the index saved at `dir`; undefined when there is none or it can't be read. */
export async function savedManifest(dir: string): Promise<IndexManifest | undefined> {
  if (!(await isIndexDir(dir))) return undefined
  return readManifest(dir).catch(() => undefined)
}

/**
 * `importLibrary` of an upload's `text` (UTF-8 bytes or a string), also handing back a summary of
 * the import and what the save can write as it is (`toolsIndex`, to pass in `SaveOptions`). A
 * body of at least `server.importWorkerMinChars`, or one that `expandsOnImport`, is imported in a
 * worker thread (upload-import.ts): the event loop only adopts the tools file's bytes and index it
 * hands back; a smaller one in the process. The index and files come out the same either way.
 * Bytes given to the worker are transferred to it: `input.text` is empty afterwards.
 *
 * With `unchangedFrom` (the saved library this upload replaces), an upload that `buildsSameIndex`
 * is not built: the answer is `unchanged: true` and no `indexed`. When its parts are built the
 * same way (`buildsSameParts`, known before the import), the worker is told the saved tools'
 * content hash and makes no BM25 postings for the same tools: such an upload builds nothing at
 * all. Should it still differ (other usage examples, another format), the build takes the tool
 * postings of the served library, whose tools these are.
 */
export async function importUploadedLibrary(
  input: { text: string | Uint8Array; fileName?: string } & ImportSettings,
  name: string,
  config: Config,
  options: BuildIndexOptions & {
    prepare?: (library: ToolLibrary) => BuildIndexOptions | void | Promise<BuildIndexOptions | void>
    unchangedFrom?: IndexedLibrary
  } = {},
): Promise<
  { warnings: string[]; summary: ImportSummary } & (
    | { unchanged: true; indexed?: undefined; toolsIndex?: undefined }
    | {
        unchanged: false
        indexed: IndexedLibrary
        toolsIndex?: PreparedToolsIndex
        /**
         * Why the saved index was not kept although it holds these tools: its disk copy did not
         * load (or held another save); this build replaces it.
         */
        damaged?: string
      }
  )
> {
  const { prepare, unchangedFrom, ...buildOptions } = options
  const saved = unchangedFrom?.manifest
  const sameParts = saved !== undefined && buildsSameParts(saved, buildOptions.retriever, config)
  const upload = await importUpload(input, name, config, {
    signal: options.signal,
    ...(sameParts && { savedTools: { count: saved.toolCount, contentHash: saved.contentHash } }),
  })
  const settings = {
    source: upload.source,
    bm25Postings: upload.bm25Postings ?? servedPostings(unchangedFrom, upload.library),
    ...buildOptions,
    ...(await prepare?.(upload.library)),
  }
  const answer = { warnings: upload.warnings, summary: upload.summary }
  let damaged: string | undefined
  if (saved !== undefined && buildsSameIndex(saved, upload.library, settings, config)) {
    // The served version was whole when loaded or saved; the disk copy a restart reads may not
    // be any more (a file cut or overwritten under it, another process's commit or delete):
    // built and saved again then. Checked under the library's lock, as a save commits: between
    // another process's two renames the directory is not there, and the check found it
    // "damaged" (a rebuild, a warning) although a whole save was being put in place.
    const { dir, manifest } = unchangedFrom!
    damaged = dir === undefined ? undefined : await savedSaveProblem(dir, config, manifest)
    if (damaged === undefined) return { ...answer, unchanged: true }
  }
  const indexed = await buildIndexedLibrary(upload.library, config, settings)
  return { ...answer, unchanged: false, indexed, toolsIndex: upload.toolsIndex, damaged }
}

/**
 * `savedIndexProblem(dir, config, sameAs)` with the disk looked at under the library's lock, as a
 * commit holds it: only the manifest and the recorded files' `lstat` there (milliseconds). The
 * lock is a commit's, taken over as a dead writer's past 5 s (index-dir-claims.ts), so a load of
 * every file (seconds for a large library) runs after it, and only where the manifest is that very
 * save but its files can't be vouched for by the record (none, before round 33; touched since):
 * another save found there (another process's commit) needs no load to be told apart. A commit
 * by another process during that load may make it fail: a rebuild and save, as for a damaged copy.
 */
async function savedSaveProblem(
  dir: string,
  config: Config,
  sameAs: IndexManifest,
): Promise<string | undefined> {
  const quick = await underLibraryLock(dir, async () => {
    const saved = await readManifest(dir).catch(() => undefined)
    // No manifest to read: the load below says why (it fails on it at once).
    if (saved === undefined) return LOAD
    if (!sameSave(saved, sameAs)) return ANOTHER_SAVE
    return (await filesAsRecorded(dir, saved.files)) === true ? undefined : LOAD
  })
  return quick === LOAD ? savedIndexProblem(dir, config, sameAs) : quick
}

/** `savedSaveProblem`'s verdict under the lock that the save's files must be loaded to tell. */
const LOAD = Symbol('load')

const ANOTHER_SAVE = 'it holds another save than the one served'

/**
 * `work` holding the lock of the library saved at `dir` (`withLibraryLock` of its index directory
 * and name); without it when that index directory is gone (no lock to take: nothing is saved).
 */
async function underLibraryLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const indexDir = dirname(dir)
  if (!(await pathExists(indexDir))) return work()
  return withLibraryLock(indexDir, basename(dir), work)
}

/**
 * Why the index saved at `dir` does not load, its files checked as a server's load checks them
 * (`loadIndexedLibrary`: manifest, tools file against its hash or index, each part, usage
 * examples), or (`sameAs`) is another save than that manifest's; undefined when it loads (and is
 * that save). What it loaded is let go at once. One load of the saved files: what a server's
 * start pays for the library.
 */
export async function savedIndexProblem(
  dir: string,
  config: Config,
  sameAs?: IndexManifest,
): Promise<string | undefined> {
  if (sameAs !== undefined) {
    // The manifest of that very save, its files as it recorded them (`files`, since round 33):
    // that save, whole, without reading its files (a dense part's vectors and HNSW graph).
    // Anything else (an older manifest, a file touched since) is checked by the load below.
    const saved = await readManifest(dir).catch(() => undefined)
    if (
      saved !== undefined &&
      sameSave(saved, sameAs) &&
      (await filesAsRecorded(dir, saved.files)) === true
    )
      return undefined
  }
  try {
    const loaded = await loadIndexedLibrary(dir, config)
    loaded.library.release(0)
    return sameAs === undefined || sameSave(loaded.manifest, sameAs) ? undefined : ANOTHER_SAVE
  } catch (error) {
    return (error as Error).message
  }
}

/**
 * The tool postings of `served` when `library` holds its very tools (count and content hash:
 * the same tools in the same order); the bm25 kind takes them when their settings are its own.
 */
function servedPostings(
  served: IndexedLibrary | undefined,
  library: ToolLibrary,
): BuildIndexOptions['bm25Postings'] {
  const bm25 = served?.retrievers.get('bm25')
  if (
    !(bm25 instanceof Bm25Retriever) ||
    served!.manifest.toolCount !== library.size ||
    served!.manifest.contentHash !== library.contentHash
  )
    return undefined
  return { settings: bm25.settings, postings: bm25.postings }
}

/**
 * The import half of `importUploadedLibrary`: in the process for a small body, else in a worker
 * thread, which also hands back the tools index's bytes and the tools' BM25 postings (none when
 * the tools turn out to be `savedTools`).
 */
async function importUpload(
  input: { text: string | Uint8Array; fileName?: string } & ImportSettings,
  name: string,
  config: Config,
  options: { signal?: AbortSignal; savedTools?: SavedTools },
): Promise<{
  library: ToolLibrary
  source: BuildIndexOptions['source']
  bm25Postings?: BuildIndexOptions['bm25Postings']
  toolsIndex?: PreparedToolsIndex
  warnings: string[]
  summary: ImportSummary
}> {
  const { server } = config
  if (input.text.length < server.importWorkerMinChars && !expandsOnImport(input.text)) {
    // UTF-8 as the import worker decodes it: bytes that are not UTF-8 are refused.
    const text = typeof input.text === 'string' ? input.text : uploadText(input.text)
    const { library, imported, source } = await importAsLibrary(
      { ...input, text, maxTools: config.library.maxTools },
      name,
    )
    assertToolsBytes(name, library.toJsonLines().length, server.maxLibraryToolsBytes)
    return { library, source, warnings: imported.warnings, summary: summarizeImport(imported) }
  }
  assertLibraryName(name)
  const upload = await importUploadInWorker(
    name,
    input.text,
    {
      format: input.format,
      namespace: input.namespace,
      onDuplicate: input.onDuplicate,
      providerNames: input.providerNames,
      fileName: input.fileName,
      uploadName: name,
      maxTools: config.library.maxTools,
    },
    {
      workers: server.importWorkers,
      heapLimitMb: importHeapLimitMb(server.bodyLimitBytes),
      bm25: bm25Settings(config),
      bm25Unless: options.savedTools,
      signal: options.signal,
    },
  )
  assertToolsBytes(name, upload.toolsIndex.toolLines.length, server.maxLibraryToolsBytes)
  return {
    library: upload.library,
    source: { format: upload.format },
    bm25Postings: upload.bm25,
    toolsIndex: upload.toolsIndex,
    warnings: upload.warnings,
    summary: upload.summary,
  }
}

/** PAYLOAD_TOO_LARGE (413) when an upload's tools take more than `server.maxLibraryToolsBytes`. */
function assertToolsBytes(name: string, bytes: number, maxBytes: number): void {
  if (bytes <= maxBytes) return
  throw new ToolselError(
    'PAYLOAD_TOO_LARGE',
    `The tools of library "${name}" take ${bytes.toLocaleString('en-US')} bytes as JSON once imported, more than server.maxLibraryToolsBytes (${maxBytes.toLocaleString('en-US')}); import fewer operations or tools at once. Nothing was changed.`,
    { details: { library: name, bytes, maxBytes } },
  )
}

/**
 * An upload with more objects (`{`) than this is imported in a worker, whatever its size: each
 * object of a schema is walked several times (schema rewrite, ajv; ~5 µs), so one tool of 20,000
 * parameters held the event loop ~250 ms in a body of 560 KB (bench/README round 21).
 */
export const IN_PROCESS_MAX_OBJECTS = 5000

/**
 * Whether a body small enough for the process still has to be imported in a worker: it holds a
 * `$ref` (an OpenAPI spec's references can expand a few kilobytes into a large library, and real
 * specs of 140 KB took 300-450 ms to import) or more than IN_PROCESS_MAX_OBJECTS objects. Two
 * scans of the text, about a millisecond per megabyte.
 */
export function expandsOnImport(text: string | Uint8Array): boolean {
  // A Buffer over the bytes (not a copy); `{` and `$ref` are the same bytes in UTF-8, never part
  // of another character's.
  const body =
    typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength)
  if (body.includes('$ref')) return true
  let objects = 0
  for (let at = body.indexOf('{'); at !== -1; at = body.indexOf('{', at + 1)) {
    objects += 1
    if (objects > IN_PROCESS_MAX_OBJECTS) return true
  }
  return false
}

/**
 * Rebuilds `indexed` with the same retriever parts (and source), with new `tools` and/or usage
 * `examples`: the vectors of unchanged tools come from the saved index's embedding cache.
 */
export function rebuildLibrary(
  indexed: IndexedLibrary,
  config: Config,
  changes: {
    tools?: readonly Tool[]
    examples?: ExampleSet
    signal?: AbortSignal
    logger?: Logger
  },
): Promise<IndexedLibrary> {
  const name = indexed.library.name
  const library = changes.tools ? new ToolLibrary(name, changes.tools) : indexed.library
  return buildIndexedLibrary(library, config, {
    source: indexed.manifest.source,
    retriever: builtParts(indexed),
    previousIndexDir: indexed.dir ?? join(config.library.indexDir, name),
    previous: indexed,
    logger: changes.logger,
    signal: changes.signal,
    examples: changes.examples,
  })
}

/**
 * A view of `indexed` holding only `tools`, under the same name (responses and errors name the
 * library the client asked for). Only BM25 is built, whatever `retrieve.build` says: embedding a
 * subset per client scope would cost seconds per view.
 */
export function scopedView(
  indexed: IndexedLibrary,
  tools: readonly Tool[],
  config: Config,
): Promise<IndexedLibrary> {
  return indexTools(indexed.library.name, tools, config, { retriever: 'bm25' })
}

/** Where served libraries live: the service's `LibraryRegistry`. */
export interface LibrarySlots {
  get(name: string): IndexedLibrary | undefined
  set(indexed: IndexedLibrary): void
}

/**
 * Swaps `indexed` into `slots`, after saving it atomically under `indexDir` when one is given (a
 * library without one is served from memory only): swapped in as it is committed, under the
 * library's lock (`SaveOptions.onCommit`), so that another process's commit and this one's swap
 * can't cross. Requests that already hold the previous library keep using it; the next ones get
 * this one. Returns what was swapped in.
 */
export async function publishLibrary(
  slots: LibrarySlots,
  indexed: IndexedLibrary,
  options: { indexDir?: string } & SaveOptions = {},
): Promise<IndexedLibrary> {
  if (options.indexDir === undefined) {
    slots.set(indexed)
    return indexed
  }
  let published: IndexedLibrary | undefined
  await saveIndexedLibrary(options.indexDir, indexed, {
    ...options,
    onCommit: (dir, replaced) => {
      published = { ...indexed, dir }
      slots.set(published)
      options.onCommit?.(dir, replaced)
    },
  })
  return published!
}

/** Tries of `syncSavedLibrary`'s load (another process's commit may come in between). */
const SYNC_ATTEMPTS = 5

/**
 * Makes what `slots` serves as library `name` the index saved now under `indexDir` (another
 * process saved or deleted it: `serve --workers N` relays that, service/cluster-sync.ts): loads
 * it (unless `slots` holds that very save already) and swaps it in under the library's lock
 * once the disk still holds it, or drops the library when none is saved. Whatever order the
 * changes of several processes come in, the last one to run leaves what was committed last:
 * an older version loaded meanwhile is never swapped in over a newer commit. A load that meets
 * a commit half-way (files of two versions: a checked load fails) is tried again.
 */
export async function syncSavedLibrary(
  slots: LibrarySlots & { delete(name: string): void },
  name: string,
  indexDir: string,
  config: Config,
  logger?: Logger,
): Promise<void> {
  const dir = join(indexDir, name)
  for (let attempt = 1; ; attempt += 1) {
    try {
      const served = slots.get(name)
      const saved = await committedManifest(dir)
      const version =
        saved === undefined
          ? undefined
          : served !== undefined && served.dir === dir && sameSave(served.manifest, saved)
            ? served
            : await loadIndexedLibrary(dir, config, { logger })
      // Served already (this process's own commit, or one applied before): nothing to swap, and
      // no lock to wait for; a later commit is reported again.
      if (version !== undefined && version === served) return
      if (!(await pathExists(indexDir))) {
        // No index directory, so no lock to take either: nothing is saved.
        if (served !== undefined) slots.delete(name)
        return
      }
      const installed = await withLibraryLock(indexDir, name, async () => {
        const now = await committedManifest(dir)
        if (version === undefined) {
          if (now !== undefined) return false
          if (slots.get(name) !== undefined) slots.delete(name)
          return true
        }
        if (now === undefined || !sameSave(now, version.manifest)) return false
        if (slots.get(name) !== version) slots.set({ ...version, dir })
        return true
      })
      if (installed) return
      // Committed or deleted meanwhile: the version loaded is nobody's.
      if (version !== undefined && version !== served) version.library.release(0)
      if (attempt >= SYNC_ATTEMPTS)
        throw new ToolselError(
          'LIBRARY_BUSY',
          `Library "${name}" changed on disk ${SYNC_ATTEMPTS} times while it was loaded from ${dir}; the next change loads it again.`,
          { details: { library: name } },
        )
    } catch (error) {
      if (attempt >= SYNC_ATTEMPTS) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt))
  }
}

/**
 * The manifest of the index saved at `dir`, undefined when there is none; one that can't be read
 * fails (INDEX_CORRUPT): what is served stays as it is rather than being dropped.
 */
async function committedManifest(dir: string): Promise<IndexManifest | undefined> {
  return (await isIndexDir(dir)) ? readManifest(dir) : undefined
}

/**
 * Whether two manifests describe one save: all they record the same, but what only the saved
 * copy holds (the tools file's hash and index; a published library's manifest is the built one).
 */
function sameSave(one: IndexManifest, other: IndexManifest): boolean {
  const recorded = (manifest: IndexManifest): unknown => {
    const { toolsFileHash: _hash, toolsIndexFile: _index, files: _files, ...rest } = manifest
    return JSON.parse(JSON.stringify(rest))
  }
  return isDeepStrictEqual(recorded(one), recorded(other))
}

/**
 * Resolves a library reference: an index name under `indexDir`, an index directory, a tool file
 * or directory of tool files, or `demo`.
 */
export async function loadLibraryReference(
  reference: string,
  config: Config,
  logger: Logger,
  options: { unshowableIds?: UnshowableIdsLevel; asSavedDemo?: boolean; cacheDemo?: boolean } = {},
): Promise<IndexedLibrary> {
  const { asSavedDemo, cacheDemo, ...loadOptions } = options
  const found = await resolveLibraryReference(reference, config.library.indexDir)
  if (found.index !== undefined && found.demo)
    return loadSavedDemo(found.index, config, logger, { ...loadOptions, asSaved: asSavedDemo })
  if (found.index !== undefined)
    return loadIndexedLibrary(found.index, config, { logger, ...loadOptions })
  if (found.demo && cacheDemo) return loadCachedDemo(config, logger, loadOptions)
  if (found.demo) return importAndLog(DEMO_LIBRARY_DIR, DEMO_LIBRARY_NAME, config, logger)
  const name = libraryNameFromPath(found.path)
  return importAndLog(found.path, name, config, logger, join(config.library.indexDir, name))
}

/**
 * The tools of a library reference, resolved as `loadLibraryReference` resolves it (so `select`,
 * `serve`, `train` and `train-data` read the same library for the same `--library`), not indexed:
 * a saved index's checked tools file, else the imported tool file or directory. The saved demo
 * whose files changed since it was built is read as a start would serve it once rebuilt: the
 * tools of its files (nothing written; should they not import, its saved tools, as a start
 * serves then).
 */
export async function readLibraryReferenceTools(
  reference: string,
  indexDir: string,
  options: { maxFileBytes?: number; maxTools?: number } = {},
): Promise<Tool[]> {
  const found = await resolveLibraryReference(reference, indexDir)
  const { maxFileBytes, maxTools } = options
  if (found.index !== undefined && found.demo) {
    const check = await savedDemoCheck(found.index, maxFileBytes)
    if (check !== undefined && !check.current) {
      const imported = await importToolsFromPath(DEMO_LIBRARY_DIR, {
        maxFileBytes,
        maxTools,
        regularOnly: true,
      })
        .then((result) => result.tools)
        .catch(() => undefined)
      if (imported !== undefined) return imported
    }
  }
  if (found.index !== undefined) return [...(await readIndexTools(found.index)).tools]
  return (await importToolsFromPath(found.path, { maxFileBytes, maxTools })).tools
}

/**
 * Where a library reference points, in this order: an index name under `indexDir`, an index
 * directory, `demo`, a tool file or directory of tool files. UNKNOWN_LIBRARY when none.
 */
async function resolveLibraryReference(
  reference: string,
  indexDir: string,
): Promise<
  | { index: string; path?: undefined; demo: boolean }
  | { index?: undefined; path: string; demo: boolean }
> {
  const named = join(indexDir, reference)
  if (!reference.includes('/') && (await isIndexDir(named)))
    return { index: named, demo: reference === DEMO_LIBRARY_NAME }
  if (await isIndexDir(reference)) return { index: reference, demo: false }
  if (reference === DEMO_LIBRARY_NAME) return { path: DEMO_LIBRARY_DIR, demo: true }
  if (await pathExists(reference)) return { path: reference, demo: false }
  // A path (a slash, or a file name's extension) is not a library name to build: say what is
  // missing rather than suggest `--name tools/x.json`.
  const path = reference.includes('/') || extname(reference) !== ''
  // A relative index directory is the current directory's: an MCP client starts the server in a
  // directory of its own (Claude Desktop: /), where "indexes/" is not the checkout's.
  const where = isAbsolute(indexDir)
    ? `${indexDir}/`
    : `${indexDir}/ (${resolve(indexDir)}, from the current directory)`
  throw new ToolselError(
    'UNKNOWN_LIBRARY',
    path
      ? `Library "${reference}" not found: no such tool file or directory, and no index directory there. Check the path, or name a saved library (the names in ${where}: toolsel libraries list).`
      : `Library "${reference}" not found: it is not an index in ${where}, an index directory, or a tool file. Build it with: toolsel index <file> --name ${reference}.`,
    { details: { library: reference } },
  )
}

/**
 * Whether `path` (a manifest's `source.path`) is the shipped demo's directory: this checkout's,
 * under `src/` or `dist/` (bin/toolsel.mjs runs either, and `toolsel index
 * src/library/demo/servers` builds from the sources), or another checkout's or image's (an index
 * directory shared or copied between them, a checkout moved or renamed): `demo` is always the
 * demo of the toolsel that serves it.
 */
function isDemoSource(path: string | undefined): boolean {
  if (path === undefined) return false
  return /[\\/](src|dist)[\\/]library[\\/]demo[\\/]servers[\\/]?$/.test(resolve(path))
}

/** Tries of `loadSavedDemo` when another process saves the demo while it rebuilds it. */
const DEMO_REBUILD_ATTEMPTS = 3

/**
 * The demo once saved as an index (`indexes/demo`: an example write or `toolsel index
 * src/library/demo/servers --name demo`). Loaded as saved while the fingerprint of the demo's files
 * and of the code and packages that index them (demo-fingerprint.ts) is the one its manifest
 * records, without importing them, or while it holds tools of its own (a PUT, or an index of
 * another source). Otherwise the files
 * are imported and their tools compared: when they changed since (a `git pull`), it is rebuilt from
 * them with the parts it was built with (their saved vectors reused for unchanged tools) and its
 * usage examples, minus those of tools the files no longer have, and saved atomically in its place,
 * so the next start loads it as it is; when they are the same (an index saved before round 44,
 * without a fingerprint, or by other toolsel code or packages), it is saved again with the
 * fingerprint, once (when this config builds its parts as they were built; else it is compared
 * each start). A save by another process in between
 * (an example write) is not overwritten: the demo is read again. A rebuild that fails (the index
 * dir read-only, a part's model missing, the files broken) is a warning and the saved index loads
 * as it is: until round 43 (hard38) it failed the start. `asSaved` (the workers of `serve --workers
 * N` after the first one checked it) loads it as saved.
 */
async function loadSavedDemo(
  dir: string,
  config: Config,
  logger: Logger,
  options: { unshowableIds?: UnshowableIdsLevel; asSaved?: boolean },
  attempt = 1,
): Promise<IndexedLibrary> {
  const { asSaved, ...loadOptions } = options
  const check = asSaved ? undefined : await savedDemoCheck(dir, config.library.maxFileBytes)
  if (check === undefined || check.current)
    return loadIndexedLibrary(dir, config, { logger, ...loadOptions })
  // A rebuild reads the saved demo too (its usage examples, the vectors it reuses): refused as its
  // load is (loadIndexedLibrary checks it there) when any user can write it (`assertTrustedPath`).
  assertTrustedPath(dir, 'Index directory', 'INDEX_CORRUPT', { recursive: true })
  const started = performance.now()
  const progress: { sameTools?: boolean } = {}
  let rebuilt: IndexedLibrary | 'as saved' | 'superseded'
  try {
    rebuilt = await rebuildSavedDemo(dir, check, config, logger, started, progress)
  } catch (error) {
    const why = errorMessage(error)
    // The saved index still loads as it did before round 43 rebuilt it: a start no longer fails
    // for a rebuild it did not need (an index dir it may read, not write; a part whose model is
    // missing here; demo files broken by the pull).
    if (progress.sameTools)
      logger.info(
        `Library "${DEMO_LIBRARY_NAME}": its tools are those of ${DEMO_LIBRARY_DIR}; the fingerprint of those could not be recorded in ${dir} (${why}): the next start imports them again to compare`,
        { library: DEMO_LIBRARY_NAME },
      )
    else
      logger.warn(
        `Library "${DEMO_LIBRARY_NAME}": its tools in ${DEMO_LIBRARY_DIR} could not be rebuilt into ${dir} (${why}); loaded as saved`,
        { library: DEMO_LIBRARY_NAME },
      )
    return loadIndexedLibrary(dir, config, { logger, ...loadOptions })
  }
  if (rebuilt === 'as saved' || (rebuilt === 'superseded' && attempt >= DEMO_REBUILD_ATTEMPTS))
    return loadIndexedLibrary(dir, config, { logger, ...loadOptions })
  if (rebuilt === 'superseded') return loadSavedDemo(dir, config, logger, options, attempt + 1)
  return rebuilt
}

/**
 * Where `toolsel select` keeps the demo it indexed (`cacheDemo`), when the index directory holds
 * no saved demo, each build config's in a subdirectory (`demoCacheKey`):
 * `$XDG_CACHE_HOME/toolsel/indexes` (an absolute XDG_CACHE_HOME only, as the XDG spec says), else
 * `~/.cache/toolsel/indexes`.
 */
export function demoCacheIndexDir(): string {
  const xdg = process.env.XDG_CACHE_HOME
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache')
  return join(base, 'toolsel', 'indexes')
}

/**
 * The demo for a command that runs once (`toolsel select`; round 48): until then each run imported
 * and indexed its 23 files (0.4-0.6 s of CPU of about 2). Loaded from `demoCacheIndexDir()` while
 * the index there records the demo's fingerprint as it is now (`savedDemoCheck`, the check a saved
 * demo gets) and this config builds the parts it holds as they were built (`buildsSameParts`);
 * otherwise imported and indexed as before, and saved there (`saveIndexedLibrary`: written
 * whole in a work directory, renamed into place under the library's lock, so two runs at once
 * never leave half an index; the last one's stays). Only a cache: an index there that cannot be
 * read (removed or replaced meanwhile, another user's) is built again, and one that cannot be
 * written is a debug line.
 */
async function loadCachedDemo(
  config: Config,
  logger: Logger,
  loadOptions: { unshowableIds?: UnshowableIdsLevel },
): Promise<IndexedLibrary> {
  const cacheDir = demoCacheIndexDir()
  const key = demoCacheKey(config)
  const indexDir = join(cacheDir, key)
  const dir = join(indexDir, DEMO_LIBRARY_NAME)
  const started = performance.now()
  const cached = await loadCurrentCachedDemo(dir, config, logger, loadOptions).catch(
    (error: unknown) => {
      logger.debug(`Library "${DEMO_LIBRARY_NAME}": its index cached in ${dir} was not loaded`, {
        error: errorMessage(error),
      })
      return undefined
    },
  )
  if (cached !== undefined) {
    // Used now: the last configs used keep theirs when a build prunes the cache.
    const now = new Date()
    await utimes(indexDir, now, now).catch(() => undefined)
    logger.info(`Loaded library "${DEMO_LIBRARY_NAME}" from its index cached in ${dir}`, {
      tools: cached.library.size,
      ms: Math.round(performance.now() - started),
    })
    return cached
  }
  const indexed = await importAndLog(DEMO_LIBRARY_DIR, DEMO_LIBRARY_NAME, config, logger)
  // Without a fingerprint (a module of the code unreadable) it could never be found current.
  if (indexed.manifest.source.fingerprint === undefined) return indexed
  try {
    await mkdir(indexDir, { recursive: true, mode: 0o700 })
    await recoverIndexDir(indexDir)
    await saveIndexedLibrary(indexDir, indexed)
  } catch (error) {
    logger.debug(`Library "${DEMO_LIBRARY_NAME}": its index could not be cached in ${dir}`, {
      error: errorMessage(error),
    })
    return indexed
  }
  try {
    const removed = await pruneDemoCache(cacheDir, key)
    if (removed.length > 0)
      logger.debug(`Demo cache ${cacheDir}: removed the indexes of configs not used lately`, {
        removed: removed.join(', '),
      })
  } catch (error) {
    logger.debug(`Demo cache ${cacheDir} could not be pruned`, {
      error: errorMessage(error),
    })
  }
  return indexed
}

/**
 * The demo cache's subdirectory for the parts this config builds and their build settings
 * (what `buildsSameParts` compares): each such config keeps its own cached demo. One directory
 * for all made runs that alternate two configs (`TOOLSEL_BUILD_RETRIEVER=bm25,regex` and the
 * default) index the demo again at every run, each replacing the other's (round 50).
 */
function demoCacheKey(config: Config): string {
  const wanted = splitPartList(config.retrieve.build)
  const parts = withRequirements(wanted, config)
  const built = [
    wanted[0] ?? 'bm25',
    parts.map((part) => part.name),
    buildSettingsOf(parts, config),
  ]
  return createHash('sha256').update(JSON.stringify(built)).digest('hex').slice(0, 16)
}

/** The demo cached in `dir` when it is current for this code and config, else undefined. */
async function loadCurrentCachedDemo(
  dir: string,
  config: Config,
  logger: Logger,
  loadOptions: { unshowableIds?: UnshowableIdsLevel },
): Promise<IndexedLibrary | undefined> {
  if (!(await isIndexDir(dir))) return undefined
  const check = await savedDemoCheck(dir, config.library.maxFileBytes)
  if (check === undefined || !check.current) return undefined
  const { manifest } = check
  // The import refuses more tools than library.maxTools: so does the cache.
  if (manifest.toolCount > config.library.maxTools) return undefined
  if (!buildsSameParts(manifest, undefined, config) || refusedByThisCode(manifest)) return undefined
  const loaded = await loadIndexedLibrary(dir, config, { logger, ...loadOptions })
  // Replaced meanwhile (a run of another config or code saved its own): its files may be the
  // other's, read after the check above. The manifest records its save's time: never the same.
  if ((await readManifestText(dir).catch(() => undefined)) === check.manifestText) return loaded
  loaded.library.release(0)
  return undefined
}

/** What `savedDemoCheck` found of a saved demo built from the demo's files. */
interface SavedDemoCheck {
  manifest: IndexManifest
  /** The manifest file's text, to tell whether another process saved the demo meanwhile. */
  manifestText: string
  /** Whether it records the demo's fingerprint (files, build code, packages) as it is now. */
  current: boolean
}

/**
 * The saved demo at `dir` when it was built from the demo's files, with whether it records their
 * fingerprint as it is now (nothing imported: a few hashes); undefined when it holds tools of its
 * own (a PUT, another file) or has no manifest to read (its load says why).
 */
async function savedDemoCheck(
  dir: string,
  maxFileBytes: number | undefined,
): Promise<SavedDemoCheck | undefined> {
  const manifestText = await readManifestText(dir).catch(() => undefined)
  const manifest = await readManifest(dir).catch(() => undefined)
  if (manifestText === undefined || manifest === undefined) return undefined
  if (!isDemoSource(manifest.source.path)) return undefined
  const recorded = manifest.source.fingerprint
  const current =
    recorded !== undefined &&
    recorded ===
      (await demoFingerprint(DEMO_LIBRARY_DIR, maxFileBytes, demoFingerprintCache()).catch(
        () => undefined,
      ))
  return { manifest, manifestText, current }
}

/**
 * Whether this toolsel refuses to load the index `saved` describes whatever its config: another
 * index format, or BM25 postings of another tokenizer (code changed since it was built).
 */
function refusedByThisCode(saved: IndexManifest): boolean {
  return saved.formatVersion !== INDEX_FORMAT_VERSION || builtWithOtherTokenizer(saved)
}

/**
 * Whether `toolsel serve --workers N` should let one worker load the demo before it starts the
 * others: the default library is the saved demo, built from the demo's files, and they changed
 * since (or it records no fingerprint of them), so the first load rebuilds or records it.
 */
export async function savedDemoNeedsCheck(config: Config): Promise<boolean> {
  if (config.library.default !== DEMO_LIBRARY_NAME) return false
  const check = await savedDemoCheck(
    join(config.library.indexDir, DEMO_LIBRARY_NAME),
    config.library.maxFileBytes,
  )
  return check !== undefined && !check.current
}

/**
 * The rebuild of `loadSavedDemo`, saved in `dir`: the demo library rebuilt (its tools changed,
 * or they are the same and its fingerprint is recorded), `as saved` when it records the
 * fingerprint taken now already, `superseded` when another process saved the demo meanwhile.
 * Throws when the files cannot be imported, the library built, or the index saved; `progress`
 * says by then whether the files hold the saved tools.
 */
async function rebuildSavedDemo(
  dir: string,
  { manifest: saved, manifestText }: SavedDemoCheck,
  config: Config,
  logger: Logger,
  started: number,
  progress: { sameTools?: boolean },
): Promise<IndexedLibrary | 'as saved' | 'superseded'> {
  // The fingerprint (in `source`) is taken before the files are read.
  const { library, imported, source } = await importAsLibrary(
    {
      path: DEMO_LIBRARY_DIR,
      maxFileBytes: config.library.maxFileBytes,
      maxTools: config.library.maxTools,
    },
    DEMO_LIBRARY_NAME,
  )
  const sameTools = saved.toolCount === library.size && saved.contentHash === library.contentHash
  progress.sameTools = sameTools
  logger.debug(
    `Library "${DEMO_LIBRARY_NAME}": imported ${DEMO_LIBRARY_DIR} to compare with ${dir}, which records ${saved.source.fingerprint === undefined ? 'no fingerprint of them' : 'another fingerprint of them'}`,
    { sameTools, ms: Math.round(performance.now() - started) },
  )
  if (sameTools && saved.source.fingerprint === source?.fingerprint) return 'as saved'
  // No fingerprint to record (a module of the code unreadable, say): saving it again would
  // change nothing but its time, at every start. Each start imports the files to compare.
  if (sameTools && source?.fingerprint === undefined && !refusedByThisCode(saved)) return 'as saved'
  const retriever = [saved.defaultRetriever, ...Object.keys(saved.retrievers)]
    .filter((part, at, parts) => parts.indexOf(part) === at)
    .join(',')
  // Saved again for its fingerprint only when that builds what is saved: not with other settings
  // of its parts (BM25's, another embedder) than it was built with; compared at each start then.
  // Unless this toolsel cannot load what is saved at all (another index format, another
  // tokenizer: the pull changed the code, not the config): rebuilt then. Until round 45 (qa16)
  // it was loaded as saved, refused, and the start failed.
  if (sameTools && !buildsSameParts(saved, retriever, config) && !refusedByThisCode(saved))
    return 'as saved'
  for (const warning of groupWarnings(imported.warnings).warnings) {
    logger.warn(warning, { library: DEMO_LIBRARY_NAME })
  }
  const indexDir = resolve(dir, '..')
  // A rebuild killed before its commit left its temporary directory: removed before this one
  // writes another (a server's start does so too, `toolsel select` did not).
  await recoverIndexDir(indexDir)
  const stored = await readStoredExamples(dir)
  const pruned = stored?.prune((id) => library.has(id))
  const indexed = await buildIndexedLibrary(library, config, {
    source,
    retriever,
    previousIndexDir: dir,
    examples: pruned?.set.withCap(config.library.maxExamples),
    logger,
  })
  const superseded = new Error('the saved demo changed meanwhile')
  try {
    await saveIndexedLibrary(indexDir, indexed, {
      beforeCommit: () => {
        // Under the library's lock: the save this rebuild started from is still the one saved.
        if (readManifestTextSync(dir) !== manifestText) throw superseded
      },
    })
  } catch (error) {
    indexed.library.release(0)
    if (error !== superseded) throw error
    return 'superseded'
  }
  const ms = Math.round(performance.now() - started)
  if (sameTools)
    logger.info(
      `Library "${DEMO_LIBRARY_NAME}": ${dir} holds the tools of ${DEMO_LIBRARY_DIR}; saved again with their fingerprint, so that the next start need not import them to compare`,
      { tools: library.size, ms },
    )
  else
    logger.info(
      `Library "${DEMO_LIBRARY_NAME}": rebuilt from ${DEMO_LIBRARY_DIR}, whose tools changed since ${dir} was saved, and saved there`,
      {
        tools: library.size,
        savedTools: saved.toolCount,
        parts: [...indexed.retrievers.keys()].join(','),
        examples: pruned?.set.size ?? 0,
        droppedExamples: pruned?.droppedExamples ?? 0,
        ms,
      },
    )
  return { ...indexed, dir: join(indexDir, DEMO_LIBRARY_NAME) }
}

/**
 * Imports a tool file as library `name`. With `savedDir`: the usage examples that an example
 * write saved there (the library became a saved index under its name) are carried over, minus
 * tool ids the file lacks, so examples survive a restart with the same `--library <file>`.
 */
async function importAndLog(
  path: string,
  name: string,
  config: Config,
  logger: Logger,
  savedDir?: string,
): Promise<IndexedLibrary> {
  const started = performance.now()
  const { indexed, imported } = await importLibrary(
    { path, maxFileBytes: config.library.maxFileBytes, maxTools: config.library.maxTools },
    name,
    config,
    {
      logger,
      prepare: async (library) => {
        const saved = savedDir === undefined ? undefined : await readStoredExamples(savedDir)
        if (saved === undefined) return
        const pruned = saved.prune((id) => library.has(id))
        logger.info(
          `Library "${name}": kept the ${pruned.set.size} usage examples saved in ${savedDir}` +
            (pruned.droppedExamples > 0
              ? ` (${pruned.droppedExamples} dropped: their tools are not in ${path})`
              : ''),
        )
        return { examples: pruned.set.withCap(config.library.maxExamples) }
      },
    },
  )
  for (const warning of groupWarnings(imported.warnings).warnings) {
    logger.warn(warning, { library: name })
  }
  logger.info(`Indexed library "${name}" from ${path}`, {
    tools: indexed.library.size,
    format: imported.format,
    ms: Math.round(performance.now() - started),
  })
  if (savedDir !== undefined) await warnShadowedIndex(savedDir, indexed, path, logger)
  return indexed
}

/**
 * A PUT of the library a tool file serves saves an index under its name; at the next start the
 * file is served again. Says so when the saved index holds other tools, rather than serving the
 * file as if the upload had never happened.
 */
async function warnShadowedIndex(
  savedDir: string,
  indexed: IndexedLibrary,
  path: string,
  logger: Logger,
): Promise<void> {
  if (!(await isIndexDir(savedDir))) return
  const saved = await readManifest(savedDir).catch(() => undefined)
  if (saved === undefined || saved.contentHash === indexed.library.contentHash) return
  const name = indexed.library.name
  logger.warn(
    `Library "${name}": serving the ${indexed.library.size} tools of ${path}; the index saved in ${savedDir} (${saved.toolCount} tools, ${saved.createdAt}, e.g. by a PUT) holds other tools and is read only for its usage examples. To serve it instead: --library ${name}.`,
  )
}
