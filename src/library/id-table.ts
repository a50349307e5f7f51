/**
 * Tool id → position as a flat hash table (open addressing, linear probing) in one `Int32Array`,
 * so that an index can store it (`tools.idx`) and a load reads it instead of filling a `Map` of
 * a million entries (about 1.4 s and 100 MiB of JS heap at 1M tools). Lookups hash the id and
 * compare candidates with `ids[position]`, so a wrong table can only miss, never answer another
 * tool.
 * @module
 */

/**
 * Tool ids by position: an array, or ids decoded one at a time from an index's bytes
 * (`PackedIds`, packed-ids.ts), which a load fills without making a million strings.
 */
export interface IdList {
  readonly length: number
  /** The id at `position` (0 … length-1). */
  at(position: number): string | undefined
  /**
   * Whether the id at `a` sorts after the id at `b` (`at(a)! > at(b)!`), when the list can tell
   * without making the two strings (BM25 breaks every tie of scores by id).
   */
  after?(a: number, b: number): boolean
}

/** The ids of `list` as an array (the list itself when it is one). */
export function idArray(list: IdList): readonly string[] {
  return Array.isArray(list) ? list : Array.from({ length: list.length }, (_, at) => list.at(at)!)
}

/** FNV-1a's 32-bit offset basis and prime (`idHash`; tokenize.ts hashes query chunks inline). */
export const FNV_OFFSET = 0x811c9dc5
export const FNV_PRIME = 0x01000193

/**
 * FNV-1a over the id's UTF-16 code units, 32-bit (also the word hash of models/: one function for
 * every FNV-1a table). `start`/`end`: hash `id.slice(start, end)` without making it a string.
 */
export function idHash(id: string, start = 0, end = id.length): number {
  let hash = FNV_OFFSET
  for (let at = start; at < end; at += 1) {
    hash ^= id.charCodeAt(at)
    hash = Math.imul(hash, FNV_PRIME)
  }
  return hash >>> 0
}

/** Table slots for `count` ids: a power of two, at least twice `count` (load factor ≤ 0.5). */
export function idTableSize(count: number): number {
  let size = 8
  while (size < count * 2) size *= 2
  return size
}

/**
 * The table of `ids` (slot → position, -1 empty). Returns the position of the first repeated id
 * instead when two positions share an id.
 */
export function buildIdTable(ids: readonly string[]): Int32Array | { duplicate: number } {
  const table = new Int32Array(idTableSize(ids.length)).fill(-1)
  const mask = table.length - 1
  for (let position = 0; position < ids.length; position += 1) {
    const id = ids[position]
    let slot = idHash(id) & mask
    while (table[slot] !== -1) {
      if (ids[table[slot]] === id) return { duplicate: position }
      slot = (slot + 1) & mask
    }
    table[slot] = position
  }
  return table
}

/** Lookups in a table built by `buildIdTable` (or read from an index) over `ids`. */
export class IdTable {
  readonly #ids: IdList
  readonly #table: Int32Array
  readonly #mask: number

  /** `table.length` must be a power of two (the index reader checks it). */
  constructor(ids: IdList, table: Int32Array) {
    this.#ids = ids
    this.#table = table
    this.#mask = table.length - 1
  }

  /** The slots (slot → position, -1 empty): what `tools.idx` saves of them (`ToolLibrary.checkedToolsFile`). */
  get slots(): Int32Array {
    return this.#table
  }

  get(id: string): number | undefined {
    let slot = idHash(id) & this.#mask
    // At most every slot once: a damaged table without an empty slot ends the search too.
    for (let probes = 0; probes < this.#table.length; probes += 1) {
      const position = this.#table[slot]
      if (position === -1) return undefined
      if (this.#ids.at(position) === id) return position
      slot = (slot + 1) & this.#mask
    }
    return undefined
  }

  has(id: string): boolean {
    return this.get(id) !== undefined
  }
}
