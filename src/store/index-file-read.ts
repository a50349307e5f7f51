/**
 * How much of a saved index's file a load reads: every file of an index directory (the tools
 * file, its line index, the BM25 files, the usage examples, a dense part's ids, vectors and
 * graph) is read with a bound, and only from a regular file (a FIFO at the name would hang the
 * load, a device such as /dev/zero, or a file far larger than the save wrote, would fill memory).
 * The bound is the size the manifest's `files` record gives the file (index-files-record.ts) plus
 * INDEX_FILE_SLACK_BYTES, or, for an index saved before that record (round 33) or a file it does
 * not list, UNRECORDED_INDEX_FILE_MAX_BYTES. A file past its bound, or not a regular file, is
 * INDEX_CORRUPT naming it (`indexFileProblem` words why).
 * @module
 */
import { FileTooLargeError, NotRegularFileError, readBytesUpTo } from '../read-text-file.ts'
import { FILES_RECORD_VERSION, FilesRecordSchema, type IndexManifest } from './manifest.ts'

/**
 * Read past a file's recorded size: 64 KiB. A save records each file as written, so a file of
 * another size was changed since; a few bytes more (an edit by hand of a small file) are read and
 * left to the file's own checks (hash, CRC-32, counts), a file far larger is not read at all.
 */
export const INDEX_FILE_SLACK_BYTES = 64 * 1024

/**
 * Largest file read of an index without a record of its files' sizes (saved before round 33):
 * 2 GiB. A library of 100,000 tools saves a tools file of 25 MB, its line index of 10 MB and a
 * BM25 file of 7 MB (bench/perf.ts's, round 46), so the project's million tools fit several times
 * over; it stops a device or a runaway file before it fills memory.
 */
export const UNRECORDED_INDEX_FILE_MAX_BYTES = 2 ** 31

/** The bound of one index file: at most `maxBytes` are read; `recorded`: its size as saved. */
export interface IndexFileBound {
  maxBytes: number
  recorded: number | undefined
}

/**
 * The sizes in `files` by path, once per manifest object (undefined: no record this version
 * reads).
 */
const recordedSizes = new WeakMap<object, Map<string, number> | undefined>()

/**
 * The bound of the file at `path` (relative to the index directory, `/`-separated: a named dense
 * part's files are `dense.<part>/<file>`) of the index `manifest` describes.
 */
export function indexFileBound(
  manifest: Pick<IndexManifest, 'files'>,
  path: string,
): IndexFileBound {
  let sizes = recordedSizes.get(manifest)
  if (!recordedSizes.has(manifest)) {
    const parsed = FilesRecordSchema.safeParse(manifest.files)
    sizes =
      parsed.success && parsed.data.version === FILES_RECORD_VERSION
        ? new Map(Object.entries(parsed.data.entries).map(([name, { size }]) => [name, size]))
        : undefined
    recordedSizes.set(manifest, sizes)
  }
  const recorded = sizes?.get(path)
  return {
    maxBytes:
      recorded === undefined ? UNRECORDED_INDEX_FILE_MAX_BYTES : recorded + INDEX_FILE_SLACK_BYTES,
    recorded,
  }
}

/**
 * Why a bounded read of an index file failed, in words, for the caller's INDEX_CORRUPT message
 * (`is larger than …`, `is not a regular file …`); undefined for another error (Node's:
 * ENOENT…), which the caller words as before.
 */
export function indexFileProblem(error: unknown, bound: IndexFileBound): string | undefined {
  if (error instanceof NotRegularFileError) return error.message
  if (!(error instanceof FileTooLargeError)) return undefined
  return bound.recorded === undefined
    ? `it is larger than ${bound.maxBytes} bytes, the most read of an index file`
    : `it is larger than the ${bound.recorded} bytes the manifest records for it (read up to ${bound.maxBytes})`
}

/**
 * The bytes of index file `file`: a regular file of at most `bound.maxBytes` (`readBytesUpTo`,
 * opened non-blocking and checked on its own fstat); FileTooLargeError, NotRegularFileError
 * (`indexFileProblem`) or Node's error.
 */
export function readIndexFileBytes(file: string, bound: IndexFileBound): Promise<Buffer> {
  return readBytesUpTo(file, bound.maxBytes, { regularOnly: true })
}

/**
 * `readIndexFileBytes`, any failure thrown as `corrupt(why, error)` (the caller's INDEX_CORRUPT
 * naming the file): `is not read: <indexFileProblem>` for a bound's, `can't be read (<Node's
 * message>)` for another.
 */
export async function readIndexFile(
  file: string,
  bound: IndexFileBound,
  corrupt: (why: string, cause: unknown) => Error,
): Promise<Buffer> {
  try {
    return await readIndexFileBytes(file, bound)
  } catch (error) {
    const problem = indexFileProblem(error, bound)
    throw corrupt(
      problem === undefined
        ? `can't be read (${(error as Error).message})`
        : `is not read: ${problem}`,
      error,
    )
  }
}
