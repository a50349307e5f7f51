/**
 * Exact cosine search: every vector is normalised once and stored in one contiguous
 * Float32Array, so a query is one pass of dot products and a top-k heap. At 10k × 512 that is a
 * few milliseconds; past ~100k vectors use `HnswIndex`.
 * @module
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { readBytesUpTo } from '../../read-text-file.ts'
import { normalizeL2 } from '../../models/embedding-model.ts'
import { TopK } from '../top-k.ts'
import {
  VECTOR_INDEX_FORMAT,
  assertVectorIndexMatches,
  denseFileProblem,
  readVectorIndexHeader,
  writeVectorIndexHeader,
  type DenseFileLimit,
  type SearchHit,
  type VectorIndex,
  type VectorIndexExpectation,
} from './vector-index.ts'

/** Raw little-endian float32 rows, `count × dimensions`. */
export const FLAT_DATA_FILE = 'dense.f32'

export class FlatIndex implements VectorIndex {
  readonly kind = 'flat'
  readonly dimensions: number
  readonly embedderId: string
  #data: Float32Array
  #size = 0

  /** @param capacity Vectors to reserve room for; the buffer doubles when full. Default 1,024. */
  constructor(dimensions: number, embedderId: string, capacity = 1024) {
    this.dimensions = dimensions
    this.embedderId = embedderId
    this.#data = new Float32Array(Math.max(1, capacity) * dimensions)
  }

  get size(): number {
    return this.#size
  }

  add(vectors: readonly Float32Array[]): void {
    const needed = (this.#size + vectors.length) * this.dimensions
    if (needed > this.#data.length) {
      const grown = new Float32Array(Math.max(needed, this.#data.length * 2))
      grown.set(this.#data.subarray(0, this.#size * this.dimensions))
      this.#data = grown
    }
    for (const vector of vectors) {
      assertDimensions(vector, this.dimensions)
      const row = this.#data.subarray(
        this.#size * this.dimensions,
        (this.#size + 1) * this.dimensions,
      )
      row.set(vector)
      normalizeL2(row)
      this.#size++
    }
  }

  search(vector: Float32Array, k: number): SearchHit[] {
    assertDimensions(vector, this.dimensions)
    const query = normalizeL2(Float32Array.from(vector))
    const top = new TopK(Math.min(k, this.#size))
    const data = this.#data
    for (let position = 0; position < this.#size; position++) {
      const score = dot(data, position * this.dimensions, query)
      if (score >= top.threshold) top.push(position, score)
    }
    return top.sorted()
  }

  async save(directory: string): Promise<void> {
    const rows = this.#data.subarray(0, this.#size * this.dimensions)
    await writeFile(
      join(directory, FLAT_DATA_FILE),
      new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength),
    )
    await writeVectorIndexHeader(directory, {
      format: VECTOR_INDEX_FORMAT,
      kind: 'flat',
      dimensions: this.dimensions,
      count: this.#size,
      embedderId: this.embedderId,
      params: {},
    })
  }

  /** Loads an index saved by `save`; INDEX_MISMATCH when it doesn't fit `expected`. */
  static async load(
    directory: string,
    expected: VectorIndexExpectation,
    maxFileBytes?: DenseFileLimit,
  ): Promise<FlatIndex> {
    const header = await readVectorIndexHeader(directory)
    assertVectorIndexMatches(header, expected)
    if (header.kind !== 'flat') {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Dense index in "${directory}" is ${header.kind}, not flat.`,
      )
    }
    const path = join(directory, FLAT_DATA_FILE)
    const expectedBytes = header.count * header.dimensions * Float32Array.BYTES_PER_ELEMENT
    // No more than the header promises, nor than the saved index's bound: a regular file only.
    const limit = Math.min(expectedBytes, maxFileBytes?.(FLAT_DATA_FILE) ?? expectedBytes)
    const bytes = await readBytesUpTo(path, limit, { regularOnly: true }).catch(
      (error: unknown) => {
        const problem = denseFileProblem(error)
        throw new ToolselError(
          'INDEX_CORRUPT',
          problem === undefined
            ? `Dense index data "${path}" is missing.`
            : `Dense index data "${path}" is not read: ${problem} (its header promises ${expectedBytes}). Rebuild the index.`,
          { cause: error, details: { file: path } },
        )
      },
    )
    if (bytes.byteLength !== expectedBytes) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Dense index data "${path}" has ${bytes.byteLength} bytes; its header promises ${expectedBytes}. Rebuild the index.`,
        { details: { file: path } },
      )
    }
    const index = new FlatIndex(header.dimensions, header.embedderId, header.count)
    // Copy into a fresh, aligned buffer: Buffer views may start at any byte offset.
    index.#data = new Float32Array(new Uint8Array(bytes).buffer)
    index.#size = header.count
    return index
  }
}

/**
 * Dot product of `query` with the row of `data` starting at `offset`. Four accumulators break the
 * dependency chain of one running sum: about 15% faster at 512 dimensions on V8.
 */
function dot(data: Float32Array, offset: number, query: Float32Array): number {
  let a = 0
  let b = 0
  let c = 0
  let d = 0
  let index = 0
  for (; index + 3 < query.length; index += 4) {
    a += data[offset + index] * query[index]
    b += data[offset + index + 1] * query[index + 1]
    c += data[offset + index + 2] * query[index + 2]
    d += data[offset + index + 3] * query[index + 3]
  }
  for (; index < query.length; index++) a += data[offset + index] * query[index]
  return a + b + c + d
}

/** Throws INVALID_INPUT when a vector's length differs from the index's. */
export function assertDimensions(vector: Float32Array, dimensions: number): void {
  if (vector.length !== dimensions) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Vector has ${vector.length} dimensions; the index holds ${dimensions}-dimensional vectors.`,
      { details: { got: vector.length, expected: dimensions } },
    )
  }
}
