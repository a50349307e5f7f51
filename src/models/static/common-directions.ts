/**
 * The static embedder's common directions (static-embedding-model.ts): the mean word vector and
 * the first principal component of the centred vectors, estimated on the most frequent words.
 * Computing them takes about 0.4 s (250 M multiply-adds), which every start of a server with a
 * static dense part or the learned selector's dense features paid; they are cached next to the
 * converted word vectors (word-vectors.ts `cachedBesideVectors`), in a file keyed by what they
 * are computed from: the digest of those words' stored rows and the parameters below. A file of
 * another version, key or size, or with a value that is not finite, is not read: the directions
 * are computed again and the file rewritten. The values are stored as the float64s computed, so
 * a model built from the file embeds to the same bits.
 * @module
 */
import { createHash } from 'node:crypto'
import { cachedBesideVectors, type WordVectors } from './word-vectors.ts'

export interface CommonDirections {
  /** The mean of the words' vectors. */
  readonly mean: Float64Array
  /** The first principal component of their centred vectors (unit length). */
  readonly component: Float64Array
}

/** Words (most frequent first) the common directions are estimated on. */
export const COMMON_WORDS = 50_000

/** Power iterations for the first principal component. */
const ITERATIONS = 100

/**
 * The mean vector and the first principal component of the centred vectors of the `count` most
 * frequent words: "all-but-the-top" post-processing (Mu and Viswanath 2018,
 * https://arxiv.org/abs/1702.01417), with their D = dimensions / 100 = 1 component.
 */
export function commonDirections(vectors: WordVectors, count: number): CommonDirections {
  const n = Math.min(count, vectors.size)
  const d = vectors.dimensions
  const mean = new Float64Array(d)
  for (let id = 0; id < n; id++) vectors.addScaled(mean, id, 1 / n)
  const covariance = new Float64Array(d * d)
  const [r0, r1, r2, r3] = [0, 1, 2, 3].map(() => new Float64Array(d)) as [
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
  ]
  const centred = (row: Float64Array, id: number) => {
    row.fill(0)
    vectors.addScaled(row, id, 1)
    for (let i = 0; i < d; i++) row[i] -= mean[i]
  }
  // The upper triangle of the sum of the rows' outer products, four rows per pass over it: each
  // entry gets the same additions in the same order as one row at a time (the same sums to the
  // bit), but is read and written once per four rows. A first load pays this (later ones read
  // the cache): 250 M multiply-adds, about 1.7 times faster so.
  let id = 0
  for (; id + 4 <= n; id += 4) {
    centred(r0, id)
    centred(r1, id + 1)
    centred(r2, id + 2)
    centred(r3, id + 3)
    for (let i = 0; i < d; i++) {
      const v0 = r0[i]
      const v1 = r1[i]
      const v2 = r2[i]
      const v3 = r3[i]
      const at = i * d
      for (let j = i; j < d; j++) {
        let sum = covariance[at + j]
        sum += v0 * r0[j]
        sum += v1 * r1[j]
        sum += v2 * r2[j]
        sum += v3 * r3[j]
        covariance[at + j] = sum
      }
    }
  }
  for (; id < n; id++) {
    centred(r0, id)
    for (let i = 0; i < d; i++) {
      const value = r0[i]
      for (let j = i; j < d; j++) covariance[i * d + j] += value * r0[j]
    }
  }
  for (let i = 0; i < d; i++)
    for (let j = 0; j < i; j++) covariance[i * d + j] = covariance[j * d + i]
  // Power iteration from a fixed start: deterministic.
  let component = new Float64Array(d).fill(1 / Math.sqrt(d))
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    const next = new Float64Array(d)
    for (let i = 0; i < d; i++) {
      let sum = 0
      for (let j = 0; j < d; j++) sum += covariance[i * d + j] * component[j]
      next[i] = sum
    }
    const norm = Math.hypot(...next)
    for (let i = 0; i < d; i++) next[i] /= norm
    component = next
  }
  return { mean, component }
}

/** Bump when the file layout or the computation changes: a file of another version is rebuilt. */
const FORMAT_VERSION = 1
const MAGIC = 'TSCD'
const FILE_NAME = `static-common-directions.v${FORMAT_VERSION}.bin`
/** Far above any real file (16 bytes a dimension and a short header): a larger one is not read. */
const MAX_FILE_BYTES = 1 << 20

/**
 * `commonDirections(vectors, COMMON_WORDS)`, from the cache file next to the converted vectors
 * when it holds them for these vectors (else computed and the file written).
 */
export async function loadCommonDirections(
  vectors: WordVectors,
  log?: (message: string) => void,
  source?: string,
): Promise<CommonDirections> {
  const key = directionsKey(vectors)
  return cachedBesideVectors(
    FILE_NAME,
    MAX_FILE_BYTES,
    {
      decode: (bytes) => decodeDirections(bytes, key, vectors.dimensions),
      compute: () => commonDirections(vectors, COMMON_WORDS),
      encode: (directions) => encodeDirections(directions, key),
    },
    log,
    source,
  )
}

/** What the directions are computed from: the parameters and the rows of the words used. */
function directionsKey(vectors: WordVectors): string {
  const words = Math.min(COMMON_WORDS, vectors.size)
  return createHash('sha256')
    .update(
      JSON.stringify({
        version: FORMAT_VERSION,
        words,
        iterations: ITERATIONS,
        dimensions: vectors.dimensions,
        rows: vectors.rowsDigest(words),
      }),
    )
    .digest('hex')
}

/**
 * Layout: "TSCD", u32 header length, header JSON ({version, key, dimensions}), padding to 8
 * bytes, then f64 mean[dimensions], f64 component[dimensions].
 */
export function encodeDirections(directions: CommonDirections, key: string): Uint8Array {
  const dimensions = directions.mean.length
  const header = Buffer.from(JSON.stringify({ version: FORMAT_VERSION, key, dimensions }))
  const start = align8(8 + header.length)
  const out = Buffer.alloc(start + 16 * dimensions)
  out.write(MAGIC, 0, 'latin1')
  out.writeUInt32LE(header.length, 4)
  header.copy(out, 8)
  out.set(new Uint8Array(Float64Array.from(directions.mean).buffer), start)
  out.set(new Uint8Array(Float64Array.from(directions.component).buffer), start + 8 * dimensions)
  return out
}

/** The directions in `bytes` when they are of this version, `key` and `dimensions`. */
export function decodeDirections(
  bytes: Uint8Array,
  key: string,
  dimensions: number,
): CommonDirections | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buffer.length < 8 || buffer.toString('latin1', 0, 4) !== MAGIC) return undefined
  const headerLength = buffer.readUInt32LE(4)
  if (8 + headerLength > buffer.length) return undefined
  let header: unknown
  try {
    header = JSON.parse(buffer.toString('utf8', 8, 8 + headerLength))
  } catch {
    return undefined
  }
  const { version, key: stored, dimensions: count } = (header ?? {}) as Record<string, unknown>
  if (version !== FORMAT_VERSION || stored !== key || count !== dimensions) return undefined
  const start = align8(8 + headerLength)
  if (buffer.length !== start + 16 * dimensions) return undefined
  // A copy: a fresh, aligned buffer whatever the offset of `bytes`.
  const values = new Float64Array(
    buffer.buffer.slice(buffer.byteOffset + start, buffer.byteOffset + buffer.length),
  )
  if (!values.every(Number.isFinite)) return undefined
  return { mean: values.slice(0, dimensions), component: values.slice(dimensions) }
}

function align8(offset: number): number {
  return (offset + 7) & ~7
}
