/**
 * Builds the retrievers of a library in memory, each by its kind (`./kinds/`). Saving is
 * separate (index-store.ts), so the service can build from an upload, save, then swap.
 * @module
 */
import type { BuildRetriever, Config } from '../config/schema.ts'
import type { Retriever } from '../contracts.ts'
import { throwIfAborted } from '../errors.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { SILENT_LOGGER, type Logger } from '../log.ts'
import type { EmbeddingModel } from '../models/embedding-model.ts'
import type { ExampleSet } from '../examples/example-set.ts'
import { learnLibraryExamples } from '../examples/library-examples.ts'
import { assertKnownToolsSliced } from '../examples/usage-example.ts'
import { examplesManifest } from './examples-part.ts'
import type { IndexedLibrary } from './indexed-library.ts'
import { buildSettingsOf, splitPartList, withRequirements } from './kinds/index.ts'
import type { KindBuildContext } from './kinds/retriever-kind.ts'
import { INDEX_FORMAT_VERSION, TOOLS_FILE, type IndexManifest } from './manifest.ts'

export interface BuildProgress {
  stage: string
  done: number
  total: number
}

export interface BuildIndexOptions {
  /** Where the tools came from (recorded in the manifest for rebuild messages). */
  source?: { path?: string; format?: string; fingerprint?: string }
  onProgress?: (progress: BuildProgress) => void
  signal?: AbortSignal
  /**
   * Which retriever parts to build, a comma list, each with the parts it requires and `bm25`
   * (always built): `bm25`, `dense` (+ dense), `hybrid` (+ dense + their fusion),
   * `dense:static:glove-100d` (+ dense vectors of that embedder), or any registered kind. The
   * first becomes the manifest's `defaultRetriever`. Default `retrieve.build`.
   */
  retriever?: BuildRetriever
  /**
   * The index this build replaces (normally `<indexDir>/<library>`): the vectors of tools whose
   * content did not change are taken from its `embeddings.cache` instead of being re-embedded.
   */
  previousIndexDir?: string
  /**
   * The served library this build replaces: when its tools are this build's library (the same
   * object), kinds keep what they built from the tools alone (bm25: its tool postings).
   */
  previous?: IndexedLibrary
  /** The embedding model for dense; default the one `retrieve.dense` configures. */
  embedder?: EmbeddingModel
  /** Receives warnings (e.g. an embedder's CUDA → CPU fallback). */
  logger?: Logger
  /**
   * The library's usage examples: stored with the index, indexed by the bm25 kind as each tool's
   * expansion document and served as the nearest-example memory. Every tool id must be in the
   * library (INVALID_INPUT names the unknown ones).
   */
  examples?: ExampleSet
  /** The tools' BM25 postings built by an upload's import worker (see `KindBuildContext`). */
  bm25Postings?: KindBuildContext['bm25Postings']
}

export async function buildIndexedLibrary(
  library: ToolLibrary,
  config: Config,
  options: BuildIndexOptions = {},
): Promise<IndexedLibrary> {
  const examples = options.examples
  if (examples) {
    await assertKnownToolsSliced(
      library.name,
      examples.examples,
      (id) => library.has(id),
      options.signal,
    )
  }
  const wanted = splitPartList(options.retriever ?? config.retrieve.build)
  const parts = withRequirements(wanted, config)
  const retrievers = new Map<string, Retriever>()
  const entries: Record<string, Record<string, unknown>> = {}
  for (const { name, kind, arg } of parts) {
    const built = await kind.build({
      part: name,
      arg,
      library,
      config,
      retrievers: new Map(retrievers),
      embedder: options.embedder,
      previousIndexDir: options.previousIndexDir,
      ...(options.previous?.library === library && { previous: options.previous }),
      logger: options.logger ?? SILENT_LOGGER,
      onProgress: (done, total) => options.onProgress?.({ stage: name, done, total }),
      signal: options.signal,
      examples,
      bm25Postings: options.bm25Postings,
    })
    throwIfAborted(options.signal)
    retrievers.set(name, built.retriever)
    entries[name] = built.entry
  }
  // Every tool hashed in slices (an upload of 90k tools: 0.9 s in one piece), cached for the getter.
  await library.contentHashSliced(options.signal)
  const manifest: IndexManifest = {
    formatVersion: INDEX_FORMAT_VERSION,
    library: library.name,
    toolCount: library.size,
    contentHash: library.contentHash,
    createdAt: new Date().toISOString(),
    source: options.source ?? {},
    toolsFile: TOOLS_FILE,
    defaultRetriever: wanted[0] ?? 'bm25',
    retrievers: entries as IndexManifest['retrievers'],
    build: buildSettingsOf(parts, config, entries),
    ...(examples &&
      examples.version > 0 && { examples: await examplesManifest(examples, options.signal) }),
  }
  const libraryExamples =
    examples && examples.version > 0
      ? await learnLibraryExamples(examples, library, config.examples, { signal: options.signal })
      : undefined
  return { library, manifest, retrievers, ...(libraryExamples && { examples: libraryExamples }) }
}
