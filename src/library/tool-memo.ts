/**
 * Data derived from single tools of a library (a candidate's name and one-line description, the
 * learned selector's term sets), computed once per tool and library version instead of once per
 * request. A request reads a few dozen candidates; deriving their data again each time (parsing
 * the tool out of the library's buffer, tokenising its text) was a third of the work of a
 * `/v1/select-tools` call.
 *
 * Entries are keyed by the library object: a library is immutable and every new version (an
 * upload, new usage examples) is a new object, so an entry never outlives the tools it was
 * derived from, and a replaced library's entries go with it. Each library keeps at most
 * `2 × generation` entries: when the current generation is full it becomes the previous one (the
 * one before is dropped) and entries read from the previous generation move to the current one,
 * so what requests keep using stays, at the cost of one Map lookup more than an unbounded cache.
 * @module
 */
import type { Tool } from './tool.ts'
import type { ToolLibrary } from './tool-library.ts'

/** Entries per generation; a library keeps up to twice as many. */
export const TOOL_MEMO_GENERATION = 16_384

interface Generations<T> {
  current: Map<string, T>
  previous: Map<string, T>
}

export class ToolMemo<T> {
  readonly #derive: (tool: Tool) => T
  readonly #generation: number
  readonly #libraries = new WeakMap<ToolLibrary, Generations<T>>()

  /** `derive` must depend on the tool alone (never on the request). */
  constructor(derive: (tool: Tool) => T, generation = TOOL_MEMO_GENERATION) {
    this.#derive = derive
    this.#generation = Math.max(1, generation)
  }

  /** The derived data of tool `id` (UNKNOWN_TOOL when the library has none). */
  get(library: ToolLibrary, id: string): T {
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
}
