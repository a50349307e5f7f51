/**
 * Builds the retrievers of a library in memory. Saving is separate (index-store.ts), so the
 * service can build from an upload, save, then swap.
 * @module
 */
import type { BuildRetriever, Config } from '../config/schema.ts'
import { throwIfAborted } from '../errors.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import type { Logger } from '../log.ts'
import type { EmbeddingModel } from '../models/embedding-model.ts'
import type { ExampleSet } from '../examples/example-set.ts'
import { exampleExpansions } from '../examples/example-expansion.ts'
import { createLibraryExamples } from '../examples/library-examples.ts'
import { assertKnownTools } from '../examples/usage-example.ts'
import {
  Bm25Retriever,
  type Bm25QueryOptions,
  type Bm25Settings,
} from '../retrieve/bm25/bm25-retriever.ts'
import { TOKENIZER_VERSION } from '../retrieve/bm25/tokenize.ts'
import type { Retriever } from '../retrieve/retriever.ts'
import { buildDensePart } from './build-dense-part.ts'
import { examplesManifest } from './examples-part.ts'
import type { IndexedLibrary } from './indexed-library.ts'
import {
  BM25_EXAMPLES_FILE,
  BM25_FILE,
  INDEX_FORMAT_VERSION,
  TOOLS_FILE,
  type IndexManifest,
} from './manifest.ts'

export interface BuildProgress {
  stage: string
  done: number
  total: number
}

export interface BuildIndexOptions {
  /** Where the tools came from (recorded in the manifest for rebuild messages). */
  source?: { path?: string; format?: string }
  onProgress?: (progress: BuildProgress) => void
  signal?: AbortSignal
  /**
   * Which retrievers to build: `bm25` (always built), `dense` (+ dense), `hybrid` (+ dense +
   * their fusion). It becomes the manifest's `defaultRetriever`. Default `retrieve.build`.
   */
  retriever?: BuildRetriever
  /**
   * The index this build replaces (normally `<indexDir>/<library>`): the vectors of tools whose
   * content did not change are taken from its `embeddings.cache` instead of being re-embedded.
   */
  previousIndexDir?: string
  /** The embedding model for dense; default the one `retrieve.dense` configures. */
  embedder?: EmbeddingModel
  /** Receives warnings (e.g. an embedder's CUDA → CPU fallback). */
  logger?: Logger
  /**
   * The library's usage examples: stored with the index, indexed as each tool's `examples` BM25
   * field and served as the nearest-example memory. Every tool id must be in the library
   * (INVALID_INPUT names the unknown ones).
   */
  examples?: ExampleSet
}

export function bm25Settings(config: Config): Bm25Settings {
  const { k1, b, fieldWeights } = config.retrieve.bm25
  return { k1, b, fieldWeights: { ...fieldWeights } }
}

export function bm25QueryOptions(config: Config): Bm25QueryOptions {
  return {
    defaultMinScore: config.retrieve.bm25.tau,
    expandHeadVerbs: config.retrieve.bm25.expandHeadVerbs,
  }
}

export async function buildIndexedLibrary(
  library: ToolLibrary,
  config: Config,
  options: BuildIndexOptions = {},
): Promise<IndexedLibrary> {
  const settings = bm25Settings(config)
  const examples = options.examples
  if (examples) assertKnownTools(library.name, examples.examples, (id) => library.has(id))
  const bm25 = Bm25Retriever.build(library.tools, settings, {
    signal: options.signal,
    onProgress: (done, total) => options.onProgress?.({ stage: 'bm25', done, total }),
    expansions:
      examples && examples.size > 0
        ? exampleExpansions(
            examples.examples,
            config.retrieve.bm25.examplesPerTool,
            config.retrieve.bm25.examplesMinPerTool,
          )
        : undefined,
  }).withQueryOptions(bm25QueryOptions(config))
  throwIfAborted(options.signal)
  const manifest: IndexManifest = {
    formatVersion: INDEX_FORMAT_VERSION,
    library: library.name,
    toolCount: library.size,
    contentHash: library.contentHash,
    createdAt: new Date().toISOString(),
    source: options.source ?? {},
    toolsFile: TOOLS_FILE,
    defaultRetriever: 'bm25',
    retrievers: {
      bm25: {
        tokenizerVersion: TOKENIZER_VERSION,
        ...settings,
        file: BM25_FILE,
        ...(examples && examples.size > 0 && { examplesFile: BM25_EXAMPLES_FILE }),
      },
    },
    ...(examples && examples.version > 0 && { examples: examplesManifest(examples) }),
  }
  const retrievers = new Map<string, Retriever>([['bm25', bm25]])
  const kind = options.retriever ?? config.retrieve.build
  if (kind !== 'bm25') {
    const dense = await buildDensePart(library, config, bm25, {
      retriever: kind,
      embedder: options.embedder,
      previousIndexDir: options.previousIndexDir,
      logger: options.logger,
      onProgress: (done, total) => options.onProgress?.({ stage: 'dense', done, total }),
      signal: options.signal,
    })
    for (const [name, retriever] of dense.retrievers) retrievers.set(name, retriever)
    Object.assign(manifest.retrievers, dense.manifest)
    manifest.defaultRetriever = kind
  }
  const libraryExamples =
    examples && examples.version > 0 ? createLibraryExamples(examples) : undefined
  return { library, manifest, retrievers, ...(libraryExamples && { examples: libraryExamples }) }
}
