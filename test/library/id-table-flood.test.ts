import { describe, expect, it } from 'vitest'
import {
  buildIdTable,
  fmix32,
  FNV_OFFSET,
  idHash,
  IdTable,
  idTableKeys,
  idTableSize,
  isIdTableSteps,
  longestIdProbe,
  MAX_ID_TABLE_PROBE,
  tableHash,
  UNKEYED,
  type BuiltIdTable,
  type IdList,
  type TableKey,
} from '../../src/library/id-table.ts'
import { PackedIds } from '../../src/library/packed-ids.ts'
import { runSteps } from '../../src/time-slicer.ts'
import { collidingIds, fnvMulticollisionIds } from '../helpers/colliding-ids.ts'

/** `ids` as an IdList that counts its reads: `IdTable.get` reads one id per slot it probes. */
function counted(ids: readonly string[]): IdList & { reads: number } {
  return {
    reads: 0,
    length: ids.length,
    at(position: number) {
      this.reads += 1
      return ids[position]
    },
  }
}

/** The table the unkeyed hash (`idHash`, until round 55) gave `ids`: linear probing. */
function unkeyedTable(ids: readonly string[]): Int32Array {
  const table = new Int32Array(idTableSize(ids.length)).fill(-1)
  const mask = table.length - 1
  for (const [position, id] of ids.entries()) {
    let slot = idHash(id) & mask
    while (table[slot] !== -1) slot = (slot + 1) & mask
    table[slot] = position
  }
  return table
}

/** The reads of `IdTable.get` over `table` of `ids` for every id (each found at its position). */
function lookupReads(ids: readonly string[], table: BuiltIdTable): number {
  const list = counted(ids)
  const lookup = new IdTable(list, table)
  for (const [position, id] of ids.entries()) expect(lookup.get(id)).toBe(position)
  return list.reads
}

