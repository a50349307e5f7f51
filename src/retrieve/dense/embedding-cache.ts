/**
 * Tool vectors keyed by (embedder id, tool content hash), so re-indexing a library where few
 * tools changed embeds only those. Saved as one binary file: a length-prefixed JSON list of keys
 * followed by the vectors as little-endian float32.
 * @module
 */
import { constants, existsSync, type Stats } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { errorMessage, ToolselError } from '../../errors.ts'
import { cacheTrustProblem } from '../../trusted-path.ts'
import { replaceCacheFile } from '../../write-file-atomically.ts'

/** Bump when the file layout changes; older files are ignored (the cache is rebuilt). */
export const EMBEDDING_CACHE_FORMAT = 1

interface CacheFileHeader {
  format: number
  /** One entry per vector, in file order: [embedder id, content hash, dimensions]. */
  entries: Array<[string, string, number]>
}

export class EmbeddingCache {
  readonly #vectors = new Map<string, Float32Array>()

  get size(): number {
    return this.#vectors.size
  }

  get(embedderId: string, contentHash: string): Float32Array | undefined {
    return this.#vectors.get(cacheKey(embedderId, contentHash))
  }

  set(embedderId: string, contentHash: string, vector: Float32Array): void {
    this.#vectors.set(cacheKey(embedderId, contentHash), vector)
  }

  /** Drops `embedderId`'s vectors whose hash is not in `keep` (tools removed from the library). */
  retain(embedderId: string, keep: ReadonlySet<string>): void {
    for (const key of this.#vectors.keys()) {
      const [id, hash] = key.split('\u0000')
      if (id === embedderId && !keep.has(hash)) this.#vectors.delete(key)
    }
  }

