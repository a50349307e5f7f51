/**
 * Embeds a library's tools and puts the vectors in a flat or HNSW index, reusing cached vectors
 * of tools whose content did not change.
 * @module
 */
import { throwIfAborted } from '../../errors.ts'
import { toolContentHash, type Tool } from '../../library/tool.ts'
import type { EmbeddingModel } from '../../models/embedding-model.ts'
import type { DenseIndex } from './dense-index.ts'
import type { EmbeddingCache } from './embedding-cache.ts'
import { FlatIndex } from './flat-index.ts'
import { HnswIndex, type HnswParams } from './hnsw-index.ts'
import { toolEmbeddingText } from './tool-embedding-text.ts'
import type { VectorIndexKind } from './vector-index.ts'

/** Vectors inserted between two checks of the abort signal. */
const ADD_SLICE = 1000

export interface BuildDenseIndexOptions {
  /** `flat` (exact) or `hnsw` (approximate, faster past ~20k tools). Default `hnsw`. */
  kind?: VectorIndexKind
  /** HNSW parameters; see `DEFAULT_HNSW_PARAMS`. Ignored for `flat`. */
  hnsw?: Partial<HnswParams>
  /** Vectors of unchanged tools are taken from here; new ones are added to it. */
  cache?: EmbeddingCache
  /**
   * Drop this embedder's cache entries for tools no longer in `tools`. Default true; pass false
   * when one cache file is shared by several libraries.
   */
  pruneCache?: boolean
  /**
   * The text each tool is embedded as. Default `toolEmbeddingText`. The cache key is the tool's
   * content hash, not the text: use a separate cache per text function.
   */
  text?: (tool: Tool) => string
  /** Texts per `embed` call (progress is reported after each). Default `min(maxBatchSize, 256)`. */
  batchSize?: number
  /** Called with (tools embedded or found in the cache, total) after each batch, and once at the start. */
  onProgress?: (done: number, total: number) => void
  signal?: AbortSignal
}

export async function buildDenseIndex(
  tools: readonly Tool[],
  embedder: EmbeddingModel,
  options: BuildDenseIndexOptions = {},
): Promise<DenseIndex> {
  const { cache, signal, onProgress } = options
  const toText = options.text ?? toolEmbeddingText
  const hashes = tools.map((tool) => toolContentHash(tool))
  const vectors: Array<Float32Array | undefined> = hashes.map((hash) =>
    cache?.get(embedder.modelId, hash),
  )
  const missing = vectors.flatMap((vector, position) => (vector ? [] : [position]))
  const texts = new Map(missing.map((position) => [position, toText(tools[position])]))
  // Backends pad a batch to its longest text, and use-lite's cost grows with that length, so
  // texts of similar length are batched together: 1.3x faster on the demo tools with use-lite.
  missing.sort((a, b) => texts.get(a)!.length - texts.get(b)!.length || a - b)
  const batchSize = Math.max(1, options.batchSize ?? Math.min(embedder.maxBatchSize, 256))
  let done = tools.length - missing.length
  onProgress?.(done, tools.length)

  for (let start = 0; start < missing.length; start += batchSize) {
    throwIfAborted(signal)
    const positions = missing.slice(start, start + batchSize)
    const batch = positions.map((position) => texts.get(position)!)
    const embedded = await embedder.embed(batch, { kind: 'document', signal })
    for (const [offset, position] of positions.entries()) {
      vectors[position] = embedded[offset]
      cache?.set(embedder.modelId, hashes[position], embedded[offset])
    }
    done += positions.length
    onProgress?.(done, tools.length)
    // Some backends run a whole batch synchronously; a macrotask turn between batches lets a
    // server answer requests while a library upload is being embedded.
    await yieldToEventLoop()
  }
  throwIfAborted(signal)
  if (cache && options.pruneCache !== false) cache.retain(embedder.modelId, new Set(hashes))

  const kind = options.kind ?? 'hnsw'
  const index =
    kind === 'flat'
      ? new FlatIndex(embedder.dimensions, embedder.modelId, tools.length)
      : new HnswIndex(embedder.dimensions, embedder.modelId, options.hnsw, tools.length)
  // Inserting into HNSW is synchronous native work (seconds at 10k tools): add in slices so an
  // abort is noticed and a server keeps answering other requests meanwhile.
  for (let start = 0; start < vectors.length; start += ADD_SLICE) {
    throwIfAborted(signal)
    index.add(vectors.slice(start, start + ADD_SLICE) as Float32Array[])
    await yieldToEventLoop()
  }
  return { index, ids: tools.map((tool) => tool.id) }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
