/**
 * The libraries the service holds in memory, by name. Swapping a library is one Map assignment:
 * a request takes its `IndexedLibrary` reference once at the start and keeps using it, so it
 * sees the old library or the new one, never a mix. Libraries get here through the library
 * lifecycle (`store/library-lifecycle.ts`: `publishLibrary` saves, then swaps).
 *
 * A replaced or deleted version is released: a library read from an index closes its tools file
 * `releaseGraceMs` later, or when the last reader `holding` it is done if that is later (requests
 * and builds hold the version they use, so one that runs longer than the grace still reads it).
 *
 * @example
 * ```ts
 * const registry = new LibraryRegistry()
 * const { indexed } = await importLibrary({ path: 'tools.json' }, 'mytools', config)
 * await publishLibrary(registry, indexed, { indexDir: config.library.indexDir })
 * registry.require('mytools').library.size // the imported tool count
 * registry.require('nope') // throws UNKNOWN_LIBRARY naming the loaded libraries
 * ```
 * @module
 */
import { ToolselError } from '../errors.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'

/**
 * Runs `work` while holding the library versions it reads, so that a swap meanwhile doesn't
 * close their tools files under it, however long it runs (see `ToolLibrary.hold`).
 */
export async function holding<T>(
  versions: IndexedLibrary | readonly IndexedLibrary[],
  work: () => Promise<T>,
): Promise<T> {
  const held = (Array.isArray(versions) ? versions : [versions]) as readonly IndexedLibrary[]
  const letGo = held.map((indexed) => indexed.library.hold())
  try {
    return await work()
  } finally {
    for (const release of letGo) release()
  }
}

/**
 * Called after a library is set (with it) or deleted (undefined). `replicated`: the change came
 * from another worker (service/cluster-sync.ts relays only the others).
 */
export type LibraryChangeListener = (
  name: string,
  indexed: IndexedLibrary | undefined,
  replicated: boolean,
) => void

export interface RegistryChangeOptions {
  /** The change came from another worker (see service/cluster-sync.ts). */
  replicated?: boolean
  /**
   * `delete` only: this process deleted the library's saved index, so the listeners hear of it
   * even when the library was not held any more (another worker's change applied meanwhile had
   * dropped it: the other workers, which may serve the commit this deletion removed, must hear).
   */
  deletedSaved?: boolean
}

export interface LibraryRegistryOptions {
  /**
   * Work a library version needs before it serves requests, run in `set` before the swap (every
   * version passes through it: start-up, uploads, new usage examples, other workers' changes),
   * so that no request pays for it: the service prepares its example memory there. Synchronous:
   * the library lifecycle already did that work in slices while it built or loaded the version
   * (`learnLibraryExamples`), so the hook finds it cached; it throws to keep the old version.
   */
  prepare?: (indexed: IndexedLibrary) => void
  /**
   * How long a replaced or deleted library version keeps its tools file open at least (what
   * took it before the change may still read tools from it), in ms; readers `holding` it keep it
   * open longer. One that holds nothing and reads later gets LIBRARY_REPLACED (retryable).
   * Default 11 minutes: the default upload build time limit and a minute more.
   */
  releaseGraceMs?: number
  /**
   * What to add to UNKNOWN_LIBRARY for a name that is not loaded, e.g. that an index of that
   * name is saved on disk but was not loaded (built by `toolsel index` after the start); ''
   * for nothing. Called on that error only.
   */
  notLoadedHint?: (name: string) => string
}

export class LibraryRegistry {
  readonly #libraries = new Map<string, IndexedLibrary>()
  readonly #listeners: LibraryChangeListener[] = []
  readonly #prepare: ((indexed: IndexedLibrary) => void) | undefined
  readonly #releaseGraceMs: number
  readonly #notLoadedHint: ((name: string) => string) | undefined

  constructor(options: LibraryRegistryOptions = {}) {
    this.#prepare = options.prepare
    this.#releaseGraceMs = options.releaseGraceMs ?? 660_000
    this.#notLoadedHint = options.notLoadedHint
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: LibraryChangeListener): () => void {
    this.#listeners.push(listener)
    let subscribed = true
    return () => {
      if (!subscribed) return
      subscribed = false
      this.#listeners.splice(this.#listeners.indexOf(listener), 1)
    }
  }

  /** How many listeners `onChange` holds (what a closed MCP context must give back). */
  get listenerCount(): number {
    return this.#listeners.length
  }

  get(name: string): IndexedLibrary | undefined {
    return this.#libraries.get(name)
  }

  require(name: string): IndexedLibrary {
    const indexed = this.#libraries.get(name)
    if (!indexed) {
      // Bounded: a service may hold thousands of libraries.
      const names = [...this.#libraries.keys()].sort()
      const available =
        names.length === 0
          ? 'none'
          : names.length <= 20
            ? names.join(', ')
            : `${names.slice(0, 20).join(', ')} and ${names.length - 20} more: GET /v1/libraries`
      throw new ToolselError(
        'UNKNOWN_LIBRARY',
        `No library named "${name}" is loaded (available: ${available}).${this.#notLoadedHint?.(name) ?? ''}`,
        {
          details: { library: name },
        },
      )
    }
    return indexed
  }

  set(indexed: IndexedLibrary, options: RegistryChangeOptions = {}): void {
    this.#prepare?.(indexed)
    const previous = this.#libraries.get(indexed.library.name)
    this.#libraries.set(indexed.library.name, indexed)
    // A new version of the examples alone keeps the library (and its open tools file).
    if (previous && previous.library !== indexed.library)
      previous.library.release(this.#releaseGraceMs)
    const replicated = options.replicated ?? false
    // A copy: a listener may unsubscribe (itself or another one) while the change is reported.
    for (const listener of [...this.#listeners]) listener(indexed.library.name, indexed, replicated)
  }

  delete(name: string, options: RegistryChangeOptions = {}): boolean {
    this.#libraries.get(name)?.library.release(this.#releaseGraceMs)
    const deleted = this.#libraries.delete(name)
    const replicated = options.replicated ?? false
    if (deleted || options.deletedSaved === true)
      for (const listener of [...this.#listeners]) listener(name, undefined, replicated)
    return deleted
  }

  names(): string[] {
    return [...this.#libraries.keys()].sort()
  }

  all(): IndexedLibrary[] {
    return this.names().map((name) => this.#libraries.get(name)!)
  }
}
