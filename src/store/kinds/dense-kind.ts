/**
 * `dense`: tool vectors from the configured embedder in a flat or HNSW index. Files: `dense.json`
 * (header), `dense.hnsw` or `dense.f32` (vectors), `dense-ids.json` and `embeddings.cache`. A
 * build embeds the tools in batches, reusing the vectors of unchanged tools from the previous
 * index's `embeddings.cache`; a load refuses an index built with another embedder.
 *
 * `dense` uses the embedder `retrieve.dense.embedder` configures; `dense:<embedder id>`
 * (`dense:use-lite`, `dense:static:glove-100d`, `dense:onnx:<model directory>`) names its own, so
 * a library can hold vectors of several embedders side by side. A named part keeps its files in
 * its own subdirectory (the manifest entry's `dir`, e.g. `dense.static-glove-100d/`); the other
 * `retrieve.dense` settings (index kind, HNSW parameters, text, threshold) apply to every part.
 * @module
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolselError, isToolselError } from '../../errors.ts'
import type { DenseConfig } from '../../config/schema.ts'
import type { ToolLibrary } from '../../library/tool-library.ts'
import type { Logger } from '../../log.ts'
import type { EmbeddingModel } from '../../models/embedding-model.ts'
import { buildDenseIndex } from '../../retrieve/dense/build-dense-index.ts'
import {
  loadDenseIndex,
  saveDenseIndex,
  type DenseIndex,
} from '../../retrieve/dense/dense-index.ts'
import { EmbeddingCache } from '../../retrieve/dense/embedding-cache.ts'
import { HnswIndex } from '../../retrieve/dense/hnsw-index.ts'
import { createConfiguredEmbedder } from '../create-configured-embedder.ts'
import {
  DenseManifestSchema,
  EMBEDDING_TEXTS,
  EMBEDDINGS_CACHE_FILE,
  type DenseManifest,
  type EmbeddingTextKind,
} from '../dense-manifest.ts'
import { MANIFEST_FILE, type IndexManifest } from '../manifest.ts'
import { StoredDenseRetriever } from '../stored-dense-retriever.ts'
import { parseEntry, type RetrieverKind } from './retriever-kind.ts'

export const DENSE_KIND: RetrieverKind = {
  name: 'dense',
  requires: [],
  takesArgument: true,

  async build(context) {
    const { part, arg, library, config, previousIndexDir, logger, onProgress, signal } = context
    const settings = partSettings(config.retrieve.dense, arg)
    // A given embedder (tests, bench) stands in for the configured one, never for a named one.
    const given = arg === undefined ? context.embedder : undefined
    const embedder = given ?? (await createConfiguredEmbedder(settings, logger))
    const cache = await loadPreviousCache(previousIndexDir, part, settings.text, logger)
    const reused = cache.size
    const dense = await buildDenseIndex(library.tools, embedder, {
      kind: settings.index,
      hnsw: { ...settings.hnsw },
      cache,
      text: EMBEDDING_TEXTS[settings.text],
      onProgress,
      signal,
    })
    logger.debug('Built dense index', {
      library: library.name,
      embedder: embedder.modelId,
      kind: dense.index.kind,
      cachedVectorsLoaded: reused,
    })
    const entry: DenseManifest = {
      embedderId: embedder.modelId,
      dimensions: embedder.dimensions,
      kind: dense.index.kind,
      params: dense.index instanceof HnswIndex ? { ...dense.index.params } : {},
      text: settings.text,
      cacheFile: EMBEDDINGS_CACHE_FILE,
      ...(arg !== undefined && { dir: partDirectory(part) }),
    }
    const retriever = new StoredDenseRetriever({
      embedder,
      index: dense,
      minScore: settings.minScore,
      cache,
    })
    return { retriever, entry }
  },

  async save(retriever, entry, dir) {
    if (!(retriever instanceof StoredDenseRetriever)) {
      throw new ToolselError(
        'INTERNAL',
        `A dense manifest entry needs a dense retriever to save, got "${retriever.name}".`,
      )
    }
    const { cacheFile, dir: own } = entry as { cacheFile?: unknown; dir?: unknown }
    const partDir = typeof own === 'string' ? join(dir, own) : dir
    await saveDenseIndex(partDir, retriever.dense)
    if (retriever.cache && typeof cacheFile === 'string')
      await retriever.cache.save(join(partDir, cacheFile))
  },

  async load({ part, arg, dir, manifest, entry: raw, library, config, logger }) {
    const entry = parseEntry(manifest, part, DenseManifestSchema, raw)
    const settings = partSettings(config.retrieve.dense, arg)
    const embedder = await createConfiguredEmbedder(settings, logger)
    assertSameEmbedder(manifest, entry, embedder, settings.embedder)
    const dense = await loadDenseIndex(
      entry.dir === undefined ? dir : join(dir, entry.dir),
      { name: library.name, embedderId: embedder.modelId, dimensions: embedder.dimensions },
      { efSearch: settings.hnsw.efSearch },
    )
    assertSameTools(dense, library, dir)
    return new StoredDenseRetriever({ embedder, index: dense, minScore: settings.minScore })
  },

  rebuildHint: (library) =>
    `Rebuild it with: toolsel index <file> --name ${library} --retriever dense.`,
}

/** `retrieve.dense` with the part's own embedder (`dense:<embedder id>`) in place of the configured one. */
function partSettings(settings: DenseConfig, arg: string | undefined): DenseConfig {
  return arg === undefined ? settings : { ...settings, embedder: arg }
}

