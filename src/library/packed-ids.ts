/**
 * Tool ids kept as the bytes of an index's ids section (a JSON array of strings) and decoded one
 * at a time when asked for. A load used to decode all of them: at a million tools 40 MB of text
 * made into a million strings (a second of start-up on a busy machine, and tens of MiB of JS
 * heap that every garbage collection walks); a request needs the ids of its few dozen hits.
 * @module
 */
import { halfSipHash24 } from './half-siphash.ts'
import { fmix32, tableHash, type IdList, type TableKey } from './id-table.ts'
import { runSteps, type Steps } from '../time-slicer.ts'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c

/** Ids (or ranks) checked between two yields of the step versions: well under a millisecond. */
const STEP_ITEMS = 4096

/** Decoded ids a PackedIds keeps at most (a power of two; about 5 MiB of strings at most). */
const MAX_DECODED_SLOTS = 65_536

/**
 * `tableHash` under `key` of the ids at positions from … to-1 (bytes `bounds`, `escaped`:
 * PackedIds') into `hashes`: an id of ASCII bytes hashed from them (its UTF-16 code units are its
 * bytes), others (escaped, non-ASCII: a few) decoded and hashed as strings.
 */
function hashInto(
  bytes: Buffer,
  bounds: Uint32Array,
  escaped: ReadonlyMap<number, string>,
  hashes: Uint32Array,
  range: { from: number; to: number; key: TableKey },
): void {
  const { from, to, key } = range
  const sip = key.hash === 'halfsiphash-2-4'
  // FNV-1a's basis (XOR the seed of round 55's hash: tableHash) and prime as literals: read from
  // id-table.ts's imports in this loop, 10× slower under tsx (55 vs 4 ms at 100k ids).
  const basis = (0x811c9dc5 ^ (key.hash === 'fnv-1a-seeded' ? key.seed : 0)) >>> 0
  for (let position = from; position < to; position += 1) {
    const start = bounds[2 * position]
    const end = bounds[2 * position + 1]
    let hash = basis
    let at = start
    for (; at < end; at += 1) {
      const byte = bytes[at]
      if (byte >= 0x80) break
      if (sip) continue
      hash ^= byte
      hash = Math.imul(hash, 0x01000193)
    }
    const text =
      escaped.size > 0 && escaped.has(position)
        ? escaped.get(position)!
        : at < end
          ? bytes.toString('utf8', start, end)
          : undefined
    hashes[position] =
      text !== undefined
        ? tableHash(text, key)
        : sip
          ? halfSipHash24(bytes, start, end, key.k0, key.k1)
          : key.hash === 'fnv-1a'
            ? hash >>> 0
            : fmix32(hash)
  }
}

/** Slots for `length` ids: the next power of two ≥ length, at most MAX_DECODED_SLOTS. */
function slotsFor(length: number): number {
  let slots = 1
  while (slots < length && slots < MAX_DECODED_SLOTS) slots *= 2
  return slots
}

export class PackedIds implements IdList {
  readonly length: number
  readonly #bytes: Buffer
  /** Id p is bytes bounds[2p] … bounds[2p+1]-1 (without its quotes). */
  readonly #bounds: Uint32Array
  /** The ids written with JSON escapes (`\"`, `\\`, `\u…`), decoded at load: a few. */
  readonly #escaped: Map<number, string>
  /**
   * Ids decoded lately: requests keep asking for the same tools' ids (hits, BM25's tie order,
   * lookups). Two-way set-associative: position p lives in one of the two slots of set
   * p mod (`decodedSlots` / 2) (`2 × set`, the one read last, and `2 × set + 1`; their positions
   * in `#slotPositions`, -1 when empty) until two other positions of that set are decoded after
   * it, so a hit costs two or four array reads (BM25 asks for ids on every tie of its heap), not
   * a Map lookup. Two ways, not one: past 65,536 tools positions p and p + 65,536 shared a slot,
   * and a request whose hits held both (a library's near-copies tie) decoded both ids again on
   * every request (2.3 decodes per `selectTools` call at 100k, 0 at 10k). Sized to the list (a
   * 10-tool library gets 16 slots, not MAX_DECODED_SLOTS' ~0.8 MiB).
   */
  readonly #slotPositions: Int32Array
  readonly #slotIds: string[]
  /** `decodedSlots / 2 - 1`: a position's set is `position & #setMask`. */
  readonly #setMask: number
  readonly #slots: number
  /** Each position's rank in id order (`idRanks`), when the index saved one: ties without bytes. */
  readonly #ranks: Int32Array | undefined

