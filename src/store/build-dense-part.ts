/**
 * Builds the dense (and hybrid) retrievers of a library and their manifest entries: embeds the
 * tools in batches, reusing the vectors of unchanged tools from the previous index's
 * `embeddings.cache`, and puts the vectors in a flat or HNSW index.
 * @module
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config/schema.ts'
import { isToolselError } from '../errors.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { SILENT_LOGGER, type Logger } from '../log.ts'
import type { EmbeddingModel } from '../models/embedding-model.ts'
import { buildDenseIndex } from '../retrieve/dense/build-dense-index.ts'
import { EmbeddingCache } from '../retrieve/dense/embedding-cache.ts'
import { HnswIndex } from '../retrieve/dense/hnsw-index.ts'
import type { Retriever } from '../retrieve/retriever.ts'
import { createConfiguredEmbedder } from './create-configured-embedder.ts'
import {
  EMBEDDING_TEXTS,
  EMBEDDINGS_CACHE_FILE,
  type DenseManifest,
  type EmbeddingTextKind,
  type HybridManifest,
} from './dense-manifest.ts'
import { LibraryHybridRetriever } from './library-hybrid-retriever.ts'
import { MANIFEST_FILE } from './manifest.ts'
import { StoredDenseRetriever } from './stored-dense-retriever.ts'

export interface BuildDensePartOptions {
  /** `dense` builds the dense retriever; `hybrid` also the fusion of bm25 and dense. */
  retriever: 'dense' | 'hybrid'
  /** The embedder; default the one `retrieve.dense` configures. */
  embedder?: EmbeddingModel
  /** The index this build replaces: its embedding cache is reused when it exists. */
  previousIndexDir?: string
  logger?: Logger
  /** Called with (tools embedded or found in the cache, total). */
  onProgress?: (done: number, total: number) => void
  signal?: AbortSignal
}

export interface DensePart {
  /** `dense`, and `hybrid` when asked for. */
  retrievers: Map<string, Retriever>
  manifest: { dense: DenseManifest; hybrid?: HybridManifest }
}

/** `bm25` is the library's BM25 retriever, the hybrid's other input. */
export async function buildDensePart(
  library: ToolLibrary,
  config: Config,
  bm25: Retriever,
  options: BuildDensePartOptions,
): Promise<DensePart> {
  const logger = options.logger ?? SILENT_LOGGER
  const settings = config.retrieve.dense
  const embedder = options.embedder ?? (await createConfiguredEmbedder(settings, logger))
  const cache = await loadPreviousCache(options.previousIndexDir, settings.text, logger)
  const reused = cache.size
  const dense = await buildDenseIndex(library.tools, embedder, {
    kind: settings.index,
    hnsw: { ...settings.hnsw },
    cache,
    text: EMBEDDING_TEXTS[settings.text],
    onProgress: options.onProgress,
    signal: options.signal,
  })
  logger.debug('Built dense index', {
    library: library.name,
    embedder: embedder.modelId,
    kind: dense.index.kind,
    cachedVectorsLoaded: reused,
  })
  const retrievers = new Map<string, Retriever>([
    [
      'dense',
      new StoredDenseRetriever({ embedder, index: dense, minScore: settings.minScore, cache }),
    ],
  ])
  const manifest: DensePart['manifest'] = {
    dense: {
      embedderId: embedder.modelId,
      dimensions: embedder.dimensions,
      kind: dense.index.kind,
      params: dense.index instanceof HnswIndex ? { ...dense.index.params } : {},
      text: settings.text,
      cacheFile: EMBEDDINGS_CACHE_FILE,
    },
  }
  if (options.retriever === 'hybrid') {
    const inputs = new Map([['bm25', bm25], ...retrievers])
    retrievers.set('hybrid', new LibraryHybridRetriever(config, inputs))
    manifest.hybrid = { inputs: ['bm25', 'dense'] }
  }
  return { retrievers, manifest }
}

/**
 * The previous index's embedding cache, when it was embedded from the same kind of text (the
 * cache is keyed by tool content, not by text). A missing or unreadable cache gives an empty one:
 * it only saves time.
 */
async function loadPreviousCache(
  directory: string | undefined,
  text: EmbeddingTextKind,
  logger: Logger,
): Promise<EmbeddingCache> {
  if (directory === undefined || !existsSync(join(directory, EMBEDDINGS_CACHE_FILE))) {
    return new EmbeddingCache()
  }
  const previousText = await readPreviousText(directory)
  if (previousText !== text) return new EmbeddingCache()
  try {
    return await EmbeddingCache.load(join(directory, EMBEDDINGS_CACHE_FILE))
  } catch (error) {
    if (!isToolselError(error)) throw error
    logger.warn(`Ignoring the previous embedding cache: ${error.message}`)
    return new EmbeddingCache()
  }
}

async function readPreviousText(directory: string): Promise<string | undefined> {
  try {
    const manifest = JSON.parse(await readFile(join(directory, MANIFEST_FILE), 'utf8')) as {
      retrievers?: { dense?: { text?: string } }
    }
    return manifest.retrievers?.dense?.text
  } catch {
    return undefined
  }
}
