/**
 * What the HTTP routes, the MCP tools, the CLI and the benchmark share: the loaded libraries,
 * the components, and the operations on them. No HTTP here. Every selection goes through
 * `resolve()` and `selectTools()` here; nothing else calls the pipeline.
 * @module
 */
import { hostDir, pathFreeError, withoutHostPaths, type HostPath } from './host-paths.ts'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Components } from '../components.ts'
import type { BuildRetriever, Config } from '../config/schema.ts'
import { isToolselError, throwIfAborted, ToolselError } from '../errors.ts'
import { retrieveOptions, type AbortInput } from '../lazy-abort.ts'
import {
  type ImportFormat,
  type ImportSummary,
  type OnDuplicate,
  type ProviderNames,
} from '../library/importers/index.ts'
import { oneLineDescription, type Tool } from '../library/tool.ts'
import {
  assertLibraryName,
  LIBRARY_NAME_PATTERN,
  type ToolLibrary,
} from '../library/tool-library.ts'
import { withFields, type Logger } from '../log.ts'
import { ExampleSet, normalizeEach, type ExampleSetChange } from '../examples/example-set.ts'
import { assertKnownToolsSliced, type UsageExample } from '../examples/usage-example.ts'
import { runStepsSliced } from '../time-slicer.ts'
import { selectTools, type SelectToolsResult } from '../pipeline.ts'
import { ModelHealth } from './model-health.ts'
import { prepareExampleMemory } from '../examples/memory-selection.ts'
import {
  deleteIndex,
  importUploadedLibrary,
  publishLibrary,
  rebuildLibrary,
  type IndexedLibrary,
} from '../store/library-lifecycle.ts'
import { MANIFEST_FILE } from '../store/manifest.ts'
import { writeSnapshot, type SnapshotManifest } from '../store/snapshot.ts'
import { droppedPartsWarning } from '../store/dropped-parts.ts'
import { holding, LibraryRegistry } from './library-registry.ts'
import { failedIndex, loadStartupLibraries, type FailedIndex } from './load-libraries.ts'
import {
  resolveRequest,
  resolveRetrieval,
  type PipelineRequest,
  type ResolvedRequest,
  type ResolvedRetrieval,
} from './resolve-request.ts'
import { shownNames } from '../library/name-characters.ts'

export type { PipelineRequest, ResolvedRequest, ResolvedRetrieval } from './resolve-request.ts'
export type { FailedIndex } from './load-libraries.ts'

export interface SelectRequest extends PipelineRequest {
  instruction: string
  /** Return each candidate's features (`steps[].candidates[].features`) when the selector has them. */
  explain?: boolean
}

export interface SearchRequest extends Pick<PipelineRequest, 'library' | 'k' | 'retriever'> {
  query: string
}

export interface SearchResult {
  library: string
  /** Name of the retriever that answered. */
  retriever: string
  results: SearchHit[]
}

export interface SearchHit {
  id: string
  name: string
  /** First sentence of the description: enough to choose, cheap in tokens. */
  description: string
  score: number
}

export interface LibrarySummary {
  name: string
  toolCount: number
  contentHash: string
  createdAt: string
  retrievers: string[]
  defaultRetriever: string
  persisted: boolean
  isDefault: boolean
  /** The library's usage examples: how many, their version (+1 per change) and the cap. */
  examples: { count: number; version: number; cap: number }
}

export interface AddExamplesResult extends ExampleSetChange {
  library: string
  /** Examples the library holds now. */
  examples: number
  /** The examples' version after this call (unchanged when nothing was added). */
  version: number
}

/** How `addExamples` applies one write (each entry of a batch keeps its own). */
export interface AddExamplesOptions {
  signal?: AbortSignal
  /**
   * Called at the commit point of the rebuild that would save this write (just before the
   * index is renamed into place); throw to leave this write out. The HTTP routes use it so
   * that a request already answered with an error (timeout, client gone) is never saved, even
   * when other writes of its batch are.
   */
  beforeCommit?: () => void
  /** The request's id (`x-request-id`), for the log lines this write causes. */
  requestId?: string
  /**
   * What an unknown tool id's message says named it, with its verb ("Usage examples name" by
   * default; `POST /v1/feedback` says "The feedback's `used` names").
   */
  subject?: string
}

/**
 * The service: loaded libraries, components, and the operations on them.
 *
 * @example
 * ```ts
 * const config = defaultConfig()
 * const service = new ToolselService(config, createLogger('warn'), createComponents(config, logger))
 * await service.start() // loads library.default (the demo) and the default components
 * const result = await service.select({ instruction: 'text Sam the forecast', k: 5 })
 * result.tools.map((tool) => tool.id) // ['weather.get_forecast', 'sms.send_sms']
 * ```
 */
