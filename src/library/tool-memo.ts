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
 * A library keeps at most `capacity` entries (32,768 by default). A hit is two array reads and an
 * id comparison and writes nothing. Which misses are kept: src/keep-ring.ts (every tool derived
 * until the library's store is full, then one miss in KEEP_ONE_MISS_IN, in the place of the entry
 * kept longest; the other misses are answered with a value derived for that request only). Until round
 * 45 it was two generations of 16,384 (a full one became the previous one; a hit there moved the
 * entry back): with more distinct tools between two requests for one of them than a generation
 * holds (13,646 candidates per pass of the benchmark instructions at 100k tools, more with a
 * larger library or more varied requests), nearly every lookup derived the tool again and kept
 * it, an entry that lived through scavenges and died in the old generation: the response writer's
 * candidate prefixes had the same policy until round 44 (server/select-response.ts
 * `CandidatePrefixes`; bench/README.md, "Round 45").
 * @module
 */
import type { Tool } from './tool.ts'
import type { ToolLibrary } from './tool-library.ts'
import { KeepRing } from '../keep-ring.ts'

/** Entries a library keeps (the old policy's bound: two generations of 16,384). */
export const TOOL_MEMO_KEPT = 32_768

/** Positions per page of the positional store (pages are made when a position in them is used). */
const PAGE_BITS = 12
const PAGE_SIZE = 1 << PAGE_BITS

interface Placed<T> {
  readonly id: string
  readonly value: T
}

/** Entries by library position, in pages of PAGE_SIZE slots. */
interface ByPosition<T> {
  readonly pages: Array<Array<Placed<T> | undefined> | undefined>
  /** The positions kept (which misses are: src/keep-ring.ts). */
  readonly kept: KeepRing<number>
}

export class ToolMemo<T> {
  readonly #derive: (tool: Tool, position: number) => T
  readonly #capacity: number
  readonly #positions = new WeakMap<ToolLibrary, ByPosition<T>>()

  /**
   * `derive` must depend on the tool alone (never on the request); it also gets the tool's
   * position in the library, which a caller may keep to find data of its own by position.
   * `capacity`: entries kept per library.
   */
  constructor(derive: (tool: Tool, position: number) => T, capacity = TOOL_MEMO_KEPT) {
    this.#derive = derive
    this.#capacity = Math.max(1, Math.floor(capacity))
  }

  /** Entries kept for `library` (for tests). */
  size(library: ToolLibrary): number {
    return this.#positions.get(library)?.kept.size ?? 0
  }

  /**
   * The derived data of tool `id` (UNKNOWN_TOOL when the library has none). `position`: where the
   * caller believes `id` sits in the library (a hint; a wrong one costs a lookup by id).
   */
  get(library: ToolLibrary, id: string, position?: number): T {
    let store = this.#positions.get(library)
    if (store === undefined) {
      const pages: ByPosition<T>['pages'] = []
      const kept = new KeepRing<number>(this.#capacity, (old) => {
        pages[old >>> PAGE_BITS]![old & (PAGE_SIZE - 1)] = undefined
      })
      store = { pages, kept }
      this.#positions.set(library, store)
    }
    if (position !== undefined) {
      const placed = store.pages[position >>> PAGE_BITS]?.[position & (PAGE_SIZE - 1)]
      if (placed !== undefined && placed.id === id) return placed.value
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
      if (placed !== undefined && placed.id === id) return placed.value
    }
    // A miss: position `at` holds no entry (a library's positions never change, so an entry
    // there is always this id's).
    const value = this.#derive(library.at(at), at)
    if (!store.kept.admit(at)) return value
    const slots = (store.pages[at >>> PAGE_BITS] ??= new Array(PAGE_SIZE))
    slots[at & (PAGE_SIZE - 1)] = { id, value }
    return value
  }
}
