/**
 * Hash flooding of the tool id table (not a test): `--sizes` libraries of ids made offline to
 * share one slot of the unkeyed id hash (test/helpers/colliding-ids.ts: what a library PUT or an
 * MCP upstream's tool names can hold), and for each the three places the table is walked, with
 * this checkout's id-table.ts and with `--before DIR`'s (another checkout: before round 55, or
 * round 55's), side by side in one run: the build (a save; an upload's import worker), the load's check of a saved
 * table (`isIdTableSteps` over the ids as a load reads them, PackedIds) and `--lookups` lookups
 * of ids of the library (`IdTable.get`, on the main thread for requests). Medians of `--turns`
 * (the before side: `--before-turns`, up to `--before-max` ids: its parts are quadratic, seconds
 * to build 10k ids, ×4 per doubling); the longest probe path of the table built. The check's time
 * is past `PackedIds.of`. `--plain`: ids `bulk.tool_<n>` instead (what the keyed hash costs where
 * nobody floods it; the before side then runs every size). `--multi`: round 55's hole (run with
 * `--before` a round 55 checkout): 32 ids of one full FNV-1a state from every basis whose low 16
 * bits are 0x5eed, `bulk.tool_<n>` ids up to the size, and a nonce id ground so that the ids'
 * sha256 gives round 55 such a seed (test/helpers/colliding-ids.ts, `fnvMulticollisionIds`); the
 * lookups ask for the 32 (a cluster of 64 among the others passed round 55's probe bound, which
 * then drew another seed); the before side runs every size.
 *
 *   node --import tsx bench/id-table-flood.ts --before /work/ci-base [--sizes 10000,50000,100000] [--turns 3] [--lookups 1000] [--before-max 50000] [--before-turns 1] [--plain | --multi]
 * @module
 */
import { resolve } from 'node:path'
import { benchArgs } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    sizes: { type: 'string', default: '10000,50000,100000' },
    turns: { type: 'string', default: '3' },
    lookups: { type: 'string', default: '1000' },
    'before-max': { type: 'string', default: '50000' },
    'before-turns': { type: 'string', default: '1' },
    plain: { type: 'boolean', default: false },
    multi: { type: 'boolean', default: false },
  },
})
if (!values.before)
  throw new Error('--before DIR (another checkout, e.g. before round 55 or round 55) is required.')
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { collidingIds, fnvMulticollisionIds } = await import('../test/helpers/colliding-ids.ts')
const { runSteps } = await import('../src/time-slicer.ts')

/** A side's id table: its slots (and its hash's key or seed, since round 55), opaque here. */
type Built = Int32Array | { slots: Int32Array }

/** One side's id table: build, check, lookups, longest probe path, over its own modules. */
interface Side {
  build(ids: readonly string[]): Built
  packed(json: Buffer, count: number): unknown
  check(packed: unknown, table: Built): boolean
  lookup(ids: readonly string[], table: Built): (id: string) => number | undefined
  longest(ids: readonly string[], table: Built): number
}

/**
 * The side of the checkout at `root`: before round 55 `buildIdTable` returned the slots (the
 * unkeyed hash, `idHash`), since then `{slots, seed}` (round 55) or `{slots, key}` (round 56),
 * which its `isIdTableSteps` takes as its third argument and its `IdTable` whole.
 */
async function side(root: string): Promise<Side> {
  const idTable = await import(resolve(root, 'src/library/id-table.ts'))
  const { PackedIds } = await import(resolve(root, 'src/library/packed-ids.ts'))
  const hashOf = (table: { slots: Int32Array; key?: unknown; seed?: unknown }) =>
    'key' in table ? table.key : table.seed
  return {
    build: (ids) => idTable.buildIdTable(ids),
    packed: (json, count) => PackedIds.of(json, count),
    check: (packed, table) =>
      runSteps(
        table instanceof Int32Array
          ? idTable.isIdTableSteps(packed, table)
          : idTable.isIdTableSteps(packed, table.slots, hashOf(table)),
      ),
    lookup: (ids, table) => {
      const lookups = new idTable.IdTable(ids, table)
      return (id: string) => lookups.get(id)
    },
    longest: (ids, table) => {
      if (!(table instanceof Int32Array)) return idTable.longestIdProbe(ids, table)
      const mask = table.length - 1
      let longest = 0
      for (let slot = 0; slot < table.length; slot += 1) {
        if (table[slot] === -1) continue
        const distance = (slot - (idTable.idHash(ids[table[slot]]) & mask)) & mask
        longest = Math.max(longest, distance)
      }
      return longest
    },
  }
}

const sides: [string, Side][] = [
  ['before', await side(resolve(values.before))],
  ['after', await side(resolve('.'))],
]
const turns = Number(values.turns)
const lookupCount = Number(values.lookups)
const loadBefore = loadAverage(1)
const timed = (work: () => unknown) => {
  const start = performance.now()
  work()
  return performance.now() - start
}
console.log('| ids | side | build ms | load check ms | lookups µs each | longest probe |')
console.log('| ---: | --- | ---: | ---: | ---: | ---: |')
for (const size of values.sizes!.split(',').map(Number)) {
  const bulk = (count: number) => Array.from({ length: count }, (_, at) => `bulk.tool_${at}`)
  const ids = values.plain
    ? bulk(size)
    : values.multi
      ? fnvMulticollisionIds(32, 0x5eed, bulk(size - 33)).ids
      : collidingIds(size)
  const json = Buffer.from(JSON.stringify(ids))
  // Ids spread over the library (a request's hits; --multi: the 32 made to collide), each looked
  // up once per turn.
  const asked = Array.from({ length: lookupCount }, (_, at) =>
    values.multi ? ids[at % 32] : ids[Math.floor((at * size) / lookupCount)],
  )
  for (const [name, { build, packed, check, lookup, longest }] of sides) {
    if (
      name === 'before' &&
      !values.plain &&
      !values.multi &&
      size > Number(values['before-max'])
    ) {
      console.log(`| ${size} | ${name} | not run (over --before-max) | | | |`)
      continue
    }
    const sideTurns = name === 'before' ? Number(values['before-turns']) : turns
    const list = packed(json, size)
    const buildMs: number[] = []
    const checkMs: number[] = []
    const lookupUs: number[] = []
    let table = build(ids)
    for (let turn = 0; turn < sideTurns; turn += 1) {
      buildMs.push(timed(() => (table = build(ids))))
      checkMs.push(
        timed(() => {
          if (!check(list, table)) throw new Error(`${name}: table refused`)
        }),
      )
      const get = lookup(ids, table)
      lookupUs.push(
        (1000 *
          timed(() => {
            for (const id of asked) if (get(id) === undefined) throw new Error(`${name}: missed`)
          })) /
          lookupCount,
      )
    }
    console.log(
      `| ${size} | ${name} | ${median(buildMs).toFixed(1)} | ${median(checkMs).toFixed(1)} | ${median(lookupUs).toFixed(2)} | ${longest(ids, table)} |`,
    )
  }
}
console.log(
  `${turns} turns (before: ${values['before-turns']}); load average ${loadBefore} -> ${loadAverage(1)}`,
)
