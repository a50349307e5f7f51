/**
 * The manifest of a built index: what was built, from what, with which settings. Loading checks
 * it against the running code and configuration and refuses a mismatch with the command that
 * fixes it (MiniSearch's `loadJSON` does the same with its serializationVersion).
 * @module
 */
import { join } from 'node:path'
import { z } from 'zod'
import { ToolselError } from '../errors.ts'
import { readFileUpTo, readFileUpToSync } from '../read-text-file.ts'

/** Bump when the on-disk layout changes; older indexes are refused with a rebuild message. */
export const INDEX_FORMAT_VERSION = 1

/**
 * A file (or part directory) name inside the index directory: letters, digits, `.`, `_`, `-`, not
 * `.` or `..`. A manifest that named `../x` would have its load read, and its save (a snapshot
 * restore) write, outside the index directory.
 */
export const IndexFileNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9._-]+$/, 'a file name inside the index directory')
  .refine((name) => name !== '.' && name !== '..', 'a file name inside the index directory')

export const Bm25ManifestSchema = z.object({
  tokenizerVersion: z.number().int(),
  /**
   * The tokenizer's terms for a fixed text, hashed (kinds/tokenizer-probe.ts): `sha256:<16 hex>`.
   * `tokenizerCoreProbe`: the text but its no-space-script lines (every index since round 35).
   * `segmenterProbe`: those lines, cut by ICU's word breaks; only in an index holding such terms.
   * None before round 35: such an index loads as before.
   */
  tokenizerCoreProbe: z.string().max(100).optional(),
  segmenterProbe: z.string().max(100).optional(),
  k1: z.number(),
  b: z.number(),
  fieldWeights: z.record(z.string(), z.number()),
  /**
   * How `file` is written: `binary` (`bm25.bin`, store/kinds/bm25-file.ts, its own version in
   * the file) or, in indexes saved before it and still read, `wink-json` (wink-bm25-text-search's
   * JSON export, `bm25.json`).
   */
  fileFormat: z.enum(['binary', 'wink-json']).default('wink-json'),
  file: IndexFileNameSchema,
  /** The expansion index from usage examples (`bm25-examples.bin`), when the library has examples. */
  examplesFile: IndexFileNameSchema.optional(),
})

/** The usage examples stored with an index (`examples.jsonl`), when it has any. */
export const ExamplesManifestSchema = z.object({
  file: IndexFileNameSchema,
  /** Examples in the file. */
  count: z.number().int().nonnegative(),
  /** 1 for the first examples, +1 on every change (add, prune after a library swap). */
  version: z.number().int().nonnegative(),
  /** The cap in force when the set was written (`library.maxExamples`). */
  cap: z.number().int().positive(),
  /** sha256 of the file's content, checked on load. */
  contentHash: z.string(),
})

export type ExamplesManifest = z.infer<typeof ExamplesManifestSchema>

/** Bump when what `BuildSettingsSchema` records changes meaning; another version never compares equal. */
export const BUILD_SETTINGS_VERSION = 1

/**
 * The settings each part was built with (`RetrieverKind.buildSettings`: the config values its
 * build reads, besides the tools and usage examples), so that a build with other settings is
 * never taken for the saved one (`buildsSameIndex`). Absent in indexes saved before round 26:
 * those load as before, and their first same-tools build rebuilds once.
 */
export const BuildSettingsSchema = z.object({
  version: z.number().int(),
  parts: z.record(z.string(), z.record(z.string(), z.unknown())),
})

export type BuildSettings = z.infer<typeof BuildSettingsSchema>

/** Bump when what `files` records changes meaning; a record of another version is not used. */
export const FILES_RECORD_VERSION = 1

/** A path inside the index directory: segments of file-name characters, at most 3 deep. */
const RecordedPathSchema = z
  .string()
  .regex(/^[a-zA-Z0-9._-]+(\/[a-zA-Z0-9._-]+){0,2}$/)
  .refine((path) => path.split('/').every((part) => part !== '.' && part !== '..'))

