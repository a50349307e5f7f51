/**
 * The contract of a retriever kind: how one kind of retriever (`bm25`, `dense`, `hybrid`, …) is
 * built for a library, described in the index manifest, saved into and loaded from an index
 * directory. One file per kind; the table in `./index.ts` lists them.
 * @module
 */
import type { Config } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'
import type { Retriever } from '../../contracts.ts'
import type { ToolLibrary } from '../../library/tool-library.ts'
import type { Logger } from '../../log.ts'
import type { EmbeddingModel } from '../../models/embedding-model.ts'
import type { ExampleSet } from '../../examples/example-set.ts'
import type { Bm25Postings, Bm25Settings } from '../../retrieve/bm25/bm25-postings.ts'
import type { IndexManifest } from '../manifest.ts'

export interface KindBuildContext {
  /** The part being built: `dense`, `dense:static:glove-100d`, … */
  part: string
  /** The text after `<kind>:` in the part's name, if any. */
  arg: string | undefined
  library: ToolLibrary
  config: Config
  /** The retrievers built so far: every kind this one `requires` is there. */
  retrievers: ReadonlyMap<string, Retriever>
  /** The embedding model for kinds that embed; default the one `retrieve.dense` configures. */
  embedder?: EmbeddingModel
  /** The index this build replaces (its caches may spare work), when there is one. */
  previousIndexDir?: string
  /**
   * The served library this build replaces, when its tools are `library` itself (a rebuild for
   * new usage examples): a kind may keep what it built from the tools alone.
   */
  previous?: { library: ToolLibrary; retrievers: ReadonlyMap<string, Retriever> }
  logger: Logger
  /** Called with (items done, total). */
  onProgress?: (done: number, total: number) => void
  signal?: AbortSignal
  /** The library's usage examples, for kinds that index them (bm25: the expansion index). */
  examples?: ExampleSet
  /**
   * The tool postings of `library` built elsewhere by the same function (an upload's import
   * worker), with `settings`: bm25 takes them when those are its settings.
   */
  bm25Postings?: { settings: Bm25Settings; postings: Bm25Postings }
}

export interface BuiltRetriever<R extends Retriever = Retriever> {
  retriever: R
  /** The kind's `retrievers.<kind>` entry in the manifest: what a load checks against. */
  entry: Record<string, unknown>
}

export interface KindLoadContext {
  /** The part being loaded (its key in the manifest's `retrievers`). */
  part: string
  /** The text after `<kind>:` in the part's name, if any. */
  arg: string | undefined
  /** The index directory. */
  dir: string
  manifest: IndexManifest
  /** This kind's manifest entry (not yet validated: the kind checks it). */
  entry: unknown
  library: ToolLibrary
  config: Config
  /** The retrievers loaded so far: every kind this one `requires` is there. */
  retrievers: ReadonlyMap<string, Retriever>
  /** Where a kind reports what it falls back on (e.g. an embedder's CUDA → CPU fallback). */
  logger?: Logger
}

export interface RetrieverKind {
  /** The name requests, config and manifests use: `bm25`, `dense`, `hybrid`. */
  readonly name: string
  /** Parts built (and loaded) before this one, e.g. the inputs of a fusion. */
  readonly requires: readonly string[]
  /**
   * Whether a part may be named `<kind>:<argument>` (dense: the embedder; hybrid: the fused
   * parts). Kinds without it are named by their kind alone.
   */
  readonly takesArgument?: boolean
  /**
   * The config values this kind's build reads (besides the tools and usage examples), as JSON
   * values: recorded in the manifest (`build.parts`) and compared by `buildsSameIndex`, so a
   * change of any of them rebuilds. Query-time settings stay out. None: nothing to compare.
   */
  buildSettings?(arg: string | undefined, config: Config): Record<string, unknown>
  /**
   * `buildSettings` keys that a saved part may lack (bm25: `tokenizerCoreProbe`, added later, and
   * `segmenterProbe`, recorded only for an index holding no-space-script terms): a saved part
   * without one compares as if it recorded the wanted value, so an upgrade rebuilds nothing by
   * itself (the load checks what can be checked; the next save records the key).
   */
  readonly settingsAddedLater?: readonly string[]
  /**
   * The build settings as the manifest records them for this built part, when they depend on what
   * was built (`entry`, the part's manifest entry); bm25 keeps `segmenterProbe` only for an index
   * holding terms cut by ICU's word breaks. None: `buildSettings` as they are.
   */
  builtSettings?(
    settings: Record<string, unknown>,
    entry: Record<string, unknown>,
  ): Record<string, unknown>
  /** The parts a part of this kind is built over, when they depend on its argument or the config. */
  inputs?(arg: string | undefined, config: Config): readonly string[]
  /**
   * Makes the part from parts the library already holds, at request time (a fusion has no files
   * of its own): a request may name one the library was not built with.
   */
  compose?(
    arg: string | undefined,
    config: Config,
    retrievers: ReadonlyMap<string, Retriever>,
  ): Retriever
  build(context: KindBuildContext): Promise<BuiltRetriever>
  /** Writes the part's files into `dir` (a fresh temporary directory). None when it has no files. */
  save?(retriever: Retriever, entry: unknown, dir: string): Promise<void>
  /** Restores the retriever, or throws INDEX_MISMATCH / INDEX_CORRUPT with the fix. */
  load(context: KindLoadContext): Promise<Retriever>
}

/** Validates a kind's manifest entry, or INDEX_CORRUPT with the rebuild command. */
export function parseEntry<T>(
  manifest: IndexManifest,
  kind: string,
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { message: string } }
  },
  entry: unknown,
): T {
  const parsed = schema.safeParse(entry)
  if (parsed.success) return parsed.data
  const source = manifest.source.path ?? '<file>'
  const built = manifest.defaultRetriever
  throw new ToolselError(
    'INDEX_CORRUPT',
    `Index "${manifest.library}": its manifest's retrievers.${kind} entry is invalid (${parsed.error.message}). Rebuild it with: toolsel index ${source} --name ${manifest.library} --retriever ${built}.`,
    { details: { library: manifest.library } },
  )
}
