/**
 * Tool ids kept as the bytes of an index's ids section (a JSON array of strings) and decoded one
 * at a time when asked for. A load used to decode all of them: at a million tools 40 MB of text
 * made into a million strings (a second of start-up on a busy machine, and tens of MiB of JS
 * heap that every garbage collection walks); a request needs the ids of its few dozen hits.
 * @module
 */
import type { IdList } from './id-table.ts'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c

/** Decoded ids a PackedIds keeps (a power of two; about 5 MiB of strings at most). */
const DECODED_SLOTS = 65_536

export class PackedIds implements IdList {
  readonly length: number
  readonly #bytes: Buffer
  /** Id p is bytes bounds[2p] … bounds[2p+1]-1 (without its quotes). */
  readonly #bounds: Uint32Array
  /** The ids written with JSON escapes (`\"`, `\\`, `\u…`), decoded at load: a few. */
  readonly #escaped: Map<number, string>
  /**
   * Ids decoded lately: requests keep asking for the same tools' ids (hits, BM25's tie order,
   * lookups). Direct-mapped: position p lives in slot p mod DECODED_SLOTS (its position in
   * `#slotPositions`, -1 when empty) until another position of that slot is decoded, so a hit
   * costs two array reads (BM25 asks for ids on every tie of its heap), not a Map lookup.
   */
  readonly #slotPositions = new Int32Array(DECODED_SLOTS).fill(-1)
  readonly #slotIds = new Array<string>(DECODED_SLOTS).fill('')

  private constructor(bytes: Buffer, bounds: Uint32Array, escaped: Map<number, string>) {
    this.#bytes = bytes
    this.#bounds = bounds
    this.#escaped = escaped
    this.length = bounds.length / 2
  }

  /**
   * The ids of `bytes`, a JSON array of `count` strings as `JSON.stringify` writes it (no
   * spaces); `undefined` when it is not one (the caller parses it as JSON, and reports it).
   */
  static of(bytes: Buffer, count: number): PackedIds | undefined {
    const last = bytes.length - 1
    if (last >= 2 ** 32 || last < 1 || bytes[0] !== 0x5b || bytes[last] !== 0x5d) return undefined
    // Where the backslashes are (ids with escapes are rare): one pass, then a pointer into it.
    const backslashes: number[] = []
    for (let at = bytes.indexOf(BACKSLASH); at !== -1; at = bytes.indexOf(BACKSLASH, at + 1))
      backslashes.push(at)
    backslashes.push(Infinity)
    const bounds = new Uint32Array(count * 2)
    const escaped = new Map<number, string>()
    let next = 0
    let at = 1
    for (let id = 0; id < count; id += 1) {
      if (id > 0) {
        if (bytes[at] !== COMMA) return undefined
        at += 1
      }
      if (bytes[at] !== QUOTE) return undefined
      const start = at + 1
      let end = bytes.indexOf(QUOTE, start)
      while (end !== -1 && escapedAt(bytes, end)) end = bytes.indexOf(QUOTE, end + 1)
      if (end === -1 || end >= last) return undefined
      bounds[2 * id] = start
      bounds[2 * id + 1] = end
      while (backslashes[next] < start) next += 1
      if (backslashes[next] < end) {
        try {
          escaped.set(id, JSON.parse(bytes.toString('utf8', start - 1, end + 1)) as string)
        } catch {
          return undefined
        }
      }
      at = end + 1
    }
    return at === last ? new PackedIds(bytes, bounds, escaped) : undefined
  }

  at(position: number): string | undefined {
    if (!(Number.isInteger(position) && position >= 0 && position < this.length)) return undefined
    const slot = position & (DECODED_SLOTS - 1)
    if (this.#slotPositions[slot] === position) return this.#slotIds[slot]
    const id =
      this.#escaped.get(position) ??
      this.#bytes.toString('utf8', this.#bounds[2 * position], this.#bounds[2 * position + 1])
    this.#slotPositions[slot] = position
    this.#slotIds[slot] = id
    return id
  }
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function escapedAt(bytes: Buffer, at: number): boolean {
  let before = at - 1
  while (bytes[before] === BACKSLASH) before -= 1
  return (at - 1 - before) % 2 === 1
}
