/**
 * A vector index plus the tool id at each position: what `buildDenseIndex` produces, what
 * `DenseRetriever` searches, and what is saved in a library's index directory.
 * @module
 */
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { MAX_TOOL_ID_CHARS } from '../../library/tool-id-limit.ts'
import { readFileUpTo } from '../../read-text-file.ts'
import { FlatIndex } from './flat-index.ts'
import { HnswIndex } from './hnsw-index.ts'
import {
  denseFileProblem,
  readVectorIndexHeader,
  type DenseFileLimit,
  type VectorIndex,
  type VectorIndexExpectation,
} from './vector-index.ts'

export interface DenseIndex {
  index: VectorIndex
  /** `ids[position]` is the tool whose vector was added at `position`. */
  ids: readonly string[]
}

/** Tool ids by position, as a JSON array. */
export const DENSE_IDS_FILE = 'dense-ids.json'

/**
 * Writes `dense.json` (header), `dense.f32` or `dense.hnsw` (vectors) and `dense-ids.json`
 * into `directory`, creating it if needed.
 */
export async function saveDenseIndex(directory: string, dense: DenseIndex): Promise<void> {
  if (dense.ids.length !== dense.index.size) {
    throw new ToolselError(
      'INTERNAL',
      `Dense index has ${dense.index.size} vectors but ${dense.ids.length} ids.`,
    )
  }
  await mkdir(directory, { recursive: true })
  await writeFile(join(directory, DENSE_IDS_FILE), `${JSON.stringify(dense.ids)}\n`)
  // The header goes last: a directory whose save was interrupted has no (new) header to trust.
  await dense.index.save(directory)
}

export interface LoadDenseIndexOptions {
  /** Overrides the saved HNSW `efSearch` (it only affects search). */
  efSearch?: number
  /** The most bytes read of each file (`DenseFileLimit`): a saved index's bound. */
  maxFileBytes?: DenseFileLimit
}

/**
 * Most bytes of the ids of `count` tools: each id at most MAX_TOOL_ID_CHARS characters, each
 * escaped in at most 6 bytes (`\uXXXX`), quoted and comma-separated, in brackets and a newline.
 */
function idsMaxBytes(count: number): number {
  return count * (MAX_TOOL_ID_CHARS * 6 + 3) + 3
}

/**
 * Loads what `saveDenseIndex` wrote, whichever index kind it is. INDEX_MISMATCH when the index
 * was built with another embedder or dimensions than `expected`; INDEX_CORRUPT when files are
 * missing or disagree.
 */
export async function loadDenseIndex(
  directory: string,
  expected: VectorIndexExpectation,
  options: LoadDenseIndexOptions = {},
): Promise<DenseIndex> {
  const header = await readVectorIndexHeader(directory)
  const index =
    header.kind === 'hnsw'
      ? await HnswIndex.load(directory, expected, options)
      : await FlatIndex.load(directory, expected, options.maxFileBytes)
  const path = join(directory, DENSE_IDS_FILE)
  const limit = Math.min(
    idsMaxBytes(index.size),
    options.maxFileBytes?.(DENSE_IDS_FILE) ?? Number.MAX_SAFE_INTEGER,
  )
  let ids: unknown
  try {
    ids = existsSync(path)
      ? JSON.parse(await readFileUpTo(path, limit, { regularOnly: true }))
      : undefined
  } catch (error) {
    const problem = denseFileProblem(error)
    throw new ToolselError(
      'INDEX_CORRUPT',
      problem === undefined
        ? `Dense index ids "${path}" are not valid JSON.`
        : `Dense index ids "${path}" are not read: ${problem}. Rebuild the index.`,
      { cause: error, details: { file: path } },
    )
  }
  if (
    !Array.isArray(ids) ||
    ids.length !== index.size ||
    !ids.every((id) => typeof id === 'string')
  ) {
    throw new ToolselError(
      'INDEX_CORRUPT',
      `Dense index ids "${path}" are missing or do not match its ${index.size} vectors. Rebuild the index.`,
      { details: { file: path } },
    )
  }
  return { index, ids }
}
