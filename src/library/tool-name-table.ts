/**
 * Which ids an unknown tool id may have meant: a caller (an agent, a model's tool call) often
 * passes a tool's *name* ("send_sms"), its id in another case or namespace ("SMS.Send_SMS",
 * "mail.send_sms"), or the provider name a `toolFormat` answer gave it ("sms--send_sms"), where
 * the library wants its id ("sms.send_sms").
 *
 * The table keys every id by its last part (after the last ".", "::" or "/"), ASCII letters in
 * lowercase and each run of other ASCII characters as one "_" (`nameKey`), in two
 * `Int32Array`s (bucket heads, then a chain per position; 3 × 4 bytes a tool): made from the ids
 * alone, so a library held as an index's bytes is not parsed for it, once per library version
 * when the first unknown id needs it (ToolLibrary.suggestIds), never a scan per error: at once
 * up to 100k ids (SYNC_NAME_TABLE_TOOLS of tool-library.ts), beyond that in
 * slices of the event loop, the hints coming once it is made. A lookup walks one bucket,
 * comparing keys, and stops at the first few matches (at most MAX_WALK ids).
 *
 * Keys are hashed by HalfSipHash-2-4 under a key drawn at random once per process (round 56;
 * FNV-1a before): the table is never saved, and an upstream's tool names (gateway) or a library's
 * ids made to share one bucket would make the build's chains and each hint's walk long; without
 * the process's key they share one only by chance.
 * @module
 */
import { randomBytes } from 'node:crypto'
import { HalfSipHasher } from './half-siphash.ts'
import { idTableSize, type IdList } from './id-table.ts'
import type { Steps } from '../time-slicer.ts'

/** The key of the table's hash (HalfSipHash-2-4), this process's own. */
const KEY = randomBytes(8)
const K0 = KEY.readUInt32LE(0)
const K1 = KEY.readUInt32LE(4)
/** The scratch of a key's bytes while it is hashed. */
const hasher = new HalfSipHasher()

/** Where an id's last part starts: after the last ".", "::" or "/" (0 when it has none). */
function lastPartStart(id: string): number {
  const colons = id.lastIndexOf('::')
  return Math.max(id.lastIndexOf('.'), colons < 0 ? -1 : colons + 1, id.lastIndexOf('/')) + 1
}

/**
 * What a code unit of an id counts as in its key: ASCII letters in lowercase, ASCII digits and
 * every non-ASCII unit as they are, -1 for a separator (any other ASCII character).
 */
function keyUnit(code: number): number {
  if (code >= 0x41 && code <= 0x5a) return code + 0x20
  if ((code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code >= 0x80) return code
  return -1
}

/**
 * The hash (`keyHash`) of the key of `id.slice(start)` (separator runs as one "_", none at either
 * end), or -1 when the key is empty; `units`, when given, receives the key's code units.
 */
function partKey(id: string, start: number, units?: number[]): number {
  hasher.reset()
  let count = 0
  let pending = false
  for (let at = start; at < id.length; at += 1) {
    const unit = keyUnit(id.charCodeAt(at))
    if (unit === -1) {
      pending = count > 0
      continue
    }
    if (pending) {
      hasher.push(0x5f)
      units?.push(0x5f)
      count += 1
      pending = false
    }
    hasher.push(unit)
    units?.push(unit)
    count += 1
  }
  return count === 0 ? -1 : hasher.digest(K0, K1)
}

/** The table's hash of a key: HalfSipHash-2-4 of its code units under the process's key. */
export function keyHash(key: string): number {
  return hasher.hash(key, K0, K1)
}

/**
 * An id's last part as the table keys it: after the last ".", "::" or "/", ASCII letters in
 * lowercase, each run of other ASCII characters one "_", none at either end (`SMS.Send-SMS` and
 * `send_sms` are `send_sms`). The whole id's key when the last part has none; never empty.
 */
export function nameKey(id: string): string {
  const units: number[] = []
  if (partKey(id, lastPartStart(id), units) === -1 && partKey(id, 0, units) === -1) return id
  // In pieces, not fromCharCode(...units): a saved index's id from before ids were bounded may
  // be longer than one call's arguments may hold (RangeError past ~125,000, round 47).
  let key = ''
  for (let at = 0; at < units.length; at += 8192) {
    key += String.fromCharCode(...units.slice(at, at + 8192))
  }
  return key
}

/** `keyHash(nameKey(id))`, without making the key (the table's build hashes every id). */
export function nameKeyHash(id: string): number {
  const last = partKey(id, lastPartStart(id))
  if (last !== -1) return last
  const whole = partKey(id, 0)
  return whole !== -1 ? whole : keyHash(id)
}

/** Most ids of one bucket a lookup compares: a key that thousands of tools share stays cheap. */
const MAX_WALK = 256

export class ToolNameTable {
  readonly #ids: IdList
  readonly #heads: Int32Array
  readonly #next: Int32Array
  readonly #mask: number

  private constructor(ids: IdList, heads: Int32Array, next: Int32Array) {
    this.#ids = ids
    this.#heads = heads
    this.#next = next
    this.#mask = heads.length - 1
  }

  /** The table of `ids`, as steps (a yield every id): run at once or sliced (time-slicer.ts). */
  static *build(ids: IdList): Steps<ToolNameTable> {
    const heads = new Int32Array(idTableSize(ids.length)).fill(-1)
    const next = new Int32Array(ids.length)
    const mask = heads.length - 1
    // Ascending positions end up first in each chain when inserted from the last one.
    for (let position = ids.length - 1; position >= 0; position -= 1) {
      const slot = nameKeyHash(ids.at(position)!) & mask
      next[position] = heads[slot]
      heads[slot] = position
      yield
    }
    return new ToolNameTable(ids, heads, next)
  }

  /** Positions (ascending) of up to `limit` ids whose key is `name`'s that `accept` lets through. */
  matches(name: string, limit: number, accept: (position: number) => boolean): number[] {
    const key = nameKey(name)
    const found: number[] = []
    let position = this.#heads[keyHash(key) & this.#mask]
    for (let walked = 0; position !== -1 && found.length < limit && walked < MAX_WALK; walked++) {
      if (nameKey(this.#ids.at(position)!) === key && accept(position)) found.push(position)
      position = this.#next[position]
    }
    return found
  }
}