export class ToolselService {
  readonly config: Config
  readonly logger: Logger
  readonly components: Components
  readonly libraries: LibraryRegistry
  #ready = false
  readonly #writes = new Map<string, Promise<unknown>>()
  /**
   * Aborted when a stopping server gives up on the library writes still under way
   * (`settleWrites`): their imports, builds and index writes stop, their staged files go.
   */
  readonly #stopWrites = new AbortController()
  /**
   * Each library write's own stop, aborted with `#stopWrites` (settleWrites) and dropped when the
   * write settles (`#writeStop`).
   */
  readonly #writeStops = new Map<AbortController, WriteKind>()
  /** Every library write (upload, usage examples, delete, snapshot) called and not settled yet. */
  readonly #pendingWrites = new Set<PendingWrite>()
  /** Per library, the example writes waiting for the write in progress (see `addExamples`). */
  readonly #exampleBatches = new Map<string, ExampleBatch>()
  readonly #selectListeners = new Set<(result: SelectToolsResult) => void>()
  /**
   * The model-backed planners and selectors whose latest use fell back (`/readyz` `degraded`,
   * `toolsel_model_degraded`): this process's selections; a worker of `--workers N` every
   * worker's (the primary's list, service/cluster-model-health.ts).
   */
  readonly modelHealth = new ModelHealth()
  /**
   * Saved indexes that failed to load (`/readyz` lists them): skipped at start-up, or committed
   * later by another process (service/index-dir-watch.ts; the previous version stays served).
   */
  readonly failedIndexes: FailedIndex[] = []
  /**
   * A worker of `serve --workers N`: every worker's failed indexes (the primary's union,
   * service/cluster-sync.ts), reported instead of this process's own so that all answer alike.
   */
  sharedFailedIndexes: readonly FailedIndex[] | undefined

  /**
   * The failed indexes `/readyz` and the metrics report: the shared list and this process's own
   * (which the shared one holds once the primary has had this process's report: until then,
   * one IPC round trip, the own failures are listed anyway), else this process's.
   */
  get reportedFailedIndexes(): readonly FailedIndex[] {
    const shared = this.sharedFailedIndexes
    if (shared === undefined) return this.failedIndexes
    const own = this.failedIndexes.filter(
      (failed) => !shared.some((one) => one.name === failed.name),
    )
    if (own.length === 0) return shared
    return [...shared, ...own].sort((one, other) => one.name.localeCompare(other.name))
  }

  /**
   * Library `name` saved under `indexDir` failed to load with `error` (listed in `failedIndexes`,
   * without this host's paths: `failedIndex`), or (no `error`) loaded (no longer listed).
   */
  async recordIndexLoad(name: string, indexDir: string, error?: unknown): Promise<void> {
    const at = this.failedIndexes.findIndex((failed) => failed.name === name)
    if (at !== -1) this.failedIndexes.splice(at, 1)
    if (error !== undefined) this.failedIndexes.push(await failedIndex(name, error, indexDir))
  }
  #unsyncedCommits = 0
  /** Whether a snapshot is being written (`snapshot`: one at a time). */
  #snapshotting = false

  constructor(config: Config, logger: Logger, components: Components) {
    this.config = config
    this.logger = logger
    this.components = components
    // The example memory's preparation (self-check, co-occurrence, word pairs:
    // examples/memory-selection.ts) is done before a version is installed, not on the first
    // request that reads it: in slices while the version is built or loaded
    // (`learnLibraryExamples`), so the hook below finds it cached; it runs here in one piece only
    // for a version nothing prepared. A replaced version's tools file stays open while a request
    // or an upload's build may still read the old version.
    const { requestTimeoutMs, buildTimeoutMs } = config.server
    this.libraries = new LibraryRegistry({
      prepare: (indexed) => prepareExampleMemory(indexed.examples, config.examples),
      releaseGraceMs: Math.max(requestTimeoutMs, buildTimeoutMs) + 60_000,
      notLoadedHint: (name) => savedButNotLoaded(config.library.indexDir, name),
    })
  }

  get ready(): boolean {
    return this.#ready
  }

  /**
   * Writes (uploads, usage examples, deletes, snapshots) committed and served whose directory
   * could not be flushed to the disk afterwards: they may not survive a crash of the machine
   * (`toolsel_unsynced_commits_total` in `/metrics`; each is also a logged warning).
   */
  get unsyncedCommits(): number {
    return this.#unsyncedCommits
  }

