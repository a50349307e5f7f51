/**
 * `toolsel serve --workers N`: N server processes (node:cluster) on one port, each holding every
 * library (loaded from the same index files: cheap, see store/kinds/bm25-file.ts). A library
 * change made through one worker (PUT, DELETE, new usage examples) reaches every worker before
 * the request that made it is answered:
 *
 * 1. the worker's registry records the changed name (its index is already saved under
 *    `library.indexDir`: changes are committed to disk before they are swapped in);
 * 2. after the request, the worker sends the changed names and their index directories to the
 *    primary, which relays them to every other worker;
 * 3. each of them loads the index saved now (or drops the library when none is) and swaps it in,
 *    then says so (`syncSavedLibrary`: under the library's lock, as a worker's own commits swap
 *    theirs in, so that a worker never ends up serving an older version than the disk holds,
 *    whatever order the relayed changes and its own commits come in);
 * 4. once all have, the primary tells the first worker, which answers the request.
 *
 * So a client that got the answer to its PUT sees the new library from whichever worker serves its
 * next request. A worker that starts meanwhile (`--workers N` starting, or one the primary
 * starts after another died) first subscribes (the primary relays to subscribed workers only,
 * and answers the subscription); relays that reach it while it loads are answered at once (it
 * serves nothing yet: 503 NOT_READY) and noted, and before it becomes ready it reconciles every
 * saved library it serves, each noted one and (`library.loadAll`) each one saved now with the
 * disk (`syncSavedLibrary`), so its start-up load, older than a commit made meanwhile, never
 * stays served. Libraries that live in memory only (a gateway's, a tool file given to --library)
 * are each worker's own and are not relayed.
 *
 * Saved indexes that failed to load (`/readyz` failedIndexes, the index-load metric) are one list
 * for all workers: each worker tells the primary what failed in it (at start: its start-up load's
 * and its reconcile's failures, and it waits for the union before it is ready; then with its
 * answer to each relay of other processes' commits), and the primary sends every worker the
 * union, which is what each reports with its own (listed at once: another worker's reach it one
 * IPC round trip later); a load balancer gets the same answer from whichever worker it asks.
 * @module
 */
import cluster, { type Worker } from 'node:cluster'
import { testSwitch } from '../config/env-vars.ts'
import type { Logger } from '../log.ts'
import type { Config } from '../config/schema.ts'
import { dirname, join } from 'node:path'
import { listIndexes, syncSavedLibrary, type IndexedLibrary } from '../store/library-lifecycle.ts'
import type { LibraryRegistry } from './library-registry.ts'
import type { FailedIndex } from './load-libraries.ts'

/**
 * How long a starting worker waits for the primary's union of failed indexes (an answer of one
 * IPC round trip) before it becomes ready without it.
 */
const UNION_WAIT_MS = 5000

/** One changed library: its saved index directory, or null when it was deleted. */
export interface LibraryChange {
  name: string
  dir: string | null
}

type SyncMessage =
  | { toolsel: 'subscribe' }
  | { toolsel: 'subscribed' }
  | { toolsel: 'sync'; id: number; changes: LibraryChange[] }
  | { toolsel: 'apply'; id: number; changes: LibraryChange[]; external?: true }
  | { toolsel: 'applied'; id: number; failures: string[]; failedIndexes?: FailedIndex[] }
  | { toolsel: 'synced'; id: number; failures: string[] }
  /** A worker's own failed indexes (after its start-up). */
  | { toolsel: 'failed'; failedIndexes: FailedIndex[] }
  /** The primary's union of every worker's, for each to report. */
  | { toolsel: 'failedIndexes'; failedIndexes: FailedIndex[] }

function isSyncMessage(message: unknown): message is SyncMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as { toolsel?: unknown }).toolsel === 'string'
  )
}

/** The worker side: records local changes, relays them, applies the others'. */
export class WorkerLibrarySync {
  readonly #registry: LibraryRegistry
  readonly #config: Config
  readonly #logger: Logger
  readonly #pending = new Map<string, LibraryChange>()
  /** Changes relayed before `reconcile` is done: synced by it (the worker serves nothing yet). */
  readonly #deferred = new Map<string, LibraryChange>()
  readonly #waiting = new Map<number, (failures: string[]) => void>()
  #nextId = 1
  #flushed: Promise<void> = Promise.resolve()
  #started = false
  #closed = false
  /** Resolved once the primary has this worker's subscription: later relays all reach it. */
  readonly #subscribed: Promise<void>
  #onSubscribed: () => void = () => {}
  readonly #unsubscribe: () => void
  readonly #onMessage = (message: unknown): void => {
    if (!isSyncMessage(message)) return
    if (message.toolsel === 'apply') {
      if (this.#started) void this.#apply(message.id, message.changes, message.external === true)
      else if (message.external) {
        // Another process's commit: `reconcile` reads the disk after this anyway.
        process.send!({ toolsel: 'applied', id: message.id, failures: [] } satisfies SyncMessage)
      } else {
        for (const change of message.changes) this.#deferred.set(change.name, change)
        process.send!({ toolsel: 'applied', id: message.id, failures: [] } satisfies SyncMessage)
      }
    } else if (message.toolsel === 'synced') {
      this.#waiting.get(message.id)?.(message.failures)
      this.#waiting.delete(message.id)
    } else if (message.toolsel === 'subscribed') this.#onSubscribed()
    else if (message.toolsel === 'failedIndexes') {
      this.#onFailedIndexes(message.failedIndexes)
      this.#onUnion?.()
    }
  }

