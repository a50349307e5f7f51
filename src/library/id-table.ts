/**
 * Tool id → position as a flat hash table (open addressing, linear probing) in one `Int32Array`,
 * so that an index can store it (`tools.idx`) and a load reads it instead of filling a `Map` of
 * a million entries (about 1.4 s and 100 MiB of JS heap at 1M tools). Lookups hash the id and
 * compare candidates with `ids[position]`, so a wrong table can only miss, never answer another
 * tool; a load checks a saved one (`isIdTableSteps`) so that it neither misses nor is saved again.
 * @module
 */
import { createHash } from 'node:crypto'
import type { Steps } from '../time-slicer.ts'
import { HalfSipHasher } from './half-siphash.ts'

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
  /**
   * `tableHash` under `key` of every id by position, when the list can make them without the
   * strings (`isIdTableSteps`).
   */
  hashesSteps?(key: TableKey): Steps<Uint32Array>
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
 * every FNV-1a table). `start`/`end`: hash `id.slice(start, end)` without making it a string;
 * `basis`: another offset basis (`tableHash`'s keyed one).
 */
export function idHash(id: string, start = 0, end = id.length, basis = FNV_OFFSET): number {
  let hash = basis
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
 * fmix32, MurmurHash3's finaliser: a bijection of 32 bits whose every output bit depends on every
 * input bit, so that the table's masked low bits do not depend on the low bits of the FNV-1a state
 * alone (those depend only on the low bits of the basis and of each code unit: ids that differ
 * above them share a slot, offline and for every basis).
 */
export function fmix32(hash: number): number {
  hash ^= hash >>> 16
  hash = Math.imul(hash, 0x85ebca6b)
  hash ^= hash >>> 13
  hash = Math.imul(hash, 0xc2b2ae35)
  hash ^= hash >>> 16
  return hash >>> 0
}

/**
 * The hash of an id table and its key, as `tools.idx` names them (`tableHash`):
 * - `halfsiphash-2-4` (since round 56): HalfSipHash-2-4 (half-siphash.ts, a keyed pseudo-random
 *   function) of the id's code units (`HalfSipHasher`: an ASCII id's bytes are its UTF-8) under
 *   the 64-bit key `k0`, `k1`, drawn from the ids by each build (`idTableKeys`);
 * - `fnv-1a-seeded` (tables saved in round 55): FNV-1a from the basis XOR `seed`, finalised by
 *   `fmix32`. Its collisions depend only on the seed's low 16 bits (and a seed drawn from the ids
 *   is ground by one more id): ids built offline still shared a slot, whence round 56's hash;
 * - `fnv-1a` (tables saved before round 55): `idHash`, unkeyed.
 * The last two are read as they were saved (a load checks the table with its own hash); a save
 * builds a `halfsiphash-2-4` table.
 */
export type TableKey =
  | { readonly hash: 'halfsiphash-2-4'; readonly k0: number; readonly k1: number }
  | { readonly hash: 'fnv-1a-seeded'; readonly seed: number }
  | { readonly hash: 'fnv-1a' }

/** Round 56's `TableKey`: what `idTableKeys` draws. */
export type HalfSipKey = Extract<TableKey, { hash: 'halfsiphash-2-4' }>

/** The hash of tables saved before round 55 (`TableKey`). */
export const UNKEYED: TableKey = { hash: 'fnv-1a' }

/** `tableHash`'s scratch for the bytes of an id. */
const hasher = new HalfSipHasher()

/**
 * The id table's hash of `id` under `key` (`TableKey`). Ids made offline to share a slot of
 * `halfsiphash-2-4` need the key, and the key is drawn from every id (`idTableKeys`): a changed
 * id changes it, so ids that share slots under their own key are found only by chance, as at
 * random (the unkeyed hash's slots were easy to compute: a cluster of N such ids made the build
 * and the load's check quadratic and each lookup of one walk N slots). Not the hash of models/
 * (`idHash`, unchanged).
 */
export function tableHash(id: string, key: TableKey): number {
  switch (key.hash) {
    case 'halfsiphash-2-4':
      return hasher.hash(id, key.k0, key.k1)
    case 'fnv-1a-seeded':
      return fmix32(idHash(id, 0, id.length, FNV_OFFSET ^ key.seed))
    default:
      return idHash(id)
  }
}

/**
 * The keys `buildIdTable` tries for `ids`, in order: the 64-bit words of the sha256 of the ids
 * (each followed by a NUL), each as two little-endian 32-bit words. Drawn from the ids, not at
 * random, so that a library's saved index stays the same bytes at every save; an attacker who
 * knows the ids knows the key, but to choose ids that share slots under it would have to choose
 * them before it is known: any changed id changes it.
 */
export function idTableKeys(ids: readonly string[]): HalfSipKey[] {
  const hash = createHash('sha256')
  // In joined pieces of up to 4,096 ids: one update per id costs more.
  for (let from = 0; from < ids.length; from += 4096)
    hash.update(ids.slice(from, from + 4096).join('\0') + '\0', 'utf8')
  const digest = hash.digest()
  return Array.from({ length: MAX_KEYS }, (_, at) => ({
    hash: 'halfsiphash-2-4' as const,
    k0: digest.readUInt32LE(8 * at),
    k1: digest.readUInt32LE(8 * at + 4),
  }))
}

/** A table of `buildIdTable`: the slots (slot → position, -1 empty) and the key of their hash. */
export interface BuiltIdTable<K extends TableKey = TableKey> {
  slots: Int32Array
  /** `tableHash`'s key (a table read from an index saved before round 56: another hash). */
  key: K
}

/**
 * The longest probe path `buildIdTable` accepts from a key before it draws another: at a load
 * factor of at most 0.5 and a random hash, a path this long is all but impossible at a million
 * ids (the longest measured: ~20), so one means ids that collide under this key.
 */
export const MAX_ID_TABLE_PROBE = 64

/** Keys `buildIdTable` tries at most (4 × 64 bits: a sha256); the last one's table is kept. */
const MAX_KEYS = 4

/**
 * The table of `ids` under the first of `keys` (`idTableKeys`; tests give their own) whose
 * probe paths all stay within MAX_ID_TABLE_PROBE, so that the build costs O(ids ×
 * MAX_ID_TABLE_PROBE) per key; the last key's table is kept whatever its paths. Returns the
 * position of the first repeated id instead when two positions share an id.
 */
export function buildIdTable(
  ids: readonly string[],
): BuiltIdTable<HalfSipKey> | { duplicate: number }
export function buildIdTable<K extends TableKey>(
  ids: readonly string[],
  keys: readonly K[],
): BuiltIdTable<K> | { duplicate: number }
export function buildIdTable(
  ids: readonly string[],
  keys: readonly TableKey[] = idTableKeys(ids),
): BuiltIdTable | { duplicate: number } {
  const slots = new Int32Array(idTableSize(ids.length))
  for (let tried = 0; ; tried += 1) {
    const built = fillIdTable(ids, slots, keys[tried], tried < keys.length - 1)
    if (built !== 'too long') return built
  }
}

/** `buildIdTable` with one key; 'too long' when `bounded` and a probe path passes the bound. */
function fillIdTable(
  ids: readonly string[],
  table: Int32Array,
  key: TableKey,
  bounded: boolean,
): BuiltIdTable | { duplicate: number } | 'too long' {
  table.fill(-1)
  const mask = table.length - 1
  const limit = bounded ? MAX_ID_TABLE_PROBE : table.length
  for (let position = 0; position < ids.length; position += 1) {
    const id = ids[position]
    let slot = tableHash(id, key) & mask
    for (let probe = 0; table[slot] !== -1; probe += 1) {
      if (ids[table[slot]] === id) return { duplicate: position }
      if (probe >= limit) return 'too long'
      slot = (slot + 1) & mask
    }
    table[slot] = position
  }
  return { slots: table, key }
}

/**
 * The longest probe path of `table` over `ids` (slots a lookup of the worst-placed id walks past
 * before its own): what hash flooding lengthens (tests, bench/id-table-flood.ts).
 */
export function longestIdProbe(ids: IdList, table: BuiltIdTable): number {
  const { slots, key } = table
  const mask = slots.length - 1
  let longest = 0
  for (let slot = 0; slot < slots.length; slot += 1) {
    if (slots[slot] === -1) continue
    const distance = (slot - (tableHash(ids.at(slots[slot])!, key) & mask)) & mask
    if (distance > longest) longest = distance
  }
  return longest
}

/** Table slots checked between two yields of `isIdTableSteps` (each a hash of an id at most). */
const STEP_ITEMS = 8192

/**
 * Whether `table` (slots in range: -1 … ids.length-1, checked by the caller; a power of two long)
 * is one `buildIdTable` could have made of `ids`, so that `IdTable.get` finds every position by
 * its id: each position in exactly one slot, with no empty slot between its id's hash slot and its
 * own (linear probing), and no other position of the same id before it on that path. A load
 * checks the table it reads (`tools.idx`): a misplaced slot in a damaged file made lookups of that
 * id miss, and a re-save writes the loaded table again (round 54) instead of building one.
 * O(slots + total probe distance), ids hashed without decoding them (`IdList.hashesSteps`).
 */
export function* isIdTableSteps(ids: IdList, table: Int32Array, key: TableKey): Steps<boolean> {
  // An empty slot ends every lookup's probe path (buildIdTable leaves half the slots empty).
  const empty = table.indexOf(-1)
  if (empty === -1) return false
  const hashes = ids.hashesSteps ? yield* ids.hashesSteps(key) : yield* tableHashesSteps(ids, key)
  const walk: TableWalk = {
    ids,
    table,
    hashes,
    seen: new Uint8Array(ids.length),
    found: 0,
    runStart: (empty + 1) & (table.length - 1),
  }
  // From the slot after an empty one, so that each run of full slots is walked from its start;
  // STEP_ITEMS slots between two yields.
  for (let step = 1; step <= table.length; step += STEP_ITEMS) {
    if (step > 1) yield
    const to = Math.min(table.length + 1, step + STEP_ITEMS)
    if (!walkTable(walk, empty + step, empty + to)) return false
  }
  return walk.found === ids.length
}

interface TableWalk {
  ids: IdList
  table: Int32Array
  hashes: Uint32Array
  /** Positions met so far (each must be met once). */
  seen: Uint8Array
  found: number
  /** The first slot of the run of full slots being walked. */
  runStart: number
}

/** Walks slots from … to-1 (mod the table's size) of `isIdTableSteps`; false at a wrong one. */
function walkTable(walk: TableWalk, from: number, to: number): boolean {
  const { ids, table, hashes, seen } = walk
  const mask = table.length - 1
  for (let step = from; step < to; step += 1) {
    const slot = step & mask
    const position = table[slot]
    if (position === -1) {
      walk.runStart = (slot + 1) & mask
      continue
    }
    if (!(position >= 0 && position < ids.length) || seen[position] === 1) return false
    seen[position] = 1
    walk.found += 1
    const hash = hashes[position]
    const distance = (slot - (hash & mask)) & mask
    if (distance > ((slot - walk.runStart) & mask)) return false
    // The same id earlier on its path: `get` would never reach this one. (A run is short: half
    // the slots are empty; a damaged table's long run costs its length per slot, at load only.)
    for (let back = distance; back > 0; back -= 1) {
      const other = table[(slot - back) & mask]
      if (hashes[other] === hash && ids.at(other) === ids.at(position)) return false
    }
  }
  return true
}

/** `tableHash` under `key` of every id of `ids` by position. */
function* tableHashesSteps(ids: IdList, key: TableKey): Steps<Uint32Array> {
  const hashes = new Uint32Array(ids.length)
  for (let from = 0; from < ids.length; from += STEP_ITEMS) {
    if (from > 0) yield
    const to = Math.min(ids.length, from + STEP_ITEMS)
    for (let position = from; position < to; position += 1)
      hashes[position] = tableHash(ids.at(position)!, key)
  }
  return hashes
}

/** Lookups in a table built by `buildIdTable` (or read from an index) over `ids`. */
export class IdTable {
  readonly #ids: IdList
  readonly #table: Int32Array
  readonly #mask: number
  readonly #key: TableKey

  /** `table.slots.length` must be a power of two (the index reader checks it). */
  constructor(ids: IdList, table: BuiltIdTable) {
    this.#ids = ids
    this.#table = table.slots
    this.#key = table.key
    this.#mask = table.slots.length - 1
  }

  /**
   * The slots (slot → position, -1 empty) and their hash's key: what `tools.idx` saves of them
   * (`ToolLibrary.checkedToolsFile`).
   */
  get built(): BuiltIdTable {
    return { slots: this.#table, key: this.#key }
  }

  get(id: string): number | undefined {
    let slot = tableHash(id, this.#key) & this.#mask
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
