/**
 * The dense part of an index directory: `dense.json` (header), `dense.hnsw` or `dense.f32`
 * (vectors), `dense-ids.json` and `embeddings.cache`, described by the manifest's
 * `retrievers.dense` (and `retrievers.hybrid`) entries. Save and load live together so their
 * formats can't drift apart; the index store runs them for every index.
 * @module
 */
import { join } from 'node:path'
import { ToolselError } from '../errors.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import type { EmbeddingModel } from '../models/embedding-model.ts'
import { loadDenseIndex, saveDenseIndex, type DenseIndex } from '../retrieve/dense/dense-index.ts'
import type { Retriever } from '../retrieve/retriever.ts'
import { createConfiguredEmbedder } from './create-configured-embedder.ts'
import { DenseManifestSchema, HybridManifestSchema, type DenseManifest } from './dense-manifest.ts'
import type { IndexPart, IndexPartLoadContext } from './index-store.ts'
import type { IndexedLibrary } from './indexed-library.ts'
import type { IndexManifest } from './manifest.ts'
import { LibraryHybridRetriever } from './library-hybrid-retriever.ts'
import { StoredDenseRetriever } from './stored-dense-retriever.ts'

export const DENSE_INDEX_PART: IndexPart = { save: saveDensePart, load: loadDensePart }

async function saveDensePart(indexed: IndexedLibrary, dir: string): Promise<void> {
  const entry = indexed.manifest.retrievers.dense
  if (entry === undefined) return
  const retriever = indexed.retrievers.get('dense')
  if (!(retriever instanceof StoredDenseRetriever)) {
    throw new ToolselError(
      'INTERNAL',
      `Library "${indexed.library.name}" lists a dense retriever in its manifest but holds none to save.`,
    )
  }
  await saveDenseIndex(dir, retriever.dense)
  const cacheFile = typeof entry.cacheFile === 'string' ? entry.cacheFile : undefined
  if (retriever.cache && cacheFile) await retriever.cache.save(join(dir, cacheFile))
}

async function loadDensePart(
  context: IndexPartLoadContext,
  retrievers: Map<string, Retriever>,
): Promise<void> {
  const { dir, manifest, library, config } = context
  if (manifest.retrievers.dense === undefined) return
  const entry = parseEntry(manifest, 'dense', () =>
    DenseManifestSchema.safeParse(manifest.retrievers.dense),
  )
  const settings = config.retrieve.dense
  const embedder = await createConfiguredEmbedder(settings, context.logger)
  assertSameEmbedder(manifest, entry, embedder, settings.embedder)
  const dense = await loadDenseIndex(
    dir,
    { name: library.name, embedderId: embedder.modelId, dimensions: embedder.dimensions },
    { efSearch: settings.hnsw.efSearch },
  )
  assertSameTools(dense, library, dir)
  retrievers.set(
    'dense',
    new StoredDenseRetriever({ embedder, index: dense, minScore: settings.minScore }),
  )
  if (manifest.retrievers.hybrid !== undefined) {
    parseEntry(manifest, 'hybrid', () => HybridManifestSchema.safeParse(manifest.retrievers.hybrid))
    retrievers.set('hybrid', new LibraryHybridRetriever(config, retrievers))
  }
}

function parseEntry<T>(
  manifest: IndexManifest,
  key: string,
  parse: () => { success: true; data: T } | { success: false; error: { message: string } },
): T {
  const parsed = parse()
  if (parsed.success) return parsed.data
  throw new ToolselError(
    'INDEX_CORRUPT',
    `Index "${manifest.library}": its manifest's retrievers.${key} entry is invalid (${parsed.error.message}). ${rebuildCommand(manifest, undefined)}`,
    { details: { library: manifest.library } },
  )
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
  const tools = library.tools
  if (dense.ids.length === tools.length && dense.ids.every((id, at) => id === tools[at].id)) return
  throw new ToolselError(
    'INDEX_CORRUPT',
    `Index "${library.name}" at ${dir}: its dense vectors belong to other tools than its tools file. Rebuild it.`,
    { details: { library: library.name } },
  )
}

function rebuildCommand(manifest: IndexManifest, embedder: string | undefined): string {
  const retriever = manifest.retrievers.hybrid !== undefined ? 'hybrid' : 'dense'
  const source = manifest.source.path ?? '<file>'
  const embedderFlag = embedder === undefined ? '' : ` --embedder ${embedder}`
  return `Rebuild it with: toolsel index ${source} --name ${manifest.library} --retriever ${retriever}${embedderFlag}.`
}