/**
 * The subdirectory of a named dense part: `dense:static:glove-100d` → `dense.static-glove-100d-<hash>`
 * (the hash keeps names that differ only in replaced characters apart).
 */
export function partDirectory(part: string): string {
  const readable = part.replace(/[^a-zA-Z0-9._-]+/g, '-').slice(0, 60)
  const hash = createHash('sha256').update(part).digest('hex').slice(0, 8)
  return `${readable.replace(/^dense-/, 'dense.')}-${hash}`
}

/**
 * The previous index's embedding cache of the same part, when it was embedded from the same kind
 * of text (the cache is keyed by tool content, not by text). A missing or unreadable cache gives
 * an empty one: it only saves time.
 */
async function loadPreviousCache(
  directory: string | undefined,
  part: string,
  text: EmbeddingTextKind,
  logger: Logger,
): Promise<EmbeddingCache> {
  const previous = directory === undefined ? undefined : await readPreviousEntry(directory, part)
  if (directory === undefined || previous?.text !== text) return new EmbeddingCache()
  const file = join(directory, previous.dir ?? '', EMBEDDINGS_CACHE_FILE)
  if (!existsSync(file)) return new EmbeddingCache()
  try {
    return await EmbeddingCache.load(file)
  } catch (error) {
    if (!isToolselError(error)) throw error
    logger.warn(`Ignoring the previous embedding cache: ${error.message}`)
    return new EmbeddingCache()
  }
}

async function readPreviousEntry(
  directory: string,
  part: string,
): Promise<{ text?: string; dir?: string } | undefined> {
  try {
    const manifest = JSON.parse(await readFile(join(directory, MANIFEST_FILE), 'utf8')) as {
      retrievers?: Record<string, { text?: string; dir?: string } | undefined>
    }
    const entry = manifest.retrievers?.[part]
    return typeof entry === 'object' && entry !== null ? entry : undefined
  } catch {
    return undefined
  }
}

/**
 * Vectors from one model are meaningless to another: searching them with another embedder's
 * queries would return noise without any error, so a mismatch is refused.
 */
function assertSameEmbedder(
  manifest: IndexManifest,
  entry: DenseManifest,
  embedder: EmbeddingModel,
  configuredId: string,
): void {
  if (entry.embedderId === embedder.modelId && entry.dimensions === embedder.dimensions) return
  const asked =
    configuredId === embedder.modelId ? configuredId : `${embedder.modelId} ("${configuredId}")`
  throw new ToolselError(
    'INDEX_MISMATCH',
    `Index "${manifest.library}" was built with embedder ${entry.embedderId} (${entry.dimensions} dims); the config asks for ${asked} (${embedder.dimensions} dims). ${rebuildCommand(manifest, configuredId)} Or use the index's embedder: --embedder ${entry.embedderId}, TOOLSEL_EMBEDDER or retrieve.dense.embedder.`,
    {
      details: {
        library: manifest.library,
        builtWith: entry.embedderId,
        builtDimensions: entry.dimensions,
        configured: configuredId,
        configuredDimensions: embedder.dimensions,
      },
    },
  )
}

function assertSameTools(dense: DenseIndex, library: ToolLibrary, dir: string): void {
  const ids = library.ids
  if (dense.ids.length === ids.length && dense.ids.every((id, at) => id === ids[at])) return
  throw new ToolselError(
    'INDEX_CORRUPT',
    `Index "${library.name}" at ${dir}: its dense vectors belong to other tools than its tools file. Rebuild it.`,
    { details: { library: library.name } },
  )
}

export function rebuildCommand(manifest: IndexManifest, embedder: string | undefined): string {
  const retriever = manifest.retrievers.hybrid !== undefined ? 'hybrid' : 'dense'
  const source = manifest.source.path ?? '<file>'
  const embedderFlag = embedder === undefined ? '' : ` --embedder ${embedder}`
  return `Rebuild it with: toolsel index ${source} --name ${manifest.library} --retriever ${retriever}${embedderFlag}.`
}
