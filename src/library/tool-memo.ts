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
 * Entries are kept by the tool's position in the library, in paged arrays: two array reads and
 * an id comparison find one, instead of hashing the id into a Map (whose buckets, entries and key
 * strings are scattered over a large heap: most of the cost of a lookup). A caller that knows the
 * position (BM25 candidates carry it) passes it as a hint: an entry is served when its id is the
 * one asked for, and a position that does not hold that id in the library is ignored. Without a
 * (right) hint the position comes from the library's id lookup, so a tool asked for by id and by
 * position has one entry, derived once.
 *
 * A library keeps at most `2 × generation` entries: when the current generation is full it
 * becomes the previous one (the one before is dropped) and entries read from the previous
 * generation move to the current one, so what requests keep using stays.
 * @module
 */
import type { Tool } from './tool.ts'
import type { ToolLibrary } from './tool-library.ts'

/** Entries per generation; a library keeps up to twice as many. */
const TOOL_MEMO_GENERATION = 16_384

/** Positions per page of the positional store (pages are made when a position in them is used). */
const PAGE_BITS = 12
const PAGE_SIZE = 1 << PAGE_BITS

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
  readonly #derive: (tool: Tool, position: number) => T
  readonly #generation: number
  readonly #positions = new WeakMap<ToolLibrary, ByPosition<T>>()

  /**
   * `derive` must depend on the tool alone (never on the request); it also gets the tool's
   * position in the library, which a caller may keep to find data of its own by position.
   */
  constructor(derive: (tool: Tool, position: number) => T, generation = TOOL_MEMO_GENERATION) {
    this.#derive = derive
    this.#generation = Math.max(1, generation)
  }

  /**
   * The derived data of tool `id` (UNKNOWN_TOOL when the library has none). `position`: where the
   * caller believes `id` sits in the library (a hint; a wrong one costs a lookup by id).
   */
  get(library: ToolLibrary, id: string, position?: number): T {
    let store = this.#positions.get(library)
    if (store === undefined) {
      store = { pages: [], generation: 1, current: [], previous: [] }
      this.#positions.set(library, store)
    }
    if (position !== undefined) {
      const placed = store.pages[position >>> PAGE_BITS]?.[position & (PAGE_SIZE - 1)]
      if (placed !== undefined && placed.id === id) return this.#served(store, placed, position)
    }
    const hinted =
      position !== undefined &&
      Number.isInteger(position) &&
      position >= 0 &&
      position < library.size &&
      library.idList.at(position) === id
    const at = hinted ? position : library.positionOf(id)
    // `require` throws UNKNOWN_TOOL, naming the library (it has no tool `id`: no position).
    if (at === undefined) return this.#derive(library.require(id), -1)
    if (!hinted) {
      const placed = store.pages[at >>> PAGE_BITS]?.[at & (PAGE_SIZE - 1)]
      if (placed !== undefined && placed.id === id) return this.#served(store, placed, at)
    }
    const fresh: Placed<T> = { id, value: this.#derive(library.at(at), at), generation: 0 }
    const slots = (store.pages[at >>> PAGE_BITS] ??= new Array(PAGE_SIZE))
    slots[at & (PAGE_SIZE - 1)] = fresh
    this.#use(store, fresh, at)
    return fresh.value
  }

  /** An entry found in the store: from the previous generation it moves to the current one. */
  #served(store: ByPosition<T>, placed: Placed<T>, position: number): T {
    if (placed.generation !== store.generation) this.#use(store, placed, position)
    return placed.value
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
