/**
 * Approximate cosine search with hnswlib (Malkov & Yashunin 2018, https://arxiv.org/abs/1603.09320)
 * through hnswlib-node. This is the only module that imports hnswlib-node; it is loaded on first
 * use so that processes without dense retrieval never load the native addon.
 * @module
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { FileTooLargeError, NotRegularFileError, openForReading } from '../../read-text-file.ts'
import { assertDimensions } from './flat-index.ts'
import {
  VECTOR_INDEX_FORMAT,
  assertVectorIndexMatches,
  readVectorIndexHeader,
  writeVectorIndexHeader,
  type DenseFileLimit,
  type SearchHit,
  type VectorIndex,
  type VectorIndexExpectation,
} from './vector-index.ts'

type HnswLib = typeof import('hnswlib-node')
type HierarchicalNSW = InstanceType<HnswLib['HierarchicalNSW']>

let hnswlib: HnswLib | undefined
function loadHnswlib(): HnswLib {
  hnswlib ??= createRequire(import.meta.url)('hnswlib-node') as HnswLib
  return hnswlib
}

/**
 * Test hook: `beforeRead` runs in each load after the graph file was opened and checked, just
 * before hnswlib reads it (a test puts another file at its name there). Unset outside tests.
 */
export const hnswLoadHooks: { beforeRead?: (path: string) => Promise<void> | void } = {}

/** hnswlib's own graph file. */
export const HNSW_DATA_FILE = 'dense.hnsw'

export interface HnswParams {
  /**
   * Links per node (2m on the bottom layer). Higher gives better recall and more memory (about
   * 2m × 4 bytes per vector on top of the vector itself). Recommended 12-48. Default 32.
   */
  m: number
  /** Candidate list size while building; higher builds slower and better. Recommended 100-400. Default 200. */
  efConstruction: number
  /**
   * Candidate list size while searching (raised to k when smaller). Higher is slower and more
   * exact. Recommended 50-500. Default 256. With m 32 it gives recall@15 of 0.997-0.999 against
   * exact search on 10k random 64-128-d unit vectors (about 0.3 ms a query), a harder set than
   * tool embeddings, which cluster; m 16 / ef 128 gave 0.80-0.94 there.
   */
  efSearch: number
  /** Seed of the level generator, for reproducible graphs. Default 100 (hnswlib's). */
  randomSeed: number
}

export const DEFAULT_HNSW_PARAMS: Readonly<HnswParams> = Object.freeze({
  m: 32,
  efConstruction: 200,
  efSearch: 256,
  randomSeed: 100,
})

export class HnswIndex implements VectorIndex {
  readonly kind = 'hnsw'
  readonly dimensions: number
  readonly embedderId: string
  readonly params: Readonly<HnswParams>
  readonly #graph: HierarchicalNSW

