/**
 * HalfSipHash-2-4 with a 32-bit output (Aumasson and Bernstein's SipHash on 32-bit words, from
 * their reference implementation, halfsiphash.c): a keyed pseudo-random function, so that ids
 * made to share a slot of a table hashed with it can only be found by someone who knows its
 * 64-bit key (`tableHash` of id-table.ts, the gateway name table of tool-name-table.ts). Checked
 * against the reference's test vectors (`vectors_hsip32`: test/library/half-siphash.test.ts).
 * Written here: the npm packages (siphash, siphash24) are SipHash-2-4 with a 64-bit output over
 * whole strings, making a string or an object a call; a table hashes slices of bytes, a million
 * at a load.
 * @module
 */

/**
 * HalfSipHash-2-4 of `bytes[start … end-1]` under the key `k0`, `k1` (the key's bytes 0-3 and
 * 4-7 as little-endian words), 32-bit output as an unsigned number (the reference's 4 output
 * bytes read little-endian).
 */
export function halfSipHash24(
  bytes: Uint8Array,
  start: number,
  end: number,
  k0: number,
  k1: number,
): number {
  let v0 = k0 | 0
  let v1 = k1 | 0
  let v2 = 0x6c796765 ^ k0
  let v3 = 0x74656462 ^ k1
  const whole = end - ((end - start) & 3)
  let at = start
  // One word per turn: a compression of two rounds for each whole word, then the last one (the
  // bytes left and the length's low byte at the top), the 0xff and four rounds.
  for (let last = false, rounds = 2; ;) {
    let m: number
    if (at < whole) {
      m = bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)
      at += 4
    } else if (!last) {
      m = (end - start) << 24
      for (let shift = 0; at < end; at += 1, shift += 8) m |= bytes[at] << shift
      last = true
    } else {
      v2 ^= 0xff
      m = 0
      rounds = 4
    }
    v3 ^= m
    for (let round = 0; round < rounds; round += 1) {
      v0 = (v0 + v1) | 0
      v1 = (v1 << 5) | (v1 >>> 27)
      v1 ^= v0
      v0 = (v0 << 16) | (v0 >>> 16)
      v2 = (v2 + v3) | 0
      v3 = (v3 << 8) | (v3 >>> 24)
      v3 ^= v2
      v0 = (v0 + v3) | 0
      v3 = (v3 << 7) | (v3 >>> 25)
      v3 ^= v0
      v2 = (v2 + v1) | 0
      v1 = (v1 << 13) | (v1 >>> 19)
      v1 ^= v2
      v2 = (v2 << 16) | (v2 >>> 16)
    }
    if (rounds === 4) return (v1 ^ v3) >>> 0
    v0 ^= m
  }
}

/**
 * HalfSipHash-2-4 of code units pushed one at a time (`push`), as bytes: each code unit alone as
 * UTF-8 writes it (1 byte below 0x80, so an ASCII text's bytes are its UTF-8; 2 below 0x800, 3
 * above, a surrogate too: one text, one byte string, two texts never the same one). Into a
 * scratch of its own (grown as needed), so that a hash makes no string or array; one hasher
 * serves every key (a module keeps one: JavaScript runs one hash at a time).
 */
export class HalfSipHasher {
  // A Buffer, as the bytes a load hashes are: `halfSipHash24` reads one kind of array.
  #bytes = Buffer.alloc(256)
  #length = 0

  /** Starts another text. */
  reset(): void {
    this.#length = 0
  }

  push(unit: number): void {
    if (this.#length + 3 > this.#bytes.length) this.#grow(this.#length + 3)
    this.#length = writeUnit(this.#bytes, this.#length, unit)
  }

  /** The hash under the key `k0`, `k1` of the units pushed since the last `reset`. */
  digest(k0: number, k1: number): number {
    return halfSipHash24(this.#bytes, 0, this.#length, k0, k1)
  }

  /** The hash under `k0`, `k1` of `text`'s code units (as `reset`, `push` each, `digest`). */
  hash(text: string, k0: number, k1: number): number {
    if (3 * text.length > this.#bytes.length) this.#grow(3 * text.length)
    const bytes = this.#bytes
    let length = 0
    for (let at = 0; at < text.length; at += 1) {
      const unit = text.charCodeAt(at)
      if (unit < 0x80) bytes[length++] = unit
      else length = writeUnit(bytes, length, unit)
    }
    this.#length = length
    return halfSipHash24(bytes, 0, length, k0, k1)
  }

  /** A scratch of at least `size` bytes, the bytes so far kept. */
  #grow(size: number): void {
    const grown = Buffer.alloc(Math.max(size, 2 * this.#bytes.length))
    grown.set(this.#bytes)
    this.#bytes = grown
  }
}

/** Writes `unit` at `bytes[at]` as UTF-8 writes it alone (1-3 bytes); returns the next offset. */
function writeUnit(bytes: Buffer, at: number, unit: number): number {
  if (unit < 0x80) {
    bytes[at] = unit
    return at + 1
  }
  if (unit < 0x800) {
    bytes[at] = 0xc0 | (unit >>> 6)
    bytes[at + 1] = 0x80 | (unit & 0x3f)
    return at + 2
  }
  bytes[at] = 0xe0 | (unit >>> 12)
  bytes[at + 1] = 0x80 | ((unit >>> 6) & 0x3f)
  bytes[at + 2] = 0x80 | (unit & 0x3f)
  return at + 3
}