  /**
   * Writes the cache to `file` atomically (write-file-atomically.ts `replaceCacheFile`: a
   * temporary file renamed over it; one a writer killed mid-write left is removed by the next
   * save of `file`); answers the paths so removed.
   */
  async save(file: string): Promise<string[]> {
    const entries: CacheFileHeader['entries'] = []
    const chunks: Uint8Array[] = []
    for (const [key, vector] of this.#vectors) {
      const [embedderId, hash] = key.split('\u0000')
      entries.push([embedderId, hash, vector.length])
      chunks.push(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength))
    }
    const header = Buffer.from(JSON.stringify({ format: EMBEDDING_CACHE_FORMAT, entries }))
    // Pad the header so the vectors start 4-byte aligned (readable in place, if ever needed).
    const padding = (4 - ((4 + header.byteLength) % 4)) % 4
    const prefix = Buffer.alloc(4)
    prefix.writeUInt32LE(header.byteLength + padding)
    // 0644 whatever the umask: a file group or others can write is not read back (`load`).
    return replaceCacheFile(
      file,
      Buffer.concat([prefix, header, Buffer.alloc(padding, 0x20), ...chunks]),
      { mode: 0o644 },
    )
  }

  /**
   * Reads a cache saved by `save`. A missing file or one of another format gives an empty cache
   * (it is only a cache); a truncated or garbled file is INDEX_CORRUPT. A file that can't be
   * trusted is not read: an empty cache, and `options.warn` says why (`ownerProblem`: another
   * user's file, one group or others can write, one in a directory any user can write, not a
   * regular file, one larger than EMBEDDING_CACHE_MAX_BYTES or than its header says, a vector of
   * `options.modelId` that is not `options.dimensions` long). The file is read through one handle (its fstat is what is
   * checked) and never past what its header promises.
   */
  static async load(
    file: string,
    options: EmbeddingCacheLoadOptions = {},
  ): Promise<EmbeddingCache> {
    const cache = new EmbeddingCache()
    if (!existsSync(file)) return cache
    let handle: FileHandle | undefined
    try {
      // Non-blocking: a FIFO planted at the name does not hang the open (fstat then refuses it).
      handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK)
      const info = await handle.stat()
      const untrusted = ownerProblem(file, info)
      if (untrusted !== undefined) return ignored(cache, file, untrusted, options)
      if (info.size > EMBEDDING_CACHE_MAX_BYTES) {
        return ignored(
          cache,
          file,
          `it is ${info.size} bytes, more than the ${EMBEDDING_CACHE_MAX_BYTES} read`,
          options,
        )
      }
      const prefix = await readExactly(handle, 0, 4)
      const headerLength = prefix.readUInt32LE(0)
      if (4 + headerLength > info.size) throw new Error('file is truncated')
      const header = parseHeader((await readExactly(handle, 4, headerLength)).toString('utf8'))
      if (header.format !== EMBEDDING_CACHE_FORMAT) return cache
      const vectorBytes = header.entries.reduce(
        (sum, [, , dimensions]) => sum + dimensions * Float32Array.BYTES_PER_ELEMENT,
        0,
      )
      const expected = 4 + headerLength + vectorBytes
      if (expected > info.size) throw new Error('file is truncated')
      if (expected < info.size) {
        return ignored(
          cache,
          file,
          `it is ${info.size} bytes, more than the ${expected} its header says`,
          options,
        )
      }
      const { modelId, dimensions: wanted } = options
      if (modelId !== undefined && wanted !== undefined) {
        const wrong = header.entries.find(
          ([id, , dimensions]) => id === modelId && dimensions !== wanted,
        )
        if (wrong !== undefined) {
          return ignored(
            cache,
            file,
            `it holds ${wrong[2]}-dimension vectors of ${modelId}, whose vectors have ${wanted}`,
            options,
          )
        }
      }
      const bytes = await readExactly(handle, 4 + headerLength, vectorBytes)
      let offset = 0
      for (const [embedderId, hash, dimensions] of header.entries) {
        const byteLength = dimensions * Float32Array.BYTES_PER_ELEMENT
        // slice() copies into a fresh, aligned buffer.
        const vector = new Float32Array(
          bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + byteLength),
        )
        cache.set(embedderId, hash, vector)
        offset += byteLength
      }
      return cache
    } catch (error) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Embedding cache "${file}" could not be read (${errorMessage(error)}). Delete it; it is rebuilt on the next index build.`,
        { cause: error, details: { file } },
      )
    } finally {
      await handle?.close()
    }
  }
}

export interface EmbeddingCacheLoadOptions {
  /** With `dimensions`: the embedder the cache is read for; a vector of it of another length refuses the file. */
  modelId?: string
  dimensions?: number
  /** Told why a file was not read (the cache then starts empty). */
  warn?: (message: string) => void
}

/**
 * Largest embedding cache read: 1 GiB (260,000 tools of 1,024 dimensions). A larger file is
 * ignored unread, so a file planted in a shared index directory can't make a build read GBs.
 */
export const EMBEDDING_CACHE_MAX_BYTES = 2 ** 30
/** Longest vector of a cache entry (the largest embedders have 4,096). */
const MAX_DIMENSIONS = 65_536

/**
 * Why a cache file is not trusted, or undefined: one not a regular file, or one another user
 * could have put vectors of their own in under the hashes of this library's tools
 * (`cacheTrustProblem`: another uid's, group- or world-writable, in a directory any user can
 * write): the answers would change with no error, and a rebuild would carry them on.
 */
function ownerProblem(file: string, info: Stats): string | undefined {
  if (!info.isFile()) return 'it is not a regular file'
  return cacheTrustProblem(file, info)
}

function ignored(
  cache: EmbeddingCache,
  file: string,
  reason: string,
  options: EmbeddingCacheLoadOptions,
): EmbeddingCache {
  options.warn?.(`Ignoring the embedding cache "${file}": ${reason}; its tools are embedded again.`)
  return cache
}

/** The header's JSON, checked: entries of [string, string, whole dimensions 1..MAX_DIMENSIONS]. */
function parseHeader(text: string): CacheFileHeader {
  const header = JSON.parse(text) as Partial<CacheFileHeader> | null
  if (header === null || typeof header !== 'object') throw new Error('header is not an object')
  if (header.format !== EMBEDDING_CACHE_FORMAT)
    return { format: Number(header.format), entries: [] }
  if (!Array.isArray(header.entries)) throw new Error('header has no entries')
  for (const entry of header.entries as unknown[]) {
    if (
      !Array.isArray(entry) ||
      typeof entry[0] !== 'string' ||
      typeof entry[1] !== 'string' ||
      !Number.isInteger(entry[2]) ||
      entry[2] < 1 ||
      entry[2] > MAX_DIMENSIONS
    )
      throw new Error(
        `header entry ${JSON.stringify(entry)?.slice(0, 80)} is not [model, hash, dimensions]`,
      )
  }
  return header as CacheFileHeader
}

/** `length` bytes of `handle` from `position`; a file that ends first is truncated. */
async function readExactly(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length)
  let done = 0
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done)
    if (bytesRead === 0) throw new Error('file is truncated')
    done += bytesRead
  }
  return buffer
}

function cacheKey(embedderId: string, contentHash: string): string {
  return `${embedderId}\u0000${contentHash}`
}
