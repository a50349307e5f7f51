/**
 * What two parts of re-saving a library loaded from its index cost on the event loop (not a
 * test), at `--tools` tools of examples-post-turn's bulk tools (`bulkTools`, 600-character
 * descriptions), one process, the two ways side by side, medians of `--turns` (bench/README
 * "Round 54: ... (lib60)"):
 * - `bm25.bin`: the synchronous part of `writeBm25File` (its one turn before the write) for the
 *   postings read from the file (the terms section written as read, since round 54) and for the
 *   built ones (terms listed, checked, joined and encoded, as every save did before).
 * - the load's id table check (`isIdTableSteps`, since round 54, run sliced at load) over the ids
 *   as a load reads them (`PackedIds`) and over an array, and `PackedIds.of` (every load's) beside.
 *
 *   node --import tsx bench/resave-parts-cost.ts [--tools 100000] [--turns 9]
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, wholeNumber } from './bench-args.ts'
import { bulkTools, loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    tools: { type: 'string', default: '100000' },
    turns: { type: 'string', default: '9' },
  },
})
const count = wholeNumber(import.meta.url, '--tools', values.tools)
const turns = wholeNumber(import.meta.url, '--turns', values.turns)
const { defaultConfig } = await import('../src/config/schema.ts')
const { Bm25Retriever } = await import('../src/retrieve/bm25/bm25-retriever.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
const { readBm25File, writeBm25File } = await import('../src/store/kinds/bm25-file.ts')
const { indexFileBound } = await import('../src/store/index-file-read.ts')
const { buildIdTable, isIdTableSteps } = await import('../src/library/id-table.ts')
type BuiltIdTable = import('../src/library/id-table.ts').BuiltIdTable
const { PackedIds } = await import('../src/library/packed-ids.ts')
const { runSteps } = await import('../src/time-slicer.ts')
type Tool = import('../src/library/tool.ts').Tool

const loadBefore = loadAverage(1)
const tools = bulkTools('bulk', count, 600) as Tool[]
const built = Bm25Retriever.build(tools, bm25Settings(defaultConfig())).postings
const dir = await mkdtemp(join(tmpdir(), 'toolsel-resave-parts-'))
try {
  const path = join(dir, 'bm25.bin')
  await writeBm25File(path, built)
  const read = await readBm25File(path, '', indexFileBound({}, 'bm25.bin'))
  /** ms of the synchronous part of one write (what one turn of the save holds). */
  const syncPart = async (postings: typeof built) => {
    const start = performance.now()
    const writing = writeBm25File(join(dir, 'again.bin'), postings)
    const ms = performance.now() - start
    await writing
    return ms
  }
  const ids = tools.map((tool) => tool.id)
  const { slots: table, key } = buildIdTable(ids) as BuiltIdTable
  const json = Buffer.from(JSON.stringify(ids))
  const packed = PackedIds.of(json, ids.length)!
  const timed = (work: () => unknown) => {
    const start = performance.now()
    work()
    return performance.now() - start
  }
  const rows: Record<string, number[]> = {
    'bm25.bin write, terms as read (round 54)': [],
    'bm25.bin write, terms listed and encoded (before)': [],
    'id table check, PackedIds (round 54 load)': [],
    'id table check, ids array': [],
    'PackedIds.of (every load, beside)': [],
  }
  const names = Object.keys(rows)
  for (let turn = 0; turn < turns; turn += 1) {
    rows[names[0]].push(await syncPart(read))
    rows[names[1]].push(await syncPart(built))
    rows[names[2]].push(
      timed(() => {
        if (!runSteps(isIdTableSteps(packed, table, key))) throw new Error('table refused')
      }),
    )
    rows[names[3]].push(timed(() => runSteps(isIdTableSteps(ids, table, key))))
    rows[names[4]].push(timed(() => PackedIds.of(json, ids.length)))
  }
  console.log(
    `${count} tools (${built.termIndex.size} BM25 terms), ${turns} turns, load ${loadBefore} -> ${loadAverage(1)}; ms`,
  )
  console.log('| part | median | min | max |')
  console.log('| --- | ---: | ---: | ---: |')
  for (const [name, ms] of Object.entries(rows))
    console.log(
      `| ${name} | ${median(ms).toFixed(1)} | ${Math.min(...ms).toFixed(1)} | ${Math.max(...ms).toFixed(1)} |`,
    )
} finally {
  await rm(dir, { recursive: true, force: true })
}
