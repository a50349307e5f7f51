/**
 * The `retrievers.dense` and `retrievers.hybrid` entries of an index manifest: what the dense
 * part was built with, so that a load can refuse a mismatch with the command that fixes it.
 * @module
 */
import { z } from 'zod'
import { IndexFileNameSchema } from './manifest.ts'
import type { Tool } from '../library/tool.ts'
import { toolEmbeddingText } from '../retrieve/dense/tool-embedding-text.ts'

/** Tool vectors by (embedder id, tool content hash), reused when the library is rebuilt. */
export const EMBEDDINGS_CACHE_FILE = 'embeddings.cache'

export const DenseManifestSchema = z.object({
  /** `EmbeddingModel.modelId` of the tool vectors: `use-lite`, `onnx:bge-small`, `hashing:256`. */
  embedderId: z.string().min(1),
  /** Vector length. */
  dimensions: z.number().int().positive(),
  /**
   * The embedder's model files by content (`EmbeddingModel.fingerprint`, `sha256:<hex>`), where
   * its id names only a place (`onnx:<dir>`), or its vectors by content (`static:` since round
   * 35, `use-lite` since round 36: a probe of them, `sha256:<16 hex>`): a load whose model has
   * other files (vectors) is
   * refused, and a rebuild reuses no vector of the old ones. Absent for embedders whose id is all
   * there is, and in indexes saved before (accepted as before; the next save records it).
   */
  modelFiles: z.string().min(1).optional(),
  /** `flat` (exact) or `hnsw` (approximate). */
  kind: z.enum(['flat', 'hnsw']),
  /** Index build parameters (HNSW's m, efConstruction, efSearch, randomSeed; none for flat). */
  params: z.record(z.string(), z.unknown()),
  /** Which text each tool was embedded as (`retrieve.dense.text`). */
  text: z.enum(['full', 'short']),
  /** The embedding cache file inside the part's directory. */
  cacheFile: IndexFileNameSchema,
  /**
   * The part's own subdirectory of the index directory (named parts, `dense:<embedder>`); absent
   * for `dense`, whose files sit in the index directory itself.
   */
  dir: IndexFileNameSchema.optional(),
})

export type DenseManifest = z.infer<typeof DenseManifestSchema>

export const HybridManifestSchema = z.object({
  /** The library's retriever parts the hybrid fuses. */
  inputs: z.array(z.string().min(1)),
})

export type HybridManifest = z.infer<typeof HybridManifestSchema>

export type EmbeddingTextKind = DenseManifest['text']

/**
 * The text functions by `retrieve.dense.text`. `short` is the first line of `full` (namespace,
 * name words and description): on use-lite about 38 tokens against 91 for the demo tools, and
 * use-lite's cost per text grows with its token count.
 */
export const EMBEDDING_TEXTS: Readonly<Record<EmbeddingTextKind, (tool: Tool) => string>> =
  Object.freeze({
    full: toolEmbeddingText,
    short: (tool: Tool) => toolEmbeddingText(tool).split('\n', 1)[0],
  })
