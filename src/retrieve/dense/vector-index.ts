/**
 * The vector-index contract shared by the exact `FlatIndex` and the approximate `HnswIndex`, and
 * the JSON header both write next to their data so that a load can refuse a mismatched index.
 * @module
 */
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { errorMessage, ToolselError } from '../../errors.ts'
import { FileTooLargeError, NotRegularFileError, readFileUpTo } from '../../read-text-file.ts'

export type VectorIndexKind = 'flat' | 'hnsw'

/** One search result: the vector's insertion position and its cosine similarity to the query. */
export interface SearchHit {
  /** 0-based order in which the vector was added. */
  position: number
  /** Cosine similarity in [-1, 1]; higher is closer. */
  score: number
}

export interface VectorIndex {
  readonly kind: VectorIndexKind
  /** Length of every vector. */
  readonly dimensions: number
  /** The `EmbeddingModel.modelId` that produced the vectors. */
  readonly embedderId: string
  /** Number of vectors added. */
  readonly size: number
  /** Appends vectors; the first gets position `size`. Vectors need not be normalised. */
  add(vectors: readonly Float32Array[]): void
  /** The `k` nearest vectors by cosine, best first (ties by position). Fewer when the index is smaller. */
  search(vector: Float32Array, k: number): SearchHit[]
  /** Writes the header and the data into `directory` (created by the caller). */
  save(directory: string): Promise<void>
}

/** Bump when the saved layout changes; older files are then refused with a rebuild hint. */
export const VECTOR_INDEX_FORMAT = 1

/** Name of the header file inside the index directory. */
export const VECTOR_INDEX_HEADER_FILE = 'dense.json'

/** Largest dense index header read (one is a few hundred bytes). */
const VECTOR_INDEX_HEADER_MAX_BYTES = 64 * 1024

export interface VectorIndexHeader {
  format: number
  kind: VectorIndexKind
  dimensions: number
  count: number
  embedderId: string
  /** Kind-specific build and search parameters (HNSW's m, efConstruction, efSearch). */
  params: Record<string, unknown>
}

/**
 * The most bytes a load reads of `file` (a name in the dense directory: `dense.f32`,
 * `dense.hnsw`, `dense-ids.json`): a saved index's bound (store/index-file-read.ts, the size its
 * manifest records and some slack). Without it a load reads what the header allows (the flat
 * vectors' exact size, the ids of `count` tools of the longest id) and checks the HNSW graph is
 * a regular file. Each file is read only as a regular file, never a FIFO or a device.
 */
export type DenseFileLimit = (file: string) => number

/**
 * Why a bounded read of a dense file failed (`readBytesUpTo`'s errors), in words; undefined for
 * another error.
 */
export function denseFileProblem(error: unknown): string | undefined {
  return error instanceof FileTooLargeError || error instanceof NotRegularFileError
    ? error.message
    : undefined
}

/** What the loader expects, from the config: checked against the header before reading any data. */
export interface VectorIndexExpectation {
  /** The index (library) name, for messages. */
  name: string
  embedderId: string
  dimensions: number
}

export async function writeVectorIndexHeader(
  directory: string,
  header: VectorIndexHeader,
): Promise<void> {
  await writeFile(join(directory, VECTOR_INDEX_HEADER_FILE), `${JSON.stringify(header, null, 2)}\n`)
}

/** Reads the header; INDEX_CORRUPT when it is missing or malformed. */
export async function readVectorIndexHeader(directory: string): Promise<VectorIndexHeader> {
  const path = join(directory, VECTOR_INDEX_HEADER_FILE)
  if (!existsSync(path)) {
    throw new ToolselError(
      'INDEX_CORRUPT',
      `No dense index in "${directory}" (${path} is missing).`,
      {
        details: { directory },
      },
    )
  }
  let header: VectorIndexHeader
  try {
    // A few hundred bytes: a larger file (or a FIFO, a device) is no header of ours, unread.
    header = JSON.parse(
      await readFileUpTo(path, VECTOR_INDEX_HEADER_MAX_BYTES, { regularOnly: true }),
    ) as VectorIndexHeader
  } catch (error) {
    throw new ToolselError(
      'INDEX_CORRUPT',
      `Dense index header "${path}" is not valid JSON (${errorMessage(error)}).`,
      {
        cause: error,
        details: { file: path },
      },
    )
  }
  const valid =
    typeof header === 'object' &&
    (header.kind === 'flat' || header.kind === 'hnsw') &&
    Number.isInteger(header.dimensions) &&
    Number.isInteger(header.count) &&
    typeof header.embedderId === 'string'
  if (!valid) {
    throw new ToolselError('INDEX_CORRUPT', `Dense index header "${path}" is incomplete.`, {
      details: { file: path },
    })
  }
  return header
}

/**
 * Refuses an index built by another embedder or with other dimensions: its vectors live in a
 * different space, and searching it with this embedder's queries would return noise silently.
 */
export function assertVectorIndexMatches(
  header: VectorIndexHeader,
  expected: VectorIndexExpectation,
): void {
  const { name, embedderId, dimensions } = expected
  if (header.format !== VECTOR_INDEX_FORMAT) {
    throw new ToolselError(
      'INDEX_MISMATCH',
      `Index "${name}" has dense format ${header.format}; this version reads format ${VECTOR_INDEX_FORMAT}. Rebuild it with: toolsel index <file> --name ${name} --retriever dense --embedder ${embedderId}.`,
      { details: { name, format: header.format, expectedFormat: VECTOR_INDEX_FORMAT } },
    )
  }
  if (header.embedderId !== embedderId || header.dimensions !== dimensions) {
    throw new ToolselError(
      'INDEX_MISMATCH',
      `Index "${name}" was built with ${header.embedderId} (${header.dimensions} dims); config asks for ${embedderId} (${dimensions}). Rebuild it with: toolsel index <file> --name ${name} --retriever dense --embedder ${embedderId}, or change retrieve.dense.embedder.`,
      {
        details: {
          name,
          builtWith: header.embedderId,
          builtDimensions: header.dimensions,
          expected: embedderId,
          expectedDimensions: dimensions,
        },
      },
    )
  }
}