describe('the id table under hash flooding (rounds 55, 56)', () => {
  // 1,024 ids made offline to share one slot of the unkeyed hash (2,048 slots).
  const ids = collidingIds(1024, 11)

  it('keeps the probe paths of ids made to share an unkeyed slot short: build, load check and lookups', () => {
    const mask = idTableSize(ids.length) - 1
    expect(new Set(ids.map((id) => idHash(id) & mask)).size).toBe(1)
    // Until round 55 (the unkeyed hash) they made one cluster: the last id's lookup walked 1,023
    // slots, and every lookup of them 512 on average (N²/2 in all, and so the build).
    const unkeyed = { slots: unkeyedTable(ids), key: UNKEYED }
    expect(longestIdProbe(ids, unkeyed)).toBe(1023)
    const beforeList = counted(ids)
    const beforeTable = new IdTable(beforeList, unkeyed)
    for (const id of ids) beforeTable.get(id)
    expect(beforeList.reads).toBe((ids.length * (ids.length + 1)) / 2)

    const table = buildIdTable(ids) as BuiltIdTable
    expect(table.key.hash).toBe('halfsiphash-2-4')
    expect(longestIdProbe(ids, table)).toBeLessThanOrEqual(MAX_ID_TABLE_PROBE)
    // Each lookup reads the ids of the slots it probes: a few each, not thousands.
    expect(lookupReads(ids, table)).toBeLessThan(ids.length * 4)
    expect(new IdTable(ids, table).get('flood.absent')).toBeUndefined()
    // The load's check accepts it, with the ids as a load reads them.
    const packed = PackedIds.of(Buffer.from(JSON.stringify(ids)), ids.length)!
    expect(runSteps(isIdTableSteps(packed, table.slots, table.key))).toBe(true)
    expect(runSteps(isIdTableSteps(packed, table.slots, UNKEYED))).toBe(false)
  })

  it('draws the key from the ids: the same ids, the same table; another id, another key', () => {
    const table = buildIdTable(ids) as BuiltIdTable
    const again = buildIdTable([...ids]) as BuiltIdTable
    expect(again.key).toEqual(table.key)
    expect(Buffer.from(again.slots.buffer).equals(Buffer.from(table.slots.buffer))).toBe(true)
    const changed = buildIdTable([...ids.slice(1), 'flood.other']) as BuiltIdTable
    expect(changed.key).not.toEqual(table.key)
  })

  it("hashes every bit of an id: ids that differ only above the mask's bits spread", () => {
    // Ids that differ only in code unit bits above the mask: the unkeyed hash gives them one slot
    // under every basis; round 55's (fmix32) and round 56's spread them.
    const high = Array.from({ length: 64 }, (_, at) => `x${String.fromCharCode(0x61 + (at << 9))}`)
    expect(new Set(high.map((id) => idHash(id) & 0x1ff)).size).toBe(1)
    const seeded: TableKey = { hash: 'fnv-1a-seeded', seed: 12345 }
    expect(new Set(high.map((id) => tableHash(id, seeded) & 0x1ff)).size).toBeGreaterThan(32)
    const [key] = idTableKeys(high)
    expect(new Set(high.map((id) => tableHash(id, key) & 0x1ff)).size).toBeGreaterThan(32)
    expect(tableHash('a', UNKEYED)).toBe(idHash('a'))
    expect(tableHash('a', seeded)).toBe(fmix32(idHash('a', 0, 1, FNV_OFFSET ^ 12345)))
  })

  it("closes round 55's hole: FNV-1a multicollisions, with a nonce id ground for its seed, cluster under its hash and spread under HalfSipHash-2-4 (round 56)", () => {
    // 64 ids of one full FNV-1a state from every basis with the low 16 bits of 0x5eed (and a
    // nonce id, last, that gives the ids such a seed): what review17 found of round 55's hash.
    const { ids, seed } = fnvMulticollisionIds(64)
    expect(ids.length).toBe(65)
    const flood = ids.slice(0, 64)
    // Round 55 drew its seeds from the words of the sha256 of the ids: the first is `seed`, the
    // first 32 bits of the key round 56 draws.
    const [key] = idTableKeys(ids)
    expect(key).toMatchObject({ hash: 'halfsiphash-2-4', k0: seed })
    expect(seed & 0xffff).toBe(0x5eed)
    const round55 = (tableSeed: number): TableKey => ({ hash: 'fnv-1a-seeded', seed: tableSeed })
    // One hash under that seed, and under any seed with its low 16 bits.
    for (const high of [0, 1, 0xabcd]) {
      const other = ((seed & 0xffff) | (high << 16)) >>> 0
      expect(new Set(flood.map((id) => tableHash(id, round55(other)))).size).toBe(1)
    }
    // Round 55's build kept that table (the probe path 63, within MAX_ID_TABLE_PROBE): each
    // lookup of those ids walked the cluster, 64·65/2 reads for the 64 (and 1 for the nonce's).
    const before = buildIdTable(ids, [round55(seed)]) as BuiltIdTable
    expect(longestIdProbe(ids, before)).toBe(63)
    expect(longestIdProbe(ids, before)).toBeLessThanOrEqual(MAX_ID_TABLE_PROBE)
    expect(lookupReads(ids, before)).toBeGreaterThanOrEqual((64 * 65) / 2)
    // Round 56's: HalfSipHash-2-4 under the key of these very ids spreads them, as at random.
    const after = buildIdTable(ids) as BuiltIdTable
    expect(after.key).toEqual(key)
    expect(new Set(flood.map((id) => tableHash(id, key))).size).toBe(64)
    expect(longestIdProbe(ids, after)).toBeLessThan(8)
    expect(lookupReads(ids, after)).toBeLessThan(ids.length * 2)
    // And so under any key with the seed's bits in it: the collisions do not carry over.
    const low: TableKey = { hash: 'halfsiphash-2-4', k0: seed, k1: 0 }
    expect(new Set(flood.map((id) => tableHash(id, low) & 127)).size).toBeGreaterThan(32)
  })
})
