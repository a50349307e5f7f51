/**
 * Tool ids made to share one slot of the unkeyed id table (`idHash`, FNV-1a, masked), as an
 * attacker makes them offline (hash flooding): an id is `flood.` and blocks of two characters;
 * each block has two spellings that take the low `bits` bits of the FNV-1a state to the same
 * value (a multiplication's low bits depend only on the low bits of its operands, so what follows
 * keeps them equal), found by a birthday search. `count` ids of ⌈log2 count⌉ blocks: every one of
 * them in the same slot of any table of at most 2^bits slots (tests, bench/id-table-flood.ts).
 */
import { FNV_OFFSET, FNV_PRIME } from '../../src/library/id-table.ts'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

const step = (state: number, text: string) => {
  for (let at = 0; at < text.length; at += 1)
    state = Math.imul(state ^ text.charCodeAt(at), FNV_PRIME)
  return state
}

export function collidingIds(count: number, bits = 18): string[] {
  const mask = 2 ** bits - 1
  const prefix = 'flood.'
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