/** `files` of a manifest (index-files-record.ts): what each file of the index was saved as. */
export const FilesRecordSchema = z.object({
  version: z.number().int(),
  entries: z.record(
    RecordedPathSchema,
    z.object({
      size: z.number().int().nonnegative(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
})

export type FilesRecord = z.infer<typeof FilesRecordSchema>

export const IndexManifestSchema = z
  .object({
    formatVersion: z.number().int(),
    library: z.string(),
    toolCount: z.number().int().nonnegative(),
    /** `ToolLibrary.contentHash` of the indexed tools. */
    contentHash: z.string(),
    createdAt: z.string(),
    /**
     * Where the tools came from, so the rebuild message can name it. `fingerprint`: the demo's
     * only (store/demo-fingerprint.ts, since round 44): its files and the code and packages that
     * index them hashed when it was built, so that a start that finds the same needs no import
     * to compare its tools.
     */
    source: z
      .object({
        path: z.string().optional(),
        format: z.string().optional(),
        fingerprint: z.string().max(100).optional(),
      })
      .default({}),
    toolsFile: IndexFileNameSchema,
    /** sha256 of the tools file's bytes (written on save; absent in older indexes). */
    toolsFileHash: z.string().optional(),
    /**
     * Line offsets, ids and id table of the tools file (`tools.idx`, tools-index-file.ts),
     * written on save; absent in older indexes, whose tools file is scanned at load instead.
     */
    toolsIndexFile: IndexFileNameSchema.optional(),
    /** The retriever used when a request names none. */
    defaultRetriever: z.string(),
    /** The library's usage examples; absent when it has none. */
    examples: ExamplesManifestSchema.optional(),
    /** What each part was built with (see `BuildSettingsSchema`); absent in older indexes. */
    build: BuildSettingsSchema.optional(),
    /**
     * Each file's size and sha256 as saved (index-files-record.ts, the manifest excepted): written
     * on save since round 33; absent in older indexes, which are checked by a load instead.
     * Read only through `FilesRecordSchema` where used: one it can't read never fails a load.
     */
    files: z.unknown().optional(),
    retrievers: z
      .object({
        bm25: Bm25ManifestSchema,
        /** Dense retrieval data, written by the dense index builder (see retrieve/dense). */
        dense: z.record(z.string(), z.unknown()).optional(),
      })
      .catchall(z.unknown()),
  })
  .passthrough()

export type IndexManifest = z.infer<typeof IndexManifestSchema>

export const MANIFEST_FILE = 'manifest.json'

/**
 * Largest manifest read: 1 MiB. One holds a few KB (settings, and one line per index file in
 * `files`) whatever the library's size; a larger one is no manifest of ours and is not read.
 */
export const MAX_MANIFEST_BYTES = 2 ** 20

/**
 * The text of the manifest in index directory `dir`: at most MAX_MANIFEST_BYTES, of a regular
 * file (`readFileUpTo`'s `regularOnly`: a FIFO or device at the name is refused unread). Throws
 * FileTooLargeError, NotRegularFileError or Node's error (ENOENT…).
 */
export function readManifestText(dir: string): Promise<string> {
  return readFileUpTo(join(dir, MANIFEST_FILE), MAX_MANIFEST_BYTES, { regularOnly: true })
}

/**
 * `readManifestText`, synchronously (a check under a lock), undefined where it would throw. Opened
 * non-blocking and checked on its own fstat: a FIFO or device at the name is not read.
 */
export function readManifestTextSync(dir: string): string | undefined {
  try {
    return readFileUpToSync(join(dir, MANIFEST_FILE), MAX_MANIFEST_BYTES)
  } catch {
    return undefined
  }
}
export const TOOLS_FILE = 'tools.jsonl'
export const TOOLS_INDEX_FILE = 'tools.idx'
export const BM25_FILE = 'bm25.bin'
export const EXAMPLES_FILE = 'examples.jsonl'
export const BM25_EXAMPLES_FILE = 'bm25-examples.bin'

/** The command that rebuilds the index, for the messages that refuse it. */
export function rebuildHint(manifest: IndexManifest): string {
  const source = manifest.source.path ?? '<file>'
  return `Rebuild it with: toolsel index ${source} --name ${manifest.library}.`
}

/** INDEX_MISMATCH: `Index "<library>" <message>`. */
export function manifestMismatch(manifest: IndexManifest, message: string): ToolselError {
  return new ToolselError('INDEX_MISMATCH', `Index "${manifest.library}" ${message}`, {
    details: { library: manifest.library },
  })
}