  private constructor(
    bytes: Buffer,
    bounds: Uint32Array,
    escaped: Map<number, string>,
    ranks: Int32Array | undefined,
  ) {
    this.#bytes = bytes
    this.#bounds = bounds
    this.#escaped = escaped
    this.#ranks = ranks
    this.length = bounds.length / 2
    const slots = slotsFor(this.length)
    // One set of two slots at least (a list of one id has one set, of which it uses one slot).
    const allocated = Math.max(2, slots)
    this.#slotPositions = new Int32Array(allocated).fill(-1)
    this.#slotIds = new Array<string>(allocated).fill('')
    this.#setMask = allocated / 2 - 1
    this.#slots = slots
  }

  /**
   * The ids section these ids were read from (a JSON array) and its ranks, when it had them: what
   * a save of the unchanged library writes again (`KnownToolLines.ids`) without decoding an id.
   */
  get saved(): { json: Buffer; ranks: Int32Array | undefined } {
    return { json: this.#bytes, ranks: this.#ranks }
  }

  /** How many decoded ids this list keeps at most (a power of two ≤ 65,536, ≥ its length below that). */
  get decodedSlots(): number {
    return this.#slots
  }

  /**
   * The ids of `bytes`, a JSON array of `count` strings as `JSON.stringify` writes it (no
   * spaces); `undefined` when it is not one (the caller parses it as JSON, and reports it).
   * `ranks`: `idRanks` of these ids (checked by the caller to be a permutation of 0 … count-1),
   * for `after`.
   */
  static of(bytes: Buffer, count: number, ranks?: Int32Array): PackedIds | undefined {
    return runSteps(PackedIds.ofSteps(bytes, count, ranks))
  }

  /** `of` as steps (`runStepsSliced`: a load or an upload's adoption of 90k ids off one piece). */
  static *ofSteps(bytes: Buffer, count: number, ranks?: Int32Array): Steps<PackedIds | undefined> {
    const last = bytes.length - 1
    if (last >= 2 ** 32 || last < 1 || bytes[0] !== 0x5b || bytes[last] !== 0x5d) return undefined
    // Where the backslashes are (ids with escapes are rare): one pass, then a pointer into it.
    const backslashes: number[] = []
    for (let at = bytes.indexOf(BACKSLASH); at !== -1; at = bytes.indexOf(BACKSLASH, at + 1))
      backslashes.push(at)
    backslashes.push(Infinity)
    yield
    const bounds = new Uint32Array(count * 2)
    const escaped = new Map<number, string>()
    let next = 0
    let at = 1
    for (let id = 0; id < count; id += 1) {
      if (id % STEP_ITEMS === STEP_ITEMS - 1) yield
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
    return at === last ? new PackedIds(bytes, bounds, escaped, ranks) : undefined
  }

  /**
   * Positions (ascending) whose id may hold a character `refusedNameCharacter` finds, found
   * without decoding the ids (a load checks a million ids this way: a few native byte searches).
   * JSON.stringify writes C0 controls and lone surrogates as `\u` escapes, so those ids are among
   * the few decoded at load (`#escaped`); the others are raw UTF-8 with a rare lead: DEL (7F), C1
   * (C2 80-9F), U+202A-202E (E2 80 AA-AE), U+2066-2069 (E2 81 A6-A9). The caller checks each id
   * it gets (an escaped id is listed whatever it holds).
   */
  suspectPositions(): number[] {
    const bytes = this.#bytes
    const found = new Set<number>(this.#escaped.keys())
    for (let at = bytes.indexOf(0x7f); at !== -1; at = bytes.indexOf(0x7f, at + 1)) {
      found.add(this.#positionOfByte(at))
    }
    for (let at = bytes.indexOf(0xc2); at !== -1; at = bytes.indexOf(0xc2, at + 1)) {
      const next = bytes[at + 1]
      if (next >= 0x80 && next <= 0x9f) found.add(this.#positionOfByte(at))
    }
    for (let at = bytes.indexOf(0xe2); at !== -1; at = bytes.indexOf(0xe2, at + 1)) {
      const [second, third] = [bytes[at + 1], bytes[at + 2]]
      if (
        (second === 0x80 && third >= 0xaa && third <= 0xae) ||
        (second === 0x81 && third >= 0xa6 && third <= 0xa9)
      )
        found.add(this.#positionOfByte(at))
    }
    return [...found].sort((a, b) => a - b)
  }

  /**
   * Positions (ascending) whose id's bytes (as saved: UTF-8, or JSON escapes) are more than
   * `bytes`, without decoding any: an id is never longer in UTF-16 code units than in those bytes,
   * so every id longer than `bytes` characters is among them (the caller checks each).
   */
  longerThan(bytes: number): number[] {
    const bounds = this.#bounds
    const found: number[] = []
    for (let position = 0; position < this.length; position += 1) {
      if (bounds[2 * position + 1] - bounds[2 * position] > bytes) found.push(position)
    }
    return found
  }

  /** The position of the id whose bytes hold byte offset `at` (ids' bytes only hold ids' bytes). */
  #positionOfByte(at: number): number {
    const bounds = this.#bounds
    let low = 0
    let high = this.length - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (bounds[2 * middle] <= at) low = middle
      else high = middle - 1
    }
    return low
  }

  at(position: number): string | undefined {
    if (!(Number.isInteger(position) && position >= 0 && position < this.length)) return undefined
    const positions = this.#slotPositions
    const ids = this.#slotIds
    const recent = (position & this.#setMask) << 1
    if (positions[recent] === position) return ids[recent]
    const older = recent + 1
    let id: string
    if (positions[older] === position) {
      id = ids[older]
    } else {
      id =
        this.#escaped.get(position) ??
        this.#bytes.toString('utf8', this.#bounds[2 * position], this.#bounds[2 * position + 1])
    }
    // The id read last goes first; the other one of the set second (the older one drops out).
    positions[older] = positions[recent]
    ids[older] = ids[recent]
    positions[recent] = position
    ids[recent] = id
    return id
  }

  /**
   * `tableHash` under `key` of every id, by position, without making the strings of ids of ASCII
   * bytes (UTF-8's ASCII bytes are their UTF-16 code units): a load hashes every id to check the
   * id table it read (`isIdTableSteps`; ~4 ms at 100k ids). Others (escaped, non-ASCII: a few)
   * are decoded, outside the decoded-id cache.
   */
  *hashesSteps(key: TableKey): Steps<Uint32Array> {
    const hashes = new Uint32Array(this.length)
    // STEP_ITEMS ids between two yields (~0.3 ms).
    for (let from = 0; from < this.length; from += STEP_ITEMS) {
      if (from > 0) yield
      hashInto(this.#bytes, this.#bounds, this.#escaped, hashes, {
        from,
        to: Math.min(this.length, from + STEP_ITEMS),
        key,
      })
    }
    return hashes
  }

  /**
   * `at(a)! > at(b)!` without decoding the ids (BM25 asks on every tie of its heap; at 100k tools
   * a decoded id was often not among the ones kept, and decoding made a string each time). With
   * the ranks an index saved, two array reads (a position out of range reads `undefined`, and
   * compares false, as `at` does); without them, from the ids' bytes. The bytes are UTF-8, whose
   * byte order is code point order; JavaScript compares UTF-16 code units, which orders some
   * characters differently, so ids that first differ at a non-ASCII byte, or are written with
   * escapes, are compared as strings.
   */
  after(a: number, b: number): boolean {
    const ranks = this.#ranks
    if (ranks !== undefined) return ranks[a] > ranks[b]
    if (
      !(Number.isInteger(a) && a >= 0 && a < this.length) ||
      !(Number.isInteger(b) && b >= 0 && b < this.length) ||
      (this.#escaped.size > 0 && (this.#escaped.has(a) || this.#escaped.has(b)))
    ) {
      return this.at(a)! > this.at(b)!
    }
    const bytes = this.#bytes
    const bounds = this.#bounds
    let i = bounds[2 * a]
    let j = bounds[2 * b]
    const aEnd = bounds[2 * a + 1]
    const bEnd = bounds[2 * b + 1]
    for (; i < aEnd && j < bEnd; i += 1, j += 1) {
      const x = bytes[i]
      const y = bytes[j]
      if (x !== y) return x < 0x80 && y < 0x80 ? x > y : this.at(a)! > this.at(b)!
    }
    // One is a prefix of the other (or they are equal): the longer sorts after.
    return i < aEnd
  }
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function escapedAt(bytes: Buffer, at: number): boolean {
  let before = at - 1
  while (bytes[before] === BACKSLASH) before -= 1
  return (at - 1 - before) % 2 === 1
}

/**
 * Each position's rank among `ids` in JavaScript string order (UTF-16 code units, as `<`
 * compares): `ranks[a] > ranks[b]` exactly when `ids[a] > ids[b]` (ids are unique). Saved in
 * `tools.idx` so that BM25's ties by id read two numbers instead of two ids' bytes.
 */
export function idRanks(ids: readonly string[]): Int32Array {
  const order = Int32Array.from({ length: ids.length }, (_, position) => position)
  order.sort((a, b) => (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0))
  const ranks = new Int32Array(ids.length)
  for (let rank = 0; rank < order.length; rank += 1) ranks[order[rank]] = rank
  return ranks
}

/** Whether `ranks` holds each of 0 … length-1 once (a saved rank section that can be used). */
export function isPermutation(ranks: Int32Array): boolean {
  return runSteps(isPermutationSteps(ranks))
}

/** `isPermutation` as steps. */
export function* isPermutationSteps(ranks: Int32Array): Steps<boolean> {
  const length = ranks.length
  const seen = new Uint8Array(length)
  for (let position = 0; position < length; position += 1) {
    if (position % STEP_ITEMS === STEP_ITEMS - 1) yield
    const rank = ranks[position]
    if (!(rank >= 0 && rank < length) || seen[rank] === 1) return false
    seen[rank] = 1
  }
  return true
}
