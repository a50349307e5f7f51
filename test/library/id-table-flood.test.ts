import { describe, expect, it } from 'vitest'
import {
  buildIdTable,
  idHash,
  IdTable,
  idTableSize,
  isIdTableSteps,
  longestIdProbe,
  MAX_ID_TABLE_PROBE,
  tableHash,
  type BuiltIdTable,
  type IdList,
} from '../../src/library/id-table.ts'
import { PackedIds } from '../../src/library/packed-ids.ts'
import { runSteps } from '../../src/time-slicer.ts'
import { collidingIds } from '../helpers/colliding-ids.ts'

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

describe('the id table under hash flooding (round 55)', () => {
  // 1,024 ids made offline to share one slot of the unkeyed hash (2,048 slots).
  const ids = collidingIds(1024, 11)

  it('keeps the probe paths of ids made to share an unkeyed slot short: build, load check and lookups', () => {
    const mask = idTableSize(ids.length) - 1
    expect(new Set(ids.map((id) => idHash(id) & mask)).size).toBe(1)
    // Until round 55 (the unkeyed hash) they made one cluster: the last id's lookup walked 1,023
    // slots, and every lookup of them 512 on average (N²/2 in all, and so the build).
    const unkeyed = { slots: unkeyedTable(ids), seed: undefined }
    expect(longestIdProbe(ids, unkeyed)).toBe(1023)
    const beforeList = counted(ids)
    const beforeTable = new IdTable(beforeList, unkeyed)
    for (const id of ids) beforeTable.get(id)
    expect(beforeList.reads).toBe((ids.length * (ids.length + 1)) / 2)

    const table = buildIdTable(ids) as BuiltIdTable
    expect(table.seed).toEqual(expect.any(Number))
    expect(longestIdProbe(ids, table)).toBeLessThanOrEqual(MAX_ID_TABLE_PROBE)
    const list = counted(ids)
    const lookup = new IdTable(list, table)
    for (const [position, id] of ids.entries()) expect(lookup.get(id)).toBe(position)
    // Each lookup reads the ids of the slots it probes: a few each, not thousands.
    expect(list.reads).toBeLessThan(ids.length * 4)
    expect(lookup.get('flood.absent')).toBeUndefined()
    // The load's check accepts it, with the ids as a load reads them.
    const packed = PackedIds.of(Buffer.from(JSON.stringify(ids)), ids.length)!
    expect(runSteps(isIdTableSteps(packed, table.slots, table.seed))).toBe(true)
    expect(runSteps(isIdTableSteps(packed, table.slots, undefined))).toBe(false)
  })

  it('draws the seed from the ids: the same ids, the same table; another id, another seed', () => {
    const table = buildIdTable(ids) as BuiltIdTable
    const again = buildIdTable([...ids]) as BuiltIdTable
    expect(again.seed).toBe(table.seed)
    expect(Buffer.from(again.slots.buffer).equals(Buffer.from(table.slots.buffer))).toBe(true)
    const changed = buildIdTable([...ids.slice(1), 'flood.other']) as BuiltIdTable
    expect(changed.seed).not.toBe(table.seed)
  })

  it('hashes with the seed over every bit of the FNV-1a state (fmix32), not only its low bits', () => {
    // Ids that differ only in code unit bits above the mask: the unkeyed hash gives them one slot
    // under every basis; the keyed one spreads them.
    const high = Array.from({ length: 64 }, (_, at) => `x${String.fromCharCode(0x61 + (at << 9))}`)
    expect(new Set(high.map((id) => idHash(id) & 0x1ff)).size).toBe(1)
    expect(new Set(high.map((id) => tableHash(id, 12345) & 0x1ff)).size).toBeGreaterThan(32)
    expect(tableHash('a', undefined)).toBe(idHash('a'))
  })
})
