/**
 * Data derived from single tools of a library (a candidate's name and one-line description, the
 * learned selector's term sets), computed once per tool and library version instead of once per
 * request. A request reads a few dozen candidates; deriving their data again each time (parsing
 * the tool out of the library's buffer, tokenising its text) was a third of the work of a
 * `/v1/select-tools` call.
 *
 * Entries are keyed by the library object: a library is immutable and every new version (an
 * upload, new usage examples) is a new object, so an entry never outlives the tools it was
 * derived from, and a replaced library's entries go with it.
 *
 * A caller that knows the tool's position in the library (BM25 candidates carry it) finds the
 * entry by position: two array reads and an id comparison, instead of hashing the id into a Map
 * (whose buckets, entries and key strings are scattered over a large heap: most of the cost of a
 * lookup). The position is only a hint: an entry is served when its id is the one asked for, and
 * a position that does not hold that id in the library is ignored. Without a position the id is
 * looked up in a Map.
 *
 * Each store (by position, by id) keeps at most `2 × generation` entries per library: when the
 * current generation is full it becomes the previous one (the one before is dropped) and entries
 * read from the previous generation move to the current one, so what requests keep using stays.
 * @module
 */
import type { Tool } from './tool.ts'
import type { ToolLibrary } from './tool-library.ts'

/** Entries per generation; a library keeps up to twice as many. */
export const TOOL_MEMO_GENERATION = 16_384

/** Positions per page of the positional store (pages are made when a position in them is used). */
const PAGE_BITS = 12
const PAGE_SIZE = 1 << PAGE_BITS

interface Generations<T> {
  current: Map<string, T>
  previous: Map<string, T>
}

interface Placed<T> {
  readonly id: string
  readonly value: T
  /** The generation that last used it (see `ByPosition`). */
  generation: number
}

/** Entries by library position, in pages of PAGE_SIZE slots. */
interface ByPosition<T> {
  pages: Array<Array<Placed<T> | undefined> | undefined>
  generation: number
  /** Positions used in the current and the previous generation. */
  current: number[]
  previous: number[]
}

export class ToolMemo<T> {
  readonly #derive: (tool: Tool) => T
  readonly #generation: number
  readonly #libraries = new WeakMap<ToolLibrary, Generations<T>>()
  readonly #positions = new WeakMap<ToolLibrary, ByPosition<T>>()

  /** `derive` must depend on the tool alone (never on the request). */
  constructor(derive: (tool: Tool) => T, generation = TOOL_MEMO_GENERATION) {
    this.#derive = derive
    this.#generation = Math.max(1, generation)
  }

  /**
   * The derived data of tool `id` (UNKNOWN_TOOL when the library has none). `position`: where the
   * caller believes `id` sits in the library (a hint; a wrong one costs a lookup by id).
   */
  get(library: ToolLibrary, id: string, position?: number): T {
    if (position !== undefined) {
      const placed = this.#byPosition(library, id, position)
      if (placed !== undefined) return placed
    }
    let memo = this.#libraries.get(library)
    if (memo === undefined) {
      memo = { current: new Map(), previous: new Map() }
      this.#libraries.set(library, memo)
    }
    let value = memo.current.get(id)
    if (value !== undefined) return value
    value = memo.previous.get(id) ?? this.#derive(library.require(id))
    if (memo.current.size >= this.#generation) {
      memo.previous = memo.current
      memo.current = new Map()
    }
    memo.current.set(id, value)
    return value
  }

  /** The entry of `id` at `position`, derived there when the library holds `id` there. */
  #byPosition(library: ToolLibrary, id: string, position: number): T | undefined {
    let store = this.#positions.get(library)
    if (store === undefined) {
      store = { pages: [], generation: 1, current: [], previous: [] }
      this.#positions.set(library, store)
    }
    const page = store.pages[position >>> PAGE_BITS]
    const placed = page?.[position & (PAGE_SIZE - 1)]
    if (placed !== undefined && placed.id === id) {
      // From the previous generation (older ones are dropped): kept for the current one.
      if (placed.generation !== store.generation) this.#use(store, placed, position)
      return placed.value
    }
    const inside = Number.isInteger(position) && position >= 0 && position < library.size
    if (!inside || library.idList.at(position) !== id) {
      return undefined
    }
    const fresh: Placed<T> = { id, value: this.#derive(library.at(position)), generation: 0 }
    const slots = page ?? (store.pages[position >>> PAGE_BITS] = new Array(PAGE_SIZE))
    slots[position & (PAGE_SIZE - 1)] = fresh
    this.#use(store, fresh, position)
    return fresh.value
  }

  /**
   * Puts `placed` (at `position`) in the current generation. A full current generation becomes
   * the previous one first, and the previous one's entries not used since are dropped.
   */
  #use(store: ByPosition<T>, placed: Placed<T>, position: number): void {
    if (store.current.length >= this.#generation) {
      const stale = store.generation - 1
      store.generation += 1
      placed.generation = store.generation
      for (const old of store.previous) {
        const page = store.pages[old >>> PAGE_BITS]!
        if (page[old & (PAGE_SIZE - 1)]?.generation === stale)
          page[old & (PAGE_SIZE - 1)] = undefined
      }
      store.previous = store.current
      store.current = []
    }
    placed.generation = store.generation
    store.current.push(position)
  }
}