  /** Applies the names of libraries other processes committed (the primary's index poll). */
  readonly #pickUp: (names: string[]) => Promise<string[]>
  /** This worker's own failed indexes, told to the primary. */
  readonly #failedIndexes: () => readonly FailedIndex[]
  /** Takes the primary's union of every worker's failed indexes. */
  readonly #onFailedIndexes: (all: FailedIndex[]) => void
  readonly #onReconciled: (name: string, indexDir: string, error?: unknown) => Promise<void> | void
  /** Called by the next union the primary sends (`reconcile` waits for it). */
  #onUnion: (() => void) | undefined

  constructor(
    registry: LibraryRegistry,
    config: Config,
    logger: Logger,
    options: {
      /**
       * Makes what this worker serves of `names` what their index directory holds now, for
       * commits of other processes that the primary saw (`pickUpCommits` with `replicated`);
       * returns what failed. Default: none applied.
       */
      pickUp?: (names: string[]) => Promise<string[]>
      /** The saved indexes that failed to load in this worker (default none). */
      failedIndexes?: () => readonly FailedIndex[]
      /** Called with every worker's failed indexes, the list this worker reports. */
      onFailedIndexes?: (all: FailedIndex[]) => void
      /**
       * A library `reconcile` could not make what is saved under `indexDir` (`error`), or (no
       * `error`) could: this worker's failed indexes list it, or no longer do. Default nothing.
       */
      onReconciled?: (name: string, indexDir: string, error?: unknown) => Promise<void> | void
    } = {},
  ) {
    this.#registry = registry
    this.#config = config
    this.#logger = logger
    this.#pickUp = options.pickUp ?? (() => Promise.resolve([]))
    this.#failedIndexes = options.failedIndexes ?? (() => [])
    this.#onFailedIndexes = options.onFailedIndexes ?? (() => {})
    this.#onReconciled = options.onReconciled ?? (() => {})
    this.#unsubscribe = registry.onChange((name, indexed, replicated) => {
      // The libraries each worker loads at start are its own doing, not changes to relay, and
      // a change another worker made has been relayed already.
      if (!this.#started || replicated) return
      if (indexed === undefined) this.#pending.set(name, { name, dir: null })
      else if (indexed.dir !== undefined) this.#pending.set(name, { name, dir: indexed.dir })
    })
    this.#subscribed = new Promise((resolve) => (this.#onSubscribed = resolve))
    process.on('message', this.#onMessage)
    // Listening first: every relay the primary sends from now on is heard.
    process.send!({ toolsel: 'subscribe' } satisfies SyncMessage)
  }

