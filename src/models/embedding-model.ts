/**
 * The embedding contract: texts in, one vector per text out. Backends live in `models/onnx/`,
 * `models/use-lite/` and `hashing-embedding-model.ts`; `create-embedding-model.ts` picks one by id.
 * @module
 */
import { throwIfAborted } from '../errors.ts'

/**
 * What a text is. Asymmetric models embed questions and passages differently (e5 wants
 * `query: ` / `passage: `, bge an instruction before queries); symmetric ones ignore it.
 */
export type EmbeddingKind = 'query' | 'document'

export interface EmbedOptions {
  /** Whether the texts are search queries or indexed documents. Default `'document'`. */
  kind?: EmbeddingKind
  /** Stops the work between batches; the call then rejects with ABORTED. */
  signal?: AbortSignal
}

export interface EmbeddingModel {
  /** Identifies the model in index headers, caches and benchmark rows: `use-lite`, `onnx:bge-small`, `hashing:256`. */
  readonly modelId: string
  /** Length of every returned vector. */
  readonly dimensions: number
  /**
   * The model's files by content (`sha256:<hex>`, model-fingerprint.ts) where `modelId` names
   * only a place whose files can be replaced (`onnx:<dir>`), or its vectors by content
   * (`static:` and `use-lite`, vector-probe.ts: a package's vectors or weights behind a name);
   * absent where the id is all there is (hashing; remote models).
   */
  readonly fingerprint?: string
  /**
   * Most texts the backend runs in one forward pass. `embed` accepts more and chunks them
   * itself; callers that report progress chunk by this size too. `Infinity` when unlimited.
   */
  readonly maxBatchSize: number
  /**
   * True when loading this instance already ran a forward pass through it (use-lite's vector
   * probe, the first load of a process; an onnx model's dimension probe, every load): a warm-up
   * pass (store/create-configured-embedder.ts) would only repeat it.
   */
  readonly warmedUp?: boolean
  /** One vector per text, in input order. Unit length unless the model's docs say otherwise. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>
}

/** Scales a vector to unit length in place and returns it. A zero vector is left as it is. */
export function normalizeL2(vector: Float32Array): Float32Array {
  let sum = 0
  for (let index = 0; index < vector.length; index++) sum += vector[index] * vector[index]
  if (sum === 0) return vector
  const scale = 1 / Math.sqrt(sum)
  for (let index = 0; index < vector.length; index++) vector[index] *= scale
  return vector
}

/**
 * Runs `embedBatch` over `texts` in chunks of `batchSize`, checking `signal` before each chunk.
 * Backends whose forward pass can't be interrupted use this so that an abort stops the work at
 * the next chunk boundary instead of after the whole list.
 */
export async function embedInBatches(
  texts: readonly string[],
  batchSize: number,
  embedBatch: (batch: string[]) => Promise<Float32Array[]>,
  signal?: AbortSignal,
): Promise<Float32Array[]> {
  const vectors: Float32Array[] = []
  const step = Number.isFinite(batchSize) ? Math.max(1, batchSize) : Math.max(1, texts.length)
  for (let start = 0; start < texts.length; start += step) {
    throwIfAborted(signal)
    vectors.push(...(await embedBatch(texts.slice(start, start + step))))
  }
  throwIfAborted(signal)
  return vectors
}