  /** A committed write whose flush failed: counted and logged (see `unsyncedCommits`). */
  readonly #warnUnsynced = (warning: string, logger: Logger = this.logger): void => {
    this.#unsyncedCommits += 1
    logger.warn(warning)
  }

  /**
   * The logger for the lines a request's write causes: with its `requestId` (`requestIds` for a
   * batch of several), as its access-log line has it.
   */
  #requestLogger(ids: ReadonlyArray<string | undefined>): Logger {
    const known = ids.filter((id): id is string => id !== undefined)
    if (known.length === 0) return this.logger
    return withFields(
      this.logger,
      known.length === 1 ? { requestId: known[0] } : { requestIds: known },
    )
  }

  get defaultLibraryName(): string {
    return this.#defaultName ?? this.config.library.default
  }

  #defaultName: string | undefined

  /**
   * Loads the start-up libraries (or takes `preloaded` ones, the first being the default) and the
   * default components; the service is ready after it, and after `beforeReady` (a worker of
   * `serve --workers N` reconciles what it loaded with the disk then: service/cluster-sync.ts).
   * `asSavedDemo` and `onDefaultLoaded`: as `loadStartupLibraries` takes them.
   */
  async start(
    preloaded?: IndexedLibrary[],
    options: {
      beforeReady?: () => Promise<void>
      asSavedDemo?: boolean
      onDefaultLoaded?: () => void
    } = {},
  ): Promise<void> {
    const loaded =
      preloaded ??
      (await loadStartupLibraries(
        this.config,
        this.logger,
        (failed) => this.failedIndexes.push(failed),
        { asSavedDemo: options.asSavedDemo, onDefaultLoaded: options.onDefaultLoaded },
      ))
    for (const indexed of loaded) this.libraries.set(indexed)
    this.#defaultName = loaded[0].library.name
    this.components.planner()
    this.components.selector()
    await this.components.ready()
    await options.beforeReady?.()
    this.#ready = true
  }

  library(name?: string): IndexedLibrary {
    return this.libraries.require(name ?? this.defaultLibraryName)
  }

  /**
   * The pipeline options for a request: its library (or `target`, a library the caller holds,
   * such as an MCP client's scoped view or a benchmark split), components, k and threshold.
   */
  resolve(request: PipelineRequest, target?: IndexedLibrary): ResolvedRequest {
    return resolveRequest(request, target ?? this.library(request.library), this)
  }

  /** The retrieval half of `resolve()`: creates no planner, reranker or selector. */
  resolveRetrieval(request: PipelineRequest, target?: IndexedLibrary): ResolvedRetrieval {
    return resolveRetrieval(request, target ?? this.library(request.library), this)
  }

  /** `signal`: an AbortSignal, or a LazyAbort whose signal is made only if a component reads it. */
  async select(
    request: SelectRequest,
    signal?: AbortInput,
    target?: IndexedLibrary,
  ): Promise<SelectToolsResult> {
    const { indexed, ...resolved } = this.resolve(request, target)
    const result = await holding(indexed, () =>
      selectTools(request.instruction, {
        library: indexed.library,
        ...resolved,
        explain: request.explain,
        signal,
      }),
    )
    this.modelHealth.observe(result)
    for (const listener of this.#selectListeners) listener(result)
    return result
  }

  /** Calls `listener` after every selection (HTTP, MCP, CLI), e.g. to record stage timings. */
  onSelect(listener: (result: SelectToolsResult) => void): () => void {
    this.#selectListeners.add(listener)
    return () => this.#selectListeners.delete(listener)
  }

  /**
   * `signal`: an AbortSignal, or a LazyAbort. A synchronous retriever (BM25) gets no signal (the
   * abort is checked right before it runs), so a LazyAbort's is then never made.
   */
  async search(
    request: SearchRequest,
    signal?: AbortInput,
    target?: IndexedLibrary,
  ): Promise<SearchResult> {
    const { indexed, retriever, k } = this.resolveRetrieval(request, target)
    return holding(indexed, async () => {
      // Search is for an agent browsing the library: no threshold, just the k best matches.
      throwIfAborted(signal)
      const candidates = await retriever.retrieve(
        request.query,
        retrieveOptions(retriever.synchronous, signal, { k, minScore: Number.NEGATIVE_INFINITY }),
      )
      const results = candidates.map(({ id, score }) => {
        const tool = indexed.library.require(id)
        return { id, name: tool.name, description: oneLineDescription(tool.description), score }
      })
      return { library: indexed.library.name, retriever: retriever.name, results }
    })
  }

  /**
   * Full tools by id, in request order, each once; UNKNOWN_TOOL names every missing id, and the ids they may
   * have meant (a tool name, a provider name) among those `visible` lets through.
   */
  getTools(
    libraryName: string | undefined,
    ids: string[],
    visible?: (id: string) => boolean,
  ): Tool[] {
    const { library } = this.library(libraryName)
    // A repeated id is answered once, as get_tool_schemas does: 100 copies of one tool's id (1.2
    // MB of schema, within the import limits) made one answer of 120 MB, 3.7 s of the event loop
    // in JSON.stringify for any client that may read the library (bench/README round 22).
    const distinct = [...new Set(ids)]
    library.assertAnswerBytes(distinct)
    const missing = distinct.filter((id) => !library.has(id))
    if (missing.length > 0) {
      throw new ToolselError(
        'UNKNOWN_TOOL',
        `Library "${library.name}" has no tool ${shownNames(missing)}.${library.unknownIdsHint(missing, visible)}`,
        {
          details: { library: library.name, ids: missing },
        },
      )
    }
    return distinct.map((id) => library.require(id))
  }

  listLibraries(): LibrarySummary[] {
    return this.libraries.all().map((indexed) => ({
      name: indexed.library.name,
      toolCount: indexed.library.size,
      contentHash: indexed.library.contentHash,
      createdAt: indexed.manifest.createdAt,
      retrievers: [...indexed.retrievers.keys()],
      defaultRetriever: indexed.manifest.defaultRetriever,
      persisted: indexed.dir !== undefined,
      isDefault: indexed.library.name === this.defaultLibraryName,
      examples: {
        count: indexed.examples?.set.size ?? 0,
        version: indexed.examples?.set.version ?? 0,
        cap: indexed.examples?.set.cap ?? this.config.library.maxExamples,
      },
    }))
  }

  /**
   * Adds usage examples to a library (`POST /v1/libraries/:library/examples`, and one at a time
   * from `POST /v1/feedback`): unknown tool ids are refused (INVALID_INPUT names them), duplicates
   * skipped, the oldest dropped beyond `library.maxExamples`. When something was added, the index
   * is rebuilt with them, saved atomically under `library.indexDir` (a library loaded from a tool
   * file becomes a saved index, so its examples survive restarts) and swapped in. Writes that
   * arrive while one is being built are applied together by the next rebuild; each gets its own
   * change counts and the version and count the library has after that rebuild.
   */
  async addExamples(
    name: string,
    examples: readonly UsageExample[],
    options: AddExamplesOptions = {},
  ): Promise<AddExamplesResult> {
    return this.#tracked(
      this.#withoutHostPaths(
        () => this.#addExamples(name, examples, options),
        this.#requestLogger([options.requestId]),
      ),
    )
  }

  #addExamples(
    name: string,
    examples: readonly UsageExample[],
    options: AddExamplesOptions,
  ): Promise<AddExamplesResult> {
    assertLibraryName(name)
    // Writes that arrive while another write to the library is being built wait for it and are
    // then applied together, in arrival order, by one rebuild (a burst of feedback costs one
    // rebuild, not one each); a write queued behind an upload or a delete is not moved before it.
    const queued = this.#exampleBatches.get(name)
    if (queued && this.#writes.get(name) === queued.settled) {
      return new Promise((resolve, reject) =>
        queued.entries.push({ examples, ...options, resolve, reject }),
      )
    }
    const batch: ExampleBatch = { entries: [], settled: undefined }
    const first = new Promise<AddExamplesResult>((resolve, reject) =>
      batch.entries.push({ examples, ...options, resolve, reject }),
    )
    this.#exampleBatches.set(name, batch)
    const run = this.#serialise(name, async () => {
      // From here on the batch is closed: later writes start the next one.
      if (this.#exampleBatches.get(name) === batch) this.#exampleBatches.delete(name)
      await this.#applyExamples(name, batch.entries)
    })
    batch.settled = this.#writes.get(name)
    // Not started (a stopping server abandoned the writes): its writes fail with that, and no
    // later one joins them.
    void run.catch((error: unknown) => {
      if (this.#exampleBatches.get(name) === batch) this.#exampleBatches.delete(name)
      for (const entry of batch.entries) entry.reject(error)
    })
    return first
  }

  /**
   * Applies a batch of example writes: each entry is checked and added in order (an entry with
   * unknown tool ids or an aborted request fails alone), then, when something was added, the
   * index is rebuilt once, saved and swapped in, and every entry gets the library's new state.
   * At the commit point every entry's `beforeCommit` is asked: an entry whose request was answered
   * with an error meanwhile (timeout, client gone) is left out, and when others remain the index
   * is rebuilt once more without it, so nothing is saved for a client that got an error (the
   * others have claimed their commit then and can't drop out of the second rebuild).
   */
  async #applyExamples(name: string, entries: readonly ExampleBatchEntry[]): Promise<void> {
    let live: Array<{ entry: ExampleBatchEntry; change: ExampleSetChange }> = []
    try {
      const indexed = this.libraries.require(name)
      const start = (indexed.examples?.set ?? ExampleSet.empty()).withCap(
        this.config.library.maxExamples,
      )
      let pending: readonly ExampleBatchEntry[] = entries
      // Each entry's examples normalised and keyed in slices (normalizeEach), kept for a rebuild
      // without abandoned requests: in one piece inside withEach, 10,000 instructions of 2,000
      // characters held the event loop 0.3-0.8 s (round 48, hard52).
      const normalized = new Map<ExampleBatchEntry, UsageExample[]>()
      for (;;) {
        live = []
        const accepted: ExampleBatchEntry[] = []
        for (const entry of pending) {
          try {
            throwIfAborted(entry.signal)
            // In slices: 10,000 examples held a turn ~39 ms under the profiler in one piece
            // (round 55, perf17).
            await assertKnownToolsSliced(
              name,
              entry.examples,
              (id) => indexed.library.has(id),
              entry.signal,
              (unknown) => indexed.library.unknownIdsHint(unknown),
              entry.subject,
            )
            if (!normalized.has(entry))
              normalized.set(
                entry,
                await runStepsSliced(normalizeEach(entry.examples), entry.signal),
              )
            accepted.push(entry)
          } catch (error) {
            entry.reject(error)
          }
        }
        if (accepted.length === 0) return
        // The batch's writes in order, the set copied once (not once per write: withEach), in
        // slices: 10,000 examples held a turn ~11 ms in one piece (round 55, perf17).
        const { set, changes } = await runStepsSliced(
          start.withEachSteps(
            accepted.map((entry) => normalized.get(entry)!),
            { normalized: true },
          ),
        )
        live = accepted.map((entry, at) => ({ entry, change: changes[at] }))
        const finish = (version: number, count: number) => {
          for (const { entry, change } of live)
            entry.resolve({ library: name, ...change, examples: count, version })
        }
        if (set === start && (start === indexed.examples?.set || start.size === 0)) {
          finish(set.version, set.size)
          return
        }
        // The rebuild stops only when every request waiting on it is gone (or the server stops).
        const stop = this.#writeStop(allAborted(live.map(({ entry }) => entry.signal)))
        const logger = this.#requestLogger(live.map(({ entry }) => entry.requestId))
        const dropped = new Map<ExampleBatchEntry, unknown>()
        try {
          const rebuilt = await holding(indexed, () =>
            rebuildLibrary(indexed, this.config, { logger, signal: stop.signal, examples: set }),
          )
          await publishLibrary(this.libraries, rebuilt, {
            indexDir: this.config.library.indexDir,
            signal: stop.stopped,
            onUnsynced: (warning) => this.#warnUnsynced(warning, logger),
            beforeCommit: () => {
              for (const { entry } of live) {
                try {
                  throwIfAborted(entry.signal)
                  entry.beforeCommit?.()
                } catch (error) {
                  dropped.set(entry, error)
                }
              }
              if (dropped.size > 0) throw [...dropped.values()][0]
            },
          })
        } catch (error) {
          if (dropped.size === 0) throw error
          // Written for nobody or for fewer writes than were asked at the commit point: not saved.
          for (const [entry, reason] of dropped) entry.reject(reason)
          live = live.filter(({ entry }) => !dropped.has(entry))
          if (live.length === 0) return
          pending = live.map(({ entry }) => entry)
          logger.info(`Library "${name}": usage-example write rebuilt without abandoned requests`, {
            dropped: dropped.size,
            writes: pending.length,
          })
          continue
        } finally {
          stop.release()
        }
        const total = (key: 'added' | 'duplicates' | 'evicted') =>
          live.reduce((sum, { change }) => sum + change[key], 0)
        logger.info(`Library "${name}": usage examples updated`, {
          writes: live.length,
          added: total('added'),
          duplicates: total('duplicates'),
          evicted: total('evicted'),
          examples: set.size,
          version: set.version,
        })
        finish(set.version, set.size)
        return
      }
    } catch (error) {
      for (const { entry } of live) entry.reject(error)
      if (live.length === 0) for (const entry of entries) entry.reject(error)
    }
  }

  /**
   * Imports `text` (any supported format; UTF-8 bytes or a string), builds the index, saves it
   * atomically, then swaps it in. Writes to one name are serialised; requests keep being served
   * from the old library until the swap. A large `text` is imported in a worker thread
   * (`server.importWorkerMinChars`); bytes are then handed over to it (`text` is left empty).
   */
  async putLibrary(
    name: string,
    text: string | Uint8Array,
    options: {
      format?: ImportFormat
      namespace?: string
      fileName?: string
      /** Two records with one id: error (default), rename, first or last. */
      onDuplicate?: OnDuplicate
      /** Tool names toolsel wrote (`sms--send_sms`): read back as ids (decode, default) or keep. */
      providerNames?: ProviderNames
      /** Retriever parts to build, a comma list (`bm25`, `hybrid`, `bm25,dense:use-lite`). Default `retrieve.build`. */
      retriever?: BuildRetriever
      /**
       * The library's usage examples: `keep` (default) carries the current ones over, without the
       * tool ids the new tools lack (examples left with no tool are dropped); `drop` clears them.
       */
      examples?: 'keep' | 'drop'
      /**
       * Build and save even when the upload would make the saved index again (the same tools,
       * source, parts, build settings and examples; see `buildsSameIndex`).
       */
      rebuild?: boolean
      signal?: AbortSignal
      /**
       * Called just before the new index is committed (renamed into place, then served); throw
       * to abandon the upload. The HTTP route uses it so that a request answered with an error
       * (timeout, client gone) never commits.
       */
      beforeCommit?: () => void
      /** The request's id (`x-request-id`), for the log lines this upload causes. */
      requestId?: string
    } = {},
  ): Promise<{
    summary: LibrarySummary
    created: boolean
    /** True when the saved index already held this upload: nothing was built or written. */
    unchanged: boolean
    warnings: string[]
    import: ImportSummary
  }> {
    assertLibraryName(name)
    const logger = this.#requestLogger([options.requestId])
    // The request's, or the server's stop (settleWrites).
    const stop = this.#writeStop(options.signal)
    const { signal } = stop
    const put = this.#serialise(name, async () => {
      const warnings: string[] = []
      const indexDir = join(this.config.library.indexDir, name)
      const current = this.libraries.get(name)
      // Only an index saved where this upload would save it can stand for it.
      const saved =
        current?.dir !== undefined && resolve(current.dir) === resolve(indexDir)
          ? current
          : undefined
      const uploaded = await importUploadedLibrary(
        {
          text,
          format: options.format,
          namespace: options.namespace,
          fileName: options.fileName,
          onDuplicate: options.onDuplicate,
          providerNames: options.providerNames,
        },
        name,
        this.config,
        {
          signal,
          retriever: options.retriever,
          // The index being replaced: its embedding cache spares re-embedding unchanged tools.
          previousIndexDir: indexDir,
          logger,
          prepare: (library) => ({ examples: this.#carriedExamples(library, options, warnings) }),
          unchangedFrom: options.rebuild === true ? undefined : saved,
        },
      )
      const { summary } = uploaded
      warnings.unshift(...uploaded.warnings)
      throwIfAborted(signal)
      if (uploaded.unchanged) {
        logger.info(`Library "${name}" unchanged: the saved index holds these tools`, {
          tools: summary.tools,
        })
        const listed = this.listLibraries().find((entry) => entry.name === name)!
        return { summary: listed, created: false, unchanged: true, warnings, import: summary }
      }
      const { indexed, toolsIndex } = uploaded
      // Built with the parts asked for: say which parts of the replaced index it lacks.
      const lost = droppedPartsWarning(name, current?.manifest, indexed.manifest, '?retriever=')
      if (lost !== undefined) warnings.push(lost)
      if (uploaded.damaged !== undefined) {
        // The detail (paths of this host) goes to the log only.
        logger.warn(
          `Library "${name}": the served index holds these tools but its copy on disk is not that save (${uploaded.damaged}); saving it again`,
        )
      }
      // Created or replaced as the disk says at the commit (under the library's lock): another
      // process's commit or delete may have come in since this one read what it serves. A library
      // served from elsewhere (the demo, a tool file) that this first saves here is replaced.
      let replacedSaved = false
      await publishLibrary(this.libraries, indexed, {
        indexDir: this.config.library.indexDir,
        toolsIndex,
        signal: stop.stopped,
        onCommit: (_dir, replaced) => {
          replacedSaved = replaced
        },
        // Saved and served: the client hears success, told that it may not survive a crash.
        onUnsynced: (warning) => {
          this.#warnUnsynced(warning, logger)
          warnings.push(withoutHostPaths(warning, this.#hostPaths()))
        },
        beforeCommit: () => {
          throwIfAborted(options.signal)
          options.beforeCommit?.()
        },
      })
      // Created: no save was replaced, and nothing of that name was served from elsewhere (a
      // save served here but deleted meanwhile is created again).
      const servedFromElsewhere = current !== undefined && saved === undefined
      const created = !servedFromElsewhere && !replacedSaved
      if (uploaded.damaged !== undefined) {
        // Said as the commit found the disk: nothing saved any more is not a damaged save.
        warnings.push(
          replacedSaved
            ? `The saved index of library "${name}" held these tools but its files did not load (damaged or replaced on disk); it was built and saved again.`
            : `The saved index of library "${name}" was no longer on disk (deleted since this service loaded it); it was built and saved again.`,
        )
      }
      logger.info(`Library "${name}" ${created ? 'created' : 'replaced'}`, {
        tools: indexed.library.size,
      })
      if (lost !== undefined) logger.warn(lost)
      const listed = this.listLibraries().find((entry) => entry.name === name)!
      return { summary: listed, created, unchanged: false, warnings, import: summary }
    }).finally(stop.release)
    return this.#tracked(this.#withoutHostPaths(() => put, logger))
  }

  /**
   * Writes a snapshot of every saved library as it is served now into a new directory under
   * `library.snapshotDir` (named by the time; see `store/snapshot.ts`). Libraries that were
   * never saved (the embedded demo, the gateway library, tool files) are not included. The
   * answer names it by `name` only (relative to `library.snapshotDir`): like every error of it,
   * an HTTP answer holds no path of this host. The log names the whole directory. One at a time
   * (round 55): each copies every saved library, so a second asked for while one is written is
   * RATE_LIMITED (429) at once, and may be asked for again when the first has ended.
   */
  async snapshot(
    options: {
      /** The request's id (`x-request-id`), for the log lines this snapshot causes. */
      requestId?: string
    } = {},
  ): Promise<SnapshotManifest & { name: string }> {
    if (this.#snapshotting) {
      throw new ToolselError(
        'RATE_LIMITED',
        'A snapshot is being written already: one at a time (each copies every saved library). Retry when it has ended.',
        { details: { retryAfterSeconds: 1 } },
      )
    }
    this.#snapshotting = true
    try {
      return await this.#writeSnapshot(options)
    } finally {
      this.#snapshotting = false
    }
  }

  async #writeSnapshot(options: {
    requestId?: string
  }): Promise<SnapshotManifest & { name: string }> {
    const logger = this.#requestLogger([options.requestId])
    const name = `snapshot-${new Date().toISOString().replace(/[:.]/g, '-')}`
    const dir = join(this.config.library.snapshotDir, name)
    const saved = this.libraries.all().filter((indexed) => indexed.dir !== undefined)
    // A write like the others for a stopping server (settleWrites): waited for, then abandoned
    // (its temporary directory removed). Was not counted: the server said "Stopped" while it ran.
    const stop = this.#writeStop(undefined, 'snapshot')
    // Every error without this host's directories, as PUT and DELETE (the log keeps them).
    const written = this.#withoutHostPaths(
      () =>
        holding(saved, () =>
          writeSnapshot(dir, saved, {
            signal: stop.signal,
            onUnsynced: (warning) => this.#warnUnsynced(warning, logger),
            onSwept: (removed) =>
              logger.info(
                `Removed ${removed}: a snapshot left half-written by a process that is gone`,
              ),
          }),
        ).catch((error: unknown) => {
          if (!isToolselError(error, 'INTERNAL') && !isToolselError(error, 'INSUFFICIENT_STORAGE'))
            throw error
          // The directory comes from the operator's config: say which setting to change.
          throw new ToolselError(
            error.code,
            `${error.message} (library.snapshotDir, env TOOLSEL_SNAPSHOT_DIR)`,
            { cause: error.cause, details: error.details },
          )
        }),
      logger,
    ).finally(stop.release)
    const manifest = await this.#tracked(written)
    logger.info(`Snapshot ${dir} written`, { libraries: manifest.libraries.length })
    return { name, ...manifest }
  }

  async deleteLibrary(
    name: string,
    options: {
      /** The request's id (`x-request-id`), for the log lines this delete causes. */
      requestId?: string
    } = {},
  ): Promise<void> {
    assertLibraryName(name)
    const logger = this.#requestLogger([options.requestId])
    await this.#tracked(this.#withoutHostPaths(() => this.#deleteLibrary(name, logger), logger))
  }

  async #deleteLibrary(name: string, logger: Logger): Promise<void> {
    await this.#serialise(name, async () => {
      this.libraries.require(name)
      if (name === this.defaultLibraryName) {
        throw new ToolselError(
          'INVALID_INPUT',
          `Library "${name}" is the default library and can't be deleted; restart the service with another default first (library.default: serve --library <name>, TOOLSEL_LIBRARY).`,
        )
      }
      // Dropped as its index is (under its lock), so that no other worker's commit comes between.
      // Told to the other workers even when a change of theirs dropped it here meanwhile (after
      // `require`): what this removed may be another worker's commit, which they still serve.
      await deleteIndex(this.config.library.indexDir, name, {
        onDelete: (deleted) => this.libraries.delete(name, { deletedSaved: deleted }),
        onUnsynced: (warning) => this.#warnUnsynced(warning, logger),
      })
    })
  }

  /**
   * The usage examples an upload of `library` keeps: the current library's, without the tool ids
   * `library` lacks (a warning names them), or none with `examples: 'drop'`.
   */
  #carriedExamples(
    library: ToolLibrary,
    options: { examples?: 'keep' | 'drop' },
    warnings: string[],
  ): ExampleSet | undefined {
    const previous = this.libraries.get(library.name)?.examples?.set
    if (!previous || previous.version === 0) return undefined
    if (options.examples === 'drop')
      return ExampleSet.of([], {
        cap: this.config.library.maxExamples,
        version: previous.version + 1,
      })
    const pruned = previous.prune((id) => library.has(id))
    if (pruned.removedToolIds.length > 0) {
      const shown = pruned.removedToolIds.slice(0, 10).join(', ')
      warnings.push(
        `Usage examples: ${pruned.removedToolIds.length} tool id(s) the new tools lack were removed from them (${shown}${pruned.removedToolIds.length > 10 ? ', …' : ''}); ${pruned.droppedExamples} example(s) left without a tool were dropped.`,
      )
    }
    return pruned.set.withCap(this.config.library.maxExamples)
  }

  /**
   * This server's own directories (`library.indexDir`, `library.snapshotDir`), as an answer
   * names them instead (see host-paths.ts).
   */
  #hostPaths(): HostPath[] {
    return [
      ...hostDir(this.config.library.indexDir, '<library.indexDir>'),
      ...hostDir(this.config.library.snapshotDir, '<library.snapshotDir>'),
    ]
  }

  /**
   * `work`'s result, or its error without this server's directories (an INDEX_WRITE_FAILED's
   * directory and errno path, a lock's path): written into HTTP answers. The log gets the error
   * whole when a path was taken out.
   */
  async #withoutHostPaths<T>(work: () => Promise<T>, logger: Logger = this.logger): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw pathFreeError(error, this.#hostPaths(), (original) => logger.error(original.message))
    }
  }

  /**
   * For a stopping server (`toolsel serve`, after its grace period began): waits for the library
   * writes under way (uploads, usage examples, deletes, snapshots; and those queued behind them)
   * until `abortAt` (a Date.now() time); those
   * still unsettled then are abandoned (their import, build or index write stops at its next
   * check, their staged files are removed; one already committing is finished) and waited for
   * `waitMs` more. Resolves with how many writes under way at `abortAt` did not finish: abandoned
   * (nothing of them saved, the library as it was) or still running after `waitMs`
   * (`unsettled`, left to the next start's recovery). No write starts after the abort.
   */
  async settleWrites(
    abortAt: number,
    waitMs: number,
  ): Promise<{ unfinished: number; unsettled: number }> {
    if (await this.#writesSettled(abortAt - Date.now())) return { unfinished: 0, unsettled: 0 }
    const abandoned = [...this.#pendingWrites]
    this.#stopWrites.abort(abandonedWrite('library write'))
    // Each named as what it was (was "this library write" for a snapshot too).
    for (const [stop, what] of this.#writeStops) stop.abort(abandonedWrite(what))
    await this.#writesSettled(waitMs)
    return {
      unfinished: abandoned.filter((write) => write.outcome !== 'done').length,
      unsettled: abandoned.filter((write) => write.outcome === undefined).length,
    }
  }

  /** Whether every pending write settled within `ms` (writes called meanwhile included). */
  async #writesSettled(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    for (;;) {
      if (this.#pendingWrites.size === 0) return true
      const left = deadline - Date.now()
      if (left <= 0) return false
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled([...this.#pendingWrites].map((write) => write.settled)),
        new Promise((resolve) => (timer = setTimeout(resolve, left))),
      ])
      clearTimeout(timer)
    }
  }

  /** `write`, counted among the pending writes until it settles (settleWrites). */
  #tracked<T>(write: Promise<T>): Promise<T> {
    const pending: PendingWrite = { outcome: undefined, settled: Promise.resolve() }
    pending.settled = write.then(
      () => {
        pending.outcome = 'done'
      },
      () => {
        pending.outcome = 'failed'
      },
    )
    this.#pendingWrites.add(pending)
    void pending.settled.then(() => this.#pendingWrites.delete(pending))
    return write
  }

  /**
   * A write's stop: `stopped` aborts when the server stops its writes (settleWrites), `signal`
   * then or when `signal` (the request's) aborts; `release` once the write settled. Its own
   * controller, not `AbortSignal.any` over `#stopWrites.signal`: a signal that lives as long as
   * the process keeps every signal made from it so for good on Node 20 (nodejs/node#55351: one
   * more per write, never freed).
   */
  #writeStop(
    signal: AbortSignal | undefined,
    what: WriteKind = 'library write',
  ): {
    signal: AbortSignal
    stopped: AbortSignal
    release: () => void
  } {
    const stop = new AbortController()
    if (this.#stopWrites.signal.aborted) stop.abort(abandonedWrite(what))
    else this.#writeStops.set(stop, what)
    return {
      signal: signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]),
      stopped: stop.signal,
      release: () => this.#writeStops.delete(stop),
    }
  }

  #serialise<T>(name: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#writes.get(name) ?? Promise.resolve()
    // A write queued behind one that a stopping server abandoned does not start.
    const start = () => {
      throwIfAborted(this.#stopWrites.signal)
      return work()
    }
    const next = previous.then(start, start)
    const settled = next.catch(() => undefined)
    this.#writes.set(name, settled)
    void settled.then(() => {
      if (this.#writes.get(name) === settled) this.#writes.delete(name)
    })
    return next
  }
}