  /**
   * Makes what the start-up load put in the registry agree with the disk now, then relays this
   * worker's changes and applies the others' as they come (call it once the service has loaded
   * its libraries, before it is ready): every saved library it serves, every library relayed
   * while it loaded, and with `library.loadAll` every library saved now goes through
   * `syncSavedLibrary` (a failure is logged; the start-up version stays). Waits for the
   * primary's answer to the subscription first, so that a commit either was relayed here or is
   * on disk by then.
   */
  async reconcile(): Promise<void> {
    await this.#subscribed
    const indexDir = this.#config.library.indexDir
    const toSync = new Map<string, string>()
    for (const indexed of this.#registry.all())
      if (indexed.dir !== undefined) toSync.set(indexed.library.name, dirname(indexed.dir))
    if (this.#config.library.loadAll)
      for (const name of await listIndexes(indexDir))
        if (!toSync.has(name)) toSync.set(name, indexDir)
    for (;;) {
      for (const { name, dir } of this.#deferred.values())
        toSync.set(name, dir === null ? indexDir : dirname(dir))
      this.#deferred.clear()
      // Nothing left: from here on (no turn of the event loop in between) relays are applied.
      if (toSync.size === 0 || this.#closed) break
      for (const [name, dir] of toSync) {
        try {
          await syncSavedLibrary(this.#slots(), name, dir, this.#config, this.#logger)
          await this.#onReconciled(name, dir)
        } catch (error) {
          this.#logger.error(
            `Library "${name}" not reconciled with ${join(dir, name)} at start: ${(error as Error).message}`,
          )
          await this.#onReconciled(name, dir, error)
        }
      }
      toSync.clear()
    }
    this.#started = true
    if (this.#closed) return
    // What failed to load here at start (the start-up load's and the reconcile's): the primary
    // answers with every worker's, which this worker reports from before it is ready.
    const union = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, UNION_WAIT_MS).unref()
      this.#onUnion = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    process.send!({
      toolsel: 'failed',
      failedIndexes: [...this.#failedIndexes()],
    } satisfies SyncMessage)
    await union
    this.#onUnion = undefined
  }

  /** The registry as `syncSavedLibrary` changes it: marked replicated (not relayed again). */
  #slots() {
    const replicated = { replicated: true }
    return {
      get: (name: string) => this.#registry.get(name),
      set: (indexed: IndexedLibrary) => this.#registry.set(indexed, replicated),
      delete: (name: string) => void this.#registry.delete(name, replicated),
    }
  }

  /**
   * Stops relaying and applying: unsubscribes from the registry and from the primary's messages
   * (`toolsel serve` calls it at a worker's shutdown, once nothing is served). A flush still
   * waiting for the other workers is released (its changes are saved; the others may not have
   * them). Calling it again does nothing.
   */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#unsubscribe()
    process.off('message', this.#onMessage)
    this.#pending.clear()
    for (const release of this.#waiting.values()) release(['this worker stopped before all had it'])
    this.#waiting.clear()
  }

  /**
   * Sends the changes made here since the last flush and waits until every worker has them, and
   * has the ones sent before (another request's flush may have taken this request's changes).
   * `requestId`: the request whose answer waits for this flush; a worker that could not apply
   * what it sends is logged with it ("Library change not applied", with the library's name: a
   * change another request made meanwhile goes with it).
   */
  flush(requestId?: string): Promise<void> {
    if (this.#pending.size > 0) {
      const changes = [...this.#pending.values()]
      this.#pending.clear()
      this.#flushed = this.#flushed.then(() => this.#send(changes, requestId))
    }
    return this.#flushed
  }

  async #send(changes: LibraryChange[], requestId: string | undefined): Promise<void> {
    if (this.#closed) return
    const id = this.#nextId++
    const failures = await new Promise<string[]>((resolve) => {
      this.#waiting.set(id, resolve)
      process.send!({ toolsel: 'sync', id, changes } satisfies SyncMessage)
    })
    const fields = requestId === undefined ? undefined : { requestId }
    for (const failure of failures)
      this.#logger.error(`Library change not applied: ${failure}`, fields)
  }

  async #apply(id: number, changes: LibraryChange[], external: boolean): Promise<void> {
    if (external) {
      const names = changes.map((change) => change.name)
      const failures = await this.#pickUp(names).catch((error: unknown) => [
        `${names.join(', ')}: ${(error as Error).message}`,
      ])
      const mine = failures.map((failure) => `worker ${process.pid}, ${failure}`)
      if (!this.#closed)
        process.send!({
          toolsel: 'applied',
          id,
          failures: mine,
          failedIndexes: [...this.#failedIndexes()],
        } satisfies SyncMessage)
      return
    }
    const failures: string[] = []
    const slots = this.#slots()
    for (const { name, dir } of changes) {
      try {
        if (testSwitch('TOOLSEL_TEST_SYNC_FAULT') === name)
          throw new Error('test fault: TOOLSEL_TEST_SYNC_FAULT names it')
        // Saved or deleted: what is saved now is what counts (a later change may be on disk).
        const indexDir = dir === null ? this.#config.library.indexDir : dirname(dir)
        await syncSavedLibrary(slots, name, indexDir, this.#config, this.#logger)
      } catch (error) {
        failures.push(`worker ${process.pid}, library "${name}": ${(error as Error).message}`)
      }
    }
    // Closed meanwhile: the primary stops waiting for this worker when it exits.
    if (!this.#closed) process.send!({ toolsel: 'applied', id, failures } satisfies SyncMessage)
  }
}

/** The primary's side, for what it learns itself: other processes' commits (index-dir-watch.ts). */
export interface LibraryRelay {
  /**
   * Tells every ready worker that `names` were committed by another process (each applies what
   * is on disk now; workers still starting read the disk before they are ready); resolves once
   * all have answered with what failed (`failures`: a line per worker and library) and which of
   * `names` failed to load in some worker (`failed`).
   */
  relayCommits(names: string[]): Promise<{ failures: string[]; failed: string[] }>
}

/**
 * The primary side: relays each worker's changes to the others and reports back, and keeps the
 * union of the workers' failed indexes, sent to every worker whenever one reports its own.
 * `onStartupFailures` gets the names a worker failed to load at its start (to be tried again).
 */
export function relayLibraryChanges(
  logger: Logger,
  options: { onStartupFailures?: (names: string[]) => void } = {},
): LibraryRelay {
  // Each worker's failed indexes (worker id → list), and their union as last sent.
  const failedBy = new Map<number, FailedIndex[]>()
  let union: FailedIndex[] = []
  const reportFailed = (worker: Worker, failedIndexes: FailedIndex[] | undefined) => {
    if (failedIndexes === undefined) return
    failedBy.set(worker.id, failedIndexes)
    shareFailed()
  }
  const shareFailed = () => {
    const byName = new Map<string, FailedIndex>()
    for (const list of failedBy.values())
      for (const failed of list) if (!byName.has(failed.name)) byName.set(failed.name, failed)
    union = [...byName.values()].sort((one, other) => one.name.localeCompare(other.name))
    // To every worker, even when the union is unchanged: one just started has none yet.
    for (const worker of Object.values(cluster.workers ?? {}))
      if (worker?.isConnected())
        worker.send({ toolsel: 'failedIndexes', failedIndexes: union } satisfies SyncMessage)
  }
  let nextRelay = 1
  // relay id → what is still awaited; the origin is a worker, or the primary's own call.
  const relays = new Map<
    number,
    {
      origin: Worker | ((failures: string[]) => void)
      originId: number
      awaiting: Set<number>
      failures: string[]
    }
  >()
  const settle = (relayId: number) => {
    const done = relays.get(relayId)
    if (!done || done.awaiting.size > 0) return
    relays.delete(relayId)
    if (typeof done.origin === 'function') done.origin(done.failures)
    else if (done.origin.isConnected()) {
      done.origin.send({
        toolsel: 'synced',
        id: done.originId,
        failures: done.failures,
      } satisfies SyncMessage)
    }
  }
  // Workers that listen for relays (`WorkerLibrarySync` made): a worker still starting up
  // before that would never answer one.
  const subscribed = new Set<number>()
  const relay = (
    origin: Worker | ((failures: string[]) => void),
    originId: number,
    changes: LibraryChange[],
    external: boolean,
  ) => {
    const relayId = nextRelay++
    const others = Object.values(cluster.workers ?? {}).filter(
      (other): other is Worker =>
        other !== undefined && other !== origin && subscribed.has(other.id) && other.isConnected(),
    )
    relays.set(relayId, {
      origin,
      originId,
      awaiting: new Set(others.map((other) => other.id)),
      failures: [],
    })
    for (const other of others) {
      other.send({
        toolsel: 'apply',
        id: relayId,
        changes,
        ...(external && { external: true as const }),
      } satisfies SyncMessage)
    }
    logger.debug('Relaying library changes', {
      libraries: changes.map((change) => change.name),
      workers: others.length,
      external,
    })
    settle(relayId)
  }
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isSyncMessage(message)) return
    if (message.toolsel === 'subscribe') {
      subscribed.add(worker.id)
      worker.send({ toolsel: 'subscribed' } satisfies SyncMessage)
    } else if (message.toolsel === 'sync') {
      relay(worker, message.id, message.changes, false)
    } else if (message.toolsel === 'failed') {
      reportFailed(worker, message.failedIndexes)
      if (message.failedIndexes.length > 0)
        options.onStartupFailures?.(message.failedIndexes.map((failed) => failed.name))
    } else if (message.toolsel === 'applied') {
      reportFailed(worker, message.failedIndexes)
      const pending = relays.get(message.id)
      if (!pending) return
      pending.awaiting.delete(worker.id)
      pending.failures.push(...message.failures)
      settle(message.id)
    }
  })
  // A worker that exits owes no answer.
  cluster.on('exit', (worker: Worker) => {
    subscribed.delete(worker.id)
    if (failedBy.delete(worker.id)) shareFailed()
    for (const [relayId, pending] of relays) {
      if (pending.awaiting.delete(worker.id)) settle(relayId)
    }
  })
  return {
    relayCommits: (names) =>
      new Promise((resolve) =>
        relay(
          (failures) =>
            resolve({
              failures,
              failed: names.filter((name) => union.some((failed) => failed.name === name)),
            }),
          0,
          names.map((name) => ({ name, dir: null })),
          true,
        ),
      ),
  }
}
