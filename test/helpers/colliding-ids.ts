/**
 * Tool ids made to share one slot of the unkeyed id table (`idHash`, FNV-1a, masked), as an
 * attacker makes them offline (hash flooding): an id is `flood.` and blocks of two characters;
 * each block has two spellings that take the low `bits` bits of the FNV-1a state to the same
 * value (a multiplication's low bits depend only on the low bits of its operands, so what follows
 * keeps them equal), found by a birthday search. `count` ids of ⌈log2 count⌉ blocks: every one of
 * them in the same slot of any table of at most 2^bits slots (tests, bench/id-table-flood.ts).
 * `prefix` another (`flood_`: names whose whole key, tool-name-table.ts, collides).
 */
import { createHash } from 'node:crypto'
import { FNV_OFFSET, FNV_PRIME } from '../../src/library/id-table.ts'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

const step = (state: number, text: string) => {
  for (let at = 0; at < text.length; at += 1)
    state = Math.imul(state ^ text.charCodeAt(at), FNV_PRIME)
  return state
}

export function collidingIds(count: number, bits = 18, prefix = 'flood.'): string[] {
  const mask = 2 ** bits - 1
  let state = step(FNV_OFFSET, prefix)
  const blocks: [string, string][] = []
  while (2 ** blocks.length < count) {
    const seen = new Map<number, string>()
    let pair: [string, string] | undefined
    for (const a of ALPHABET) {
      for (const b of ALPHABET) {
        for (const c of ALPHABET) {
          const block = a + b + c
          const low = (step(state, block) & mask) >>> 0
          const other = seen.get(low)
          if (other !== undefined) {
            pair = [other, block]
            break
          }
          seen.set(low, block)
        }
        if (pair) break
      }
      if (pair) break
    }
    if (!pair) throw new Error('no colliding blocks')
    blocks.push(pair)
    state = step(state, pair[0])
  }
  return Array.from(
    { length: count },
    (_, at) => prefix + blocks.map((pair, block) => pair[(at >>> block) & 1]).join(''),
  )
}

/**
 * The attack on round 55's keyed hash (FNV-1a from the basis XOR a seed, then fmix32; the seed
 * the first 32-bit word of the sha256 of the ids, each followed by a NUL): `count` ids (a power
 * of two) `flood.` and blocks of five characters with two spellings that take the *whole* FNV-1a
 * state to one value (a birthday search over 32 bits among blocks drawn at random: ~10^5 each; an
 * enumeration of short blocks finds none, FNV-1a's steps keep them apart), from the basis
 * FNV_OFFSET XOR `low16`. Such collisions hold from every basis with the same low 16 bits (a
 * difference above them stays a difference added to the state, the same for both spellings), so
 * all `count` ids have one hash under every seed whose low 16 bits are `low16`'s, and a last
 * nonce id, ground over the sha256 state of the others (~2^16 tries), gives the ids such a seed.
 * Returns the ids (then `others`, then the nonce) and that seed.
 */
export function fnvMulticollisionIds(
  count: number,
  low16 = 0x5eed,
  others: readonly string[] = [],
): { ids: string[]; seed: number } {
  const prefix = 'flood.'
  let state = step((FNV_OFFSET ^ low16) >>> 0, prefix)
  const blocks: [string, string][] = []
  // A linear congruential generator: the same ids on every run.
  let random = 12345
  const letter = () => {
    random = (Math.imul(random, 1103515245) + 12345) >>> 0
    return ALPHABET[(random >>> 16) % ALPHABET.length]
  }
  for (let found = 1; found < count; found *= 2) {
    const seen = new Map<number, string>()
    for (let pair: [string, string] | undefined; pair === undefined;) {
      const block = letter() + letter() + letter() + letter() + letter()
      const full = step(state, block) >>> 0
      const other = seen.get(full)
      if (other !== undefined && other !== block) pair = [other, block]
      else seen.set(full, block)
      if (pair) {
        blocks.push(pair)
        state = step(state, pair[0])
      }
    }
  }
  const ids = Array.from(
    { length: count },
    (_, at) => prefix + blocks.map((pair, block) => pair[(at >>> block) & 1]).join(''),
  ).concat(others)
  const hashed = createHash('sha256').update(ids.join('\0') + '\0', 'utf8')
  for (let nonce = 0; ; nonce += 1) {
    const id = `nonce.${nonce}`
    const seed = hashed
      .copy()
      .update(id + '\0', 'utf8')
      .digest()
      .readUInt32LE(0)
    if ((seed & 0xffff) === low16) return { ids: [...ids, id], seed }
  }
}