  /** @param capacity Vectors to reserve room for; the graph grows by doubling. Default 1,024. */
  constructor(
    dimensions: number,
    embedderId: string,
    params: Partial<HnswParams> = {},
    capacity = 1024,
  ) {
    this.dimensions = dimensions
    this.embedderId = embedderId
    this.params = { ...DEFAULT_HNSW_PARAMS, ...params }
    // 'cosine' normalises inside hnswlib and returns 1 - cos as the distance.
    this.#graph = new (loadHnswlib().HierarchicalNSW)('cosine', dimensions)
    this.#graph.initIndex({
      maxElements: Math.max(1, capacity),
      m: this.params.m,
      efConstruction: this.params.efConstruction,
      randomSeed: this.params.randomSeed,
    })
    this.#graph.setEf(this.params.efSearch)
  }

  get size(): number {
    return this.#graph.getCurrentCount()
  }

  add(vectors: readonly Float32Array[]): void {
    const needed = this.size + vectors.length
    if (needed > this.#graph.getMaxElements()) {
      this.#graph.resizeIndex(Math.max(needed, this.#graph.getMaxElements() * 2))
    }
    for (const vector of vectors) {
      assertDimensions(vector, this.dimensions)
      // hnswlib-node takes plain arrays only (it checks IsArray, not typed arrays).
      this.#graph.addPoint(Array.from(vector), this.size)
    }
  }

  search(vector: Float32Array, k: number): SearchHit[] {
    assertDimensions(vector, this.dimensions)
    const count = Math.min(Math.floor(k), this.size)
    if (count <= 0) return []
    // ef below k would make hnswlib return fewer than k results.
    if (this.#graph.getEf() < count) this.#graph.setEf(count)
    const { neighbors, distances } = this.#graph.searchKnn(Array.from(vector), count)
    if (this.#graph.getEf() !== this.params.efSearch) this.#graph.setEf(this.params.efSearch)
    return neighbors
      .map((position, rank) => ({ position, score: 1 - distances[rank] }))
      .sort((a, b) => b.score - a.score || a.position - b.position)
  }

  async save(directory: string): Promise<void> {
    await this.#graph.writeIndex(join(directory, HNSW_DATA_FILE))
    await writeVectorIndexHeader(directory, {
      format: VECTOR_INDEX_FORMAT,
      kind: 'hnsw',
      dimensions: this.dimensions,
      count: this.size,
      embedderId: this.embedderId,
      params: { ...this.params },
    })
  }

  /**
   * Loads an index saved by `save`; INDEX_MISMATCH when it doesn't fit `expected`. `efSearch`
   * may be changed at load time (it only affects search); the build parameters come from the file.
   */
  static async load(
    directory: string,
    expected: VectorIndexExpectation,
    options: { efSearch?: number; maxFileBytes?: DenseFileLimit } = {},
  ): Promise<HnswIndex> {
    const header = await readVectorIndexHeader(directory)
    assertVectorIndexMatches(header, expected)
    if (header.kind !== 'hnsw') {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Dense index in "${directory}" is ${header.kind}, not hnsw.`,
      )
    }
    const params = {
      ...(header.params as Partial<HnswParams>),
      ...definedEfSearch(options.efSearch),
    }
    // A one-slot graph that readIndex replaces (hnswlib-node frees the old one).
    const index = new HnswIndex(header.dimensions, header.embedderId, params, 1)
    const path = join(directory, HNSW_DATA_FILE)
    // hnswlib reads the file itself (a stream of C++'s, unbounded): a FIFO at the name would
    // hang its thread, /dev/zero fill memory. So the file is opened first (links followed, as
    // hnswlib opens it; non-blocking: a FIFO is not waited on) and the fstat of that one handle
    // checked: a regular file within the saved index's bound. hnswlib then reads that same file
    // through the handle's /proc/self/fd (/dev/fd) name: a file put at the name since is not the
    // one read (until round 47 the name was stat-ed, then opened again by hnswlib).
    let opened: Awaited<ReturnType<typeof openForReading>>
    try {
      opened = await openForReading(path, { regularOnly: true })
    } catch (error) {
      if (!(error instanceof NotRegularFileError)) throw unreadable(path, error)
      throw notRead(path, error)
    }
    try {
      const limit = options.maxFileBytes?.(HNSW_DATA_FILE) ?? Infinity
      if (opened.stats.size > limit) throw notRead(path, new FileTooLargeError(limit))
      await hnswLoadHooks.beforeRead?.(path)
      try {
        await index.#graph.readIndex(handlePath(opened.handle.fd) ?? path)
      } catch (error) {
        throw unreadable(path, error)
      }
    } finally {
      await opened.handle.close()
    }
    index.#graph.setEf(index.params.efSearch)
    if (index.size !== header.count) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `HNSW graph "${path}" holds ${index.size} vectors; its header promises ${header.count}. Rebuild the index.`,
        { details: { file: path } },
      )
    }
    return index
  }
}

/** The name that opens the file `fd` is open on (Linux, macOS); undefined elsewhere. */
function handlePath(fd: number): string | undefined {
  for (const path of [`/proc/self/fd/${fd}`, `/dev/fd/${fd}`]) if (existsSync(path)) return path
  return undefined
}

function notRead(path: string, error: FileTooLargeError | NotRegularFileError): ToolselError {
  return new ToolselError(
    'INDEX_CORRUPT',
    `HNSW graph "${path}" is not read: ${error.message}. Rebuild the index.`,
    { details: { file: path } },
  )
}

function unreadable(path: string, error: unknown): ToolselError {
  return new ToolselError(
    'INDEX_CORRUPT',
    `HNSW graph "${path}" could not be read. Rebuild the index.`,
    {
      cause: error,
      details: { file: path },
    },
  )
}

function definedEfSearch(efSearch: number | undefined): Partial<HnswParams> {
  return efSearch === undefined ? {} : { efSearch }
}
