/**
 * Tool vectors keyed by (embedder id, tool content hash), so re-indexing a library where few
 * tools changed embeds only those. Saved as one binary file: a length-prefixed JSON list of keys
 * followed by the vectors as little-endian float32.
 * @module
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { ToolselError } from '../../errors.ts'
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
    return replaceCacheFile(
      file,
      Buffer.concat([prefix, header, Buffer.alloc(padding, 0x20), ...chunks]),
    )
  }

  /**
   * Reads a cache saved by `save`. A missing file or one of another format gives an empty cache
   * (it is only a cache); a truncated or garbled file is INDEX_CORRUPT.
   */
  static async load(file: string): Promise<EmbeddingCache> {
    const cache = new EmbeddingCache()
    if (!existsSync(file)) return cache
    try {
      const bytes = await readFile(file)
      const headerLength = bytes.readUInt32LE(0)
      const header = JSON.parse(
        bytes.subarray(4, 4 + headerLength).toString('utf8'),
      ) as CacheFileHeader
      if (header.format !== EMBEDDING_CACHE_FORMAT) return cache
      let offset = 4 + headerLength
      for (const [embedderId, hash, dimensions] of header.entries) {
        const byteLength = dimensions * Float32Array.BYTES_PER_ELEMENT
        if (offset + byteLength > bytes.byteLength) throw new Error('file is truncated')
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
        `Embedding cache "${file}" could not be read (${error instanceof Error ? error.message : String(error)}). Delete it; it is rebuilt on the next index build.`,
        { cause: error, details: { file } },
      )
    }
  }
}

function cacheKey(embedderId: string, contentHash: string): string {
  return `${embedderId}\u0000${contentHash}`
}