/** What a write that a stopping server abandons is called in its error. */
type WriteKind = 'library write' | 'snapshot'

/** The error of a write abandoned by a stopping server (`settleWrites`). */
function abandonedWrite(what: WriteKind): ToolselError {
  return new ToolselError(
    'ABORTED',
    `The server is stopping: this ${what} was abandoned before its commit (server.shutdownGraceMs); nothing of it was saved.`,
  )
}

/** A library write under way, for `settleWrites`: undefined until it settles. */
interface PendingWrite {
  outcome: 'done' | 'failed' | undefined
  settled: Promise<void>
}

/** A write waiting in a batch: its examples and options, and how to answer its caller. */
interface ExampleBatchEntry extends AddExamplesOptions {
  examples: readonly UsageExample[]
  resolve(result: AddExamplesResult): void
  reject(error: unknown): void
}

interface ExampleBatch {
  entries: ExampleBatchEntry[]
  /** The write chain's tail once the batch was queued: others join only while it still is. */
  settled: Promise<unknown> | undefined
}

/**
 * A signal aborted once every one of `signals` is (with the last one's reason); undefined when
 * one of them can never abort.
 */
function allAborted(signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
  if (signals.some((signal) => signal === undefined)) return undefined
  if (signals.length === 1) return signals[0]
  const controller = new AbortController()
  const check = (reason: unknown) => {
    if (signals.every((signal) => signal!.aborted)) controller.abort(reason)
  }
  for (const signal of signals as AbortSignal[]) {
    if (signal.aborted) check(signal.reason)
    else signal.addEventListener('abort', () => check(signal.reason), { once: true })
  }
  return controller.signal
}

/**
 * For UNKNOWN_LIBRARY: an index of that name saved in the index directory but not served was
 * just committed by another process (`toolsel serve` picks it up within server.indexWatchMs),
 * failed to load, or is not followed (indexWatchMs 0, loadAll false); say how to serve it. '' when there is none (or the name is not one
 * a library can have, so no path is built from it).
 */
function savedButNotLoaded(indexDir: string, name: string): string {
  if (!LIBRARY_NAME_PATTERN.test(name) || !existsSync(join(indexDir, name, MANIFEST_FILE)))
    return ''
  return ` An index "${name}" is saved in library.indexDir but not served: toolsel serve loads saved indexes when it starts and those committed later within server.indexWatchMs (unless that is 0, or library.loadAll is false), and lists one that failed to load in GET /readyz failedIndexes. Retry shortly, restart the service, or upload its tools with PUT /v1/libraries/${name}.`
}
