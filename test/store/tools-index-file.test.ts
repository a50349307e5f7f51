import { createHash } from 'node:crypto'
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import {
  buildIdTable,
  fmix32,
  FNV_OFFSET,
  idHash,
  IdTable,
  idTableKeys,
  idTableSize,
  isIdTableSteps,
  tableHash,
  UNKEYED,
  type BuiltIdTable,
  type TableKey,
} from '../../src/library/id-table.ts'
import type { Tool } from '../../src/library/tool.ts'
import { jsonLineSpans, TOOL_HASH_BYTES, ToolLibrary } from '../../src/library/tool-library.ts'
import { idRanks, isPermutation, PackedIds } from '../../src/library/packed-ids.ts'
import { holding, LibraryRegistry } from '../../src/service/library-registry.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { writeToolsIndexFile } from '../../src/store/tools-index-file.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { runSteps } from '../../src/time-slicer.ts'

const config = defaultConfig()
let indexDir: string

beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-tools-idx-'))
})

/** Sample tools plus ids that need JSON escapes or are in other scripts, and many more. */
const TOOLS: Tool[] = [
  ...SAMPLE_TOOLS,
  { id: 'quote"d\\id', name: 'q', description: 'Escapes in the id.', parameters: {} },
  { id: 'météo.prévision', name: 'prévision', description: 'Unicode id.', parameters: {} },
  { id: '天气.预报', name: '预报', description: 'CJK id.', parameters: {} },
  ...Array.from({ length: 3000 }, (_, at) => ({
    id: `bulk.tool_${at}`,
    name: `tool_${at}`,
    description: `Bulk tool ${at} for the id table.`,
    parameters: {},
  })),
]

/**
 * Descriptors this process has open on files of this test's index directory, as the OS counts
 * them. Not a process-wide count: libraries that other tests dropped close when they are
 * garbage-collected, at any moment, and would move it.
 */
async function openFiles(): Promise<number> {
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  )
  return targets.filter((target) => target.startsWith(`${indexDir}/`)).length
}

/** What reading a tool of an unloaded version fails with. */
const REPLACED = expect.objectContaining({
  code: 'LIBRARY_REPLACED',
  message: expect.stringMatching(/replaced or deleted \d+ s ago .*Retry the request/),
})

async function save(tools: readonly Tool[] = TOOLS): Promise<string> {
  const indexed = await buildIndexedLibrary(new ToolLibrary('idx', tools), config)
  return saveIndexedLibrary(indexDir, indexed)
}

/** The sha256 of the saved tools.jsonl and tools.idx in `dir`. */
async function savedHashes(dir: string): Promise<{ tools: string; idx: string }> {
  const sha256 = async (file: string) =>
    createHash('sha256')
      .update(await readFile(join(dir, file)))
      .digest('hex')
  return { tools: await sha256('tools.jsonl'), idx: await sha256('tools.idx') }
}

/**
 * Hashes of the files f2420760 saved for TOOLS (one Buffer.concat of the tools file), and
 * 1c1f054a for TOOLS loaded from that index and saved again (the whole file read into one buffer);
 * tools.idx's since round 56, whose id table is hashed by HalfSipHash-2-4 (`tableHash`,
 * `tableKey`; round 55's keyed FNV-1a, `tableSeed`: 063b227b…; before it 57c71acd…).
 */
const SAVED_HASHES = {
  tools: '785d2d9b5c69a5a80fb9795e4fc6299c91c498bff5533b2b869c147da96547e9',
  idx: 'cc40a27e4b97edd6501a563e1685efb9e3875a80a6114ac93b6a2d26f8a32397',
}

describe('the saved tools file, written from chunks (round 52)', () => {
  it('is byte for byte what f2420760 wrote (tools.jsonl and tools.idx) for the same tools', async () => {
    // TOOLS: 3,000+ tools, 12 chunks of 256 lines now, ids with escapes and in other scripts.
    expect(await savedHashes(await save())).toEqual(SAVED_HASHES)
    await rm(indexDir, { recursive: true, force: true })
  })

  it("is byte for byte what 1c1f054a wrote (the first save's files) when a library loaded from its index is saved again (copied, round 53)", async () => {
    // The copy writes what 1c1f054a wrote (its whole tools file read into one buffer, hashed and
    // scanned), the tools.idx from the load's line spans and the copy's CRC-32.
    const loaded = await loadIndexedLibrary(await save(), config)
    expect(loaded.library.checkedToolsFile()).toBeDefined()
    const again = await mkdtemp(join(tmpdir(), 'toolsel-tools-idx-again-'))
    try {
      const dir = await saveIndexedLibrary(again, loaded)
      expect(await savedHashes(dir)).toEqual(SAVED_HASHES)
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))
      expect(manifest.toolsFileHash).toBe(loaded.manifest.toolsFileHash)
      // And loads as the first save did.
      const reloaded = await loadIndexedLibrary(dir, config)
      expect(reloaded.library.contentHash).toBe(loaded.library.contentHash)
      expect(reloaded.library.get('quote"d\\id')?.name).toBe('q')
      reloaded.library.release(0)
    } finally {
      loaded.library.release(0)
      await rm(again, { recursive: true, force: true })
    }
  })

  it('writes the loaded tools.idx again as it is when a loaded library is saved again: no id decoded, no table or ranks made (round 54)', async () => {
    const dir = await save()
    const loaded = await loadIndexedLibrary(dir, config)
    const again = await mkdtemp(join(tmpdir(), 'toolsel-tools-idx-again-'))
    // Until round 54 the save decoded every id (library.ids), rebuilt the id table and sorted the
    // ids for their ranks: 77 ms of one turn at 100k tools (bench/README round 54, lib59).
    const decoded = vi.spyOn(PackedIds.prototype, 'at')
    try {
      expect(loaded.library.idList).toBeInstanceOf(PackedIds)
      const saved = await saveIndexedLibrary(again, loaded)
      expect(decoded).not.toHaveBeenCalled()
      decoded.mockRestore()
      const idx = await readFile(join(saved, 'tools.idx'))
      expect(idx.equals(await readFile(join(dir, 'tools.idx')))).toBe(true)
      const reloaded = await loadIndexedLibrary(saved, config)
      expect(reloaded.library.ids).toEqual(TOOLS.map((tool) => tool.id))
      expect(reloaded.library.get('天气.预报')?.name).toBe('预报')
      reloaded.library.release(0)
    } finally {
      decoded.mockRestore()
      loaded.library.release(0)
      await rm(again, { recursive: true, force: true })
    }
  })

  it('gives a changed library a fresh id table, never the loaded one (round 54)', async () => {
    const loaded = await loadIndexedLibrary(await save(), config)
    const extra = { id: 'extra.tool', name: 'extra', description: 'One more.', parameters: {} }
    const changed = await buildIndexedLibrary(
      new ToolLibrary('idx', [...loaded.library.tools, extra]),
      config,
    )
    const fresh = await mkdtemp(join(tmpdir(), 'toolsel-tools-idx-fresh-'))
    const again = await mkdtemp(join(tmpdir(), 'toolsel-tools-idx-again-'))
    try {
      const dir = await saveIndexedLibrary(again, changed)
      const expected = await saveIndexedLibrary(
        fresh,
        await buildIndexedLibrary(new ToolLibrary('idx', [...TOOLS, extra]), config),
      )
      expect(
        (await readFile(join(dir, 'tools.idx'))).equals(
          await readFile(join(expected, 'tools.idx')),
        ),
      ).toBe(true)
      const reloaded = await loadIndexedLibrary(dir, config)
      expect(reloaded.library.get('extra.tool')?.name).toBe('extra')
      expect(reloaded.library.get('quote"d\\id')?.name).toBe('q')
      reloaded.library.release(0)
      // The loaded table goes with the loaded ids only: lines known for other ids get their own.
      const path = join(again, 'direct.idx')
      const ids = ['a.one', 'b.two']
      const lines = {
        starts: new Float64Array([0, 10]),
        ends: new Float64Array([9, 19]),
        bytes: 20,
        crc32: 1,
      }
      const bogus = { slots: new Int32Array(idTableSize(2)).fill(-1), key: idTableKeys(['x'])[0] }
      await writeToolsIndexFile(path, ids, { ...lines, ids: { list: [...ids], table: bogus } }, 'h')
      const made = await readFile(path)
      await writeToolsIndexFile(path, ids, lines, 'h')
      expect(made.equals(await readFile(path))).toBe(true)
      await writeToolsIndexFile(path, ids, { ...lines, ids: { list: ids, table: bogus } }, 'h')
      expect(made.equals(await readFile(path))).toBe(false)
    } finally {
      loaded.library.release(0)
      await rm(again, { recursive: true, force: true })
      await rm(fresh, { recursive: true, force: true })
    }
  })

  it('reads the tools file of a loaded library in blocks of 1 MiB, never whole into one buffer (round 53)', async () => {
    // 2.3 MB of tools: until round 53 handed back as one buffer of the whole file, read in one turn.
    const tools = Array.from({ length: 3000 }, (_, at) => ({
      id: `wide.tool_${at}`,
      name: `tool_${at}`,
      description: `${at} ${'a long description of a wide tool '.repeat(22)}`,
      parameters: {},
    }))
    const dir = await save(tools)
    const bytes = await readFile(join(dir, 'tools.jsonl'))
    expect(bytes.length).toBeGreaterThan(2 * 1024 * 1024)
    const { library } = await loadIndexedLibrary(dir, config)
    try {
      const chunks = await library.toJsonLineChunksSliced()
      expect(chunks.map((chunk) => chunk.length)).toEqual([
        1024 * 1024,
        1024 * 1024,
        bytes.length - 2 * 1024 * 1024,
      ])
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true)
      // Whole-library walks read it in blocks too, and give the tools saved.
      expect(library.tools.map((tool) => tool.id)).toEqual(tools.map((tool) => tool.id))
      expect(library.tools[2999]).toEqual(tools[2999])
    } finally {
      library.release(0)
    }
  })

  it('refuses to save again a loaded library whose tools file was changed in place since the load (round 53)', async () => {
    const dir = await save()
    const toolsPath = join(dir, 'tools.jsonl')
    const text = await readFile(toolsPath, 'utf8')
    const loaded = await loadIndexedLibrary(dir, config)
    // Same size, still valid JSON with the right id: until round 53 the save read these bytes,
    // hashed them afresh and wrote an index whose manifest's content hash they no longer have.
    await writeFile(toolsPath, text.replace('Bulk tool 7 for', 'Bulk tool 8 for'))
    const again = await mkdtemp(join(tmpdir(), 'toolsel-tools-idx-again-'))
    try {
      await expect(saveIndexedLibrary(again, loaded)).rejects.toThrow(
        expect.objectContaining({
          code: 'INDEX_CORRUPT',
          message: expect.stringMatching(
            /tools file .*tools\.jsonl can't be read: it was changed since it was loaded \(its CRC-32 is [0-9a-f]{8}, [0-9a-f]{8} at the load\)/,
          ),
        }),
      )
      // Nothing half written: no index, no work directory left.
      expect(await readdir(again)).toEqual(['.toolsel-writer-protocol'])
      await writeFile(toolsPath, text)
      await saveIndexedLibrary(again, loaded)
      expect(await readFile(join(again, 'idx', 'tools.jsonl'), 'utf8')).toBe(text)
    } finally {
      loaded.library.release(0)
      await rm(again, { recursive: true, force: true })
    }
  })

  it('jsonLineSpans of chunks are those of their concatenation, wherever they are cut', () => {
    const bytes = Buffer.from('{"a":1}\n\n{"b":"é"}\n{"c":2}')
    const whole = jsonLineSpans(bytes)
    expect(Array.from(whole.starts)).toEqual([0, 9, 20])
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      for (let second = cut; second <= bytes.length; second += 1) {
        const parts = [bytes.subarray(0, cut), bytes.subarray(cut, second), bytes.subarray(second)]
        expect(jsonLineSpans(parts)).toEqual(whole)
      }
    }
    expect(jsonLineSpans([])).toEqual(jsonLineSpans(Buffer.alloc(0)))
  })
})

describe('id table', () => {
  it('finds every id at its position and misses unknown ones', () => {
    const ids = TOOLS.map((tool) => tool.id)
    const table = buildIdTable(ids)
    if (!('slots' in table)) throw new Error('no duplicates expected')
    expect(table.slots.length).toBe(idTableSize(ids.length))
    expect(table.slots.length).toBeGreaterThanOrEqual(2 * ids.length)
    const lookup = new IdTable(ids, table)
    for (const [position, id] of ids.entries()) expect(lookup.get(id)).toBe(position)
    for (const missing of ['', 'bulk.tool_3000', 'weather', 'météo']) {
      expect(lookup.get(missing)).toBeUndefined()
      expect(lookup.has(missing)).toBe(false)
    }
  })

  it('packed ids decode each id of a JSON array, and refuse anything else', () => {
    for (const ids of [
      TOOLS.map((t) => t.id),
      ['a"', '\\', '\\"', '"\\', 'tab\tnew\nline', '\u2028', 'é"天'],
      [],
      [''],
      ['a'],
      ['météo.prévision', '天气.预报', 'x y', ''],
      TOOLS.map((t) => t.id).filter((id) => !/["\\]/.test(id)),
    ]) {
      const packed = PackedIds.of(Buffer.from(JSON.stringify(ids)), ids.length)!
      expect(packed.length).toBe(ids.length)
      expect(Array.from({ length: ids.length }, (_, at) => packed.at(at))).toEqual(ids)
      expect(packed.at(-1)).toBeUndefined()
      expect(packed.at(ids.length)).toBeUndefined()
    }
    for (const [text, count] of [
      ['["a","b"]', 3],
      ['["a","b"]', 1],
      ['["a", "b"]', 2],
      ['["a""b"]', 2],
      ['{"a":"b"}', 1],
      ['["a"', 1],
      ['', 0],
    ] as const)
      expect(PackedIds.of(Buffer.from(text), count), text).toBeUndefined()
  })

  it('packed ids order two ids as JavaScript compares the strings, without decoding ASCII ones', () => {
    // U+FFFF sorts after U+1F600 (a surrogate pair) in UTF-16 but before it in UTF-8; also
    // prefixes, equal ids, escapes, and ids that first differ at non-ASCII bytes.
    const ids = [
      'b.api',
      'a.api',
      'a.api_v2',
      'a.ap',
      'A.api',
      '',
      'x\uffffy',
      'x\u{1f600}y',
      'x\uffff',
      'météo.a',
      'météo.b',
      'mété',
      'quote"d',
      'quote\\',
      'quote',
      'tab\tx',
      '天气.预报',
      '天气',
    ]
    const bytes = Buffer.from(JSON.stringify(ids))
    // From the bytes, and from the ranks an index saves (idRanks).
    for (const packed of [
      PackedIds.of(bytes, ids.length)!,
      PackedIds.of(bytes, ids.length, idRanks(ids))!,
    ]) {
      for (let a = 0; a < ids.length; a += 1) {
        for (let b = 0; b < ids.length; b += 1)
          expect(packed.after(a, b), `${ids[a]} after ${ids[b]}`).toBe(ids[a] > ids[b])
      }
      // Positions out of range compare as `at` reads them (undefined): never after.
      for (const [a, b] of [
        [-1, 0],
        [0, -1],
        [ids.length, 0],
        [0, ids.length],
        [1.5, 0],
        [0, 1.5],
      ])
        expect(packed.after(a, b), `${a} after ${b}`).toBe(packed.at(a)! > packed.at(b)!)
    }
    expect('\uffff' > '\u{1f600}').toBe(true)
    expect(Buffer.compare(Buffer.from('\uffff'), Buffer.from('\u{1f600}'))).toBe(-1)
  })

  it('ranks ids in JavaScript string order, and tells a permutation of the positions', () => {
    const ids = TOOLS.map((tool) => tool.id)
    const ranks = idRanks(ids)
    const sorted = [...ids].sort()
    for (const [position, id] of ids.entries()) expect(sorted[ranks[position]]).toBe(id)
    expect(isPermutation(ranks)).toBe(true)
    expect(isPermutation(new Int32Array(0))).toBe(true)
    expect(isPermutation(Int32Array.of(1, 0, 2))).toBe(true)
    for (const bad of [Int32Array.of(0, 0, 2), Int32Array.of(0, 1, 3), Int32Array.of(-1, 0, 1)])
      expect(isPermutation(bad), bad.join()).toBe(false)
  })

  it('packed ids keep answering right when positions share a set of the decoded-id cache', () => {
    // 65,536 slots in sets of two: positions p, p + 32,768, p + 65,536 … share a set.
    const ids = Array.from({ length: 140_000 }, (_, at) => `tool_${at}`)
    const packed = PackedIds.of(Buffer.from(JSON.stringify(ids)), ids.length)!
    for (const position of [5, 65_541, 5, 131_077, 65_541, 139_999, 0, 65_536, 0, 1.5, -1]) {
      expect(packed.at(position)).toBe(ids[position])
    }
    let state = 7
    for (let read = 0; read < 20_000; read += 1) {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0
      // Mostly a few positions of one set, as a request's tied hits are.
      const position = state % 4 === 0 ? state % ids.length : 5 + 32_768 * (state % 5)
      expect(packed.at(position)).toBe(ids[position])
    }
  })

  it('packed ids decode two positions of one set once each, however often they alternate', () => {
    const ids = Array.from({ length: 140_000 }, (_, at) => `tool_${at}`)
    const bytes = Buffer.from(JSON.stringify(ids))
    const packed = PackedIds.of(bytes, ids.length)!
    const decode = vi.spyOn(bytes, 'toString')
    for (let round = 0; round < 50; round += 1) {
      expect(packed.at(5)).toBe('tool_5')
      expect(packed.at(65_541)).toBe('tool_65541')
    }
    expect(decode).toHaveBeenCalledTimes(2)
    // A third position of the set evicts the one read least lately (5 here).
    expect(packed.at(32_773)).toBe('tool_32773')
    expect(packed.at(65_541)).toBe('tool_65541')
    expect(decode).toHaveBeenCalledTimes(3)
    expect(packed.at(5)).toBe('tool_5')
    expect(decode).toHaveBeenCalledTimes(4)
  })

  it('packed ids size their decoded-id cache to the list: a small library allocates a few slots', () => {
    for (const [length, slots] of [
      [0, 1],
      [1, 1],
      [10, 16],
      [16, 16],
      [17, 32],
      [65_536, 65_536],
      [140_000, 65_536],
    ] as const) {
      const ids = Array.from({ length }, (_, at) => `t${at}`)
      const packed = PackedIds.of(Buffer.from(JSON.stringify(ids)), length)!
      expect(packed.decodedSlots, `${length} ids`).toBe(slots)
      // Every id decodes, then again from the cache (positions share slots only past 65,536).
      for (const position of [0, 1, length - 1, length >> 1, 0, length - 1])
        expect(packed.at(position)).toBe(ids[position])
    }
    // 10 ids in 16 slots: each keeps its own slot, and repeated reads give the same strings.
    const ids = Array.from({ length: 10 }, (_, at) => `tool_${at}`)
    const packed = PackedIds.of(Buffer.from(JSON.stringify(ids)), ids.length)!
    for (let round = 0; round < 3; round += 1)
      expect(Array.from({ length: 10 }, (_, at) => packed.at(at))).toEqual(ids)
  })

  it('reports the first repeated id', () => {
    expect(buildIdTable(['a', 'b', 'a', 'b'])).toEqual({ duplicate: 2 })
  })

  it('tells a table buildIdTable could have made from one with a slot misplaced, lost, doubled or over a repeated id (round 54)', () => {
    const ids = TOOLS.map((tool) => tool.id)
    const { slots: table, key } = buildIdTable(ids) as BuiltIdTable
    expect(key.hash).toBe('halfsiphash-2-4')
    const packed = PackedIds.of(Buffer.from(JSON.stringify(ids)), ids.length)!
    const hashes = runSteps(packed.hashesSteps(key))
    for (let at = 0; at < ids.length; at += 1) expect(hashes[at]).toBe(tableHash(ids[at], key))
    // The hashes of tables saved before round 56: round 55's seeded FNV-1a, and before it the
    // unkeyed FNV-1a (idHash).
    const seeded = { hash: 'fnv-1a-seeded', seed: 12345 } as const
    const round55 = runSteps(packed.hashesSteps(seeded))
    for (let at = 0; at < ids.length; at += 1) {
      expect(round55[at]).toBe(fmix32(idHash(ids[at], 0, ids[at].length, FNV_OFFSET ^ 12345)))
    }
    const unkeyed = runSteps(packed.hashesSteps(UNKEYED))
    for (let at = 0; at < ids.length; at += 1) expect(unkeyed[at]).toBe(idHash(ids[at]))
    const valid = (
      list: readonly string[] | PackedIds,
      slots: Int32Array,
      tableKey: TableKey = key,
    ) => runSteps(isIdTableSteps(list, slots, tableKey))
    expect(valid(ids, table)).toBe(true)
    expect(valid(packed, table)).toBe(true)
    expect(valid([], new Int32Array(8).fill(-1))).toBe(true)
    const mask = table.length - 1
    const slotOf = (id: string) => table.indexOf(ids.indexOf(id))
    // Moved to an empty slot away from its path: `get` misses it.
    const moved = Int32Array.from(table)
    const from = slotOf('quote"d\\id')
    let to = from
    while (moved[to] !== -1 || moved[(to - 1) & mask] !== -1) to = (to + 1) & mask
    ;[moved[to], moved[from]] = [moved[from], -1]
    expect(new IdTable(ids, { slots: moved, key }).get('quote"d\\id')).toBeUndefined()
    expect(valid(packed, moved)).toBe(false)
    // Another position in its slot (that one twice, this one nowhere).
    const doubled = Int32Array.from(table)
    doubled[from] = doubled[slotOf('天气.预报')]
    expect(valid(packed, doubled)).toBe(false)
    // Lost: its slot emptied.
    const lost = Int32Array.from(table)
    lost[from] = -1
    expect(valid(ids, lost)).toBe(false)
    // No empty slot at all, or an id twice (a table over ids that repeat one).
    expect(valid(['a'], new Int32Array([0]))).toBe(false)
    const twice = new Int32Array(8).fill(-1)
    twice[idHash('a') & 7] = 0
    twice[(idHash('a') + 1) & 7] = 1
    expect(valid(['a', 'a'], twice, UNKEYED)).toBe(false)
    const ab = buildIdTable(['a', 'b']) as BuiltIdTable
    expect(valid(['a', 'b'], ab.slots, ab.key)).toBe(true)
  })
})

describe('tools.idx (tool lines, ids and id table saved with an index)', () => {
  it('is written on save and gives the library the ids, lookups and tools of a scan', async () => {
    const dir = await save()
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))
    expect(manifest.toolsIndexFile).toBe('tools.idx')
    const loaded = await loadIndexedLibrary(dir, config)
    const scanned = ToolLibrary.fromJsonLines('idx', await readFile(join(dir, 'tools.jsonl')))
    expect(loaded.library.ids).toEqual(scanned.ids)
    expect(loaded.library.ids).toEqual(TOOLS.map((tool) => tool.id))
    for (const tool of TOOLS) {
      expect(loaded.library.has(tool.id)).toBe(true)
      expect(loaded.library.get(tool.id)).toEqual(tool)
    }
    expect(loaded.library.get('bulk.tool_3000')).toBeUndefined()
    expect(loaded.library.contentHash).toBe(scanned.contentHash)
    const hits = await loaded.retrievers.get('bm25')!.retrieve('bulk tool 17', { k: 3 })
    expect(hits.length).toBeGreaterThan(0)
  })

  it('decodes ids with and without JSON escapes to those of a scan', async () => {
    const plain = TOOLS.filter((tool) => !/["\\]/.test(tool.id))
    expect(plain.length).toBe(TOOLS.length - 1)
    for (const tools of [TOOLS, plain, [{ ...TOOLS[0], id: '' }, ...plain.slice(1, 3)]]) {
      const dir = await save(tools)
      const { library } = await loadIndexedLibrary(dir, config)
      expect(library.ids).toEqual(tools.map((tool) => tool.id))
      expect(library.get('天气.预报')?.id ?? '天气.预报').toBe('天气.预报')
      library.release(0)
    }
  })

  it('is optional: an index saved before it loads by scanning the tools file', async () => {
    const dir = await save()
    const manifestPath = join(dir, 'manifest.json')
    const { toolsIndexFile: _dropped, ...manifest } = JSON.parse(
      await readFile(manifestPath, 'utf8'),
    )
    await writeFile(manifestPath, JSON.stringify(manifest))
    await rm(join(dir, 'tools.idx'))
    const loaded = await loadIndexedLibrary(dir, config)
    expect(loaded.library.ids).toEqual(TOOLS.map((tool) => tool.id))
    expect(loaded.library.get('天气.预报')?.name).toBe('预报')
  })

  it("saves each id's rank for BM25's ties; a file without ranks (saved before them) answers the same", async () => {
    // Tools whose BM25 scores tie (the same words), ids in an order unlike their positions'.
    const tied: Tool[] = [...'qzcamxb', 'é', '天', 'Z'].map((letter, at) => ({
      id: `${letter}.tied_${at % 3}`,
      name: 'tied widget',
      description: 'Fetch the tied widget report.',
      parameters: {},
    }))
    const tools = [...TOOLS, ...tied]
    const dir = await save(tools)
    const idxPath = join(dir, 'tools.idx')
    const good = await readFile(idxPath)
    const header = JSON.parse(good.toString('utf8', 16, 16 + good.readUInt32LE(12)))
    expect(Object.keys(header.sections)).toEqual([
      'starts',
      'ends',
      'table',
      'ids',
      'ranks',
      'hashes',
    ])
    const ids = tools.map((tool) => tool.id)
    const answers = async (): Promise<unknown> => {
      const loaded = await loadIndexedLibrary(dir, config)
      const list = loaded.library.idList
      const positions = [
        ...Array.from({ length: 40 }, (_, at) => at * 73),
        ...tied.map((_, at) => TOOLS.length + at),
      ]
      for (const a of positions)
        for (const b of positions) expect(list.after!(a, b)).toBe(ids[a] > ids[b])
      const bm25 = loaded.retrievers.get('bm25')!
      return Promise.all(
        ['tied widget report', 'bulk tool', 'fetch report'].map((query) =>
          bm25.retrieve(query, { k: 5 }),
        ),
      )
    }
    const withRanks = await answers()
    expect((withRanks as Array<Array<{ id: string }>>)[0].map((hit) => hit.id)).toEqual(
      tied
        .map((tool) => tool.id)
        .sort()
        .slice(0, 5),
    )
    // The same file without its ranks section (as saved before it): the header lists no ranks.
    const { ranks: _dropped, ...sections } = header.sections
    const older = Buffer.from(good)
    older.fill(0x20, 16, 16 + older.readUInt32LE(12))
    older.write(JSON.stringify({ ...header, sections }), 16, 'utf8')
    await writeFile(idxPath, older)
    expect(await answers()).toEqual(withRanks)
    // Ranks that are not a permutation are refused.
    const damaged = Buffer.from(good)
    damaged.writeInt32LE(
      damaged.readInt32LE(header.sections.ranks[0] + 4),
      header.sections.ranks[0],
    )
    await writeFile(idxPath, damaged)
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('invalid ranks section'),
    })
  })

  it("saves each tool's content hash: toolHashes of the loaded library reads no tool; a file without them hashes as before", async () => {
    // A library loaded from its index hashed every tool on the event loop the first time MCP
    // token counts asked (Google Chat's 5.5 MB tool alone: ~130 ms; bench/README round 23).
    const dir = await save()
    const idxPath = join(dir, 'tools.idx')
    const good = await readFile(idxPath)
    const header = JSON.parse(good.toString('utf8', 16, 16 + good.readUInt32LE(12)))
    expect(header.sections.hashes[1]).toBe(TOOLS.length * TOOL_HASH_BYTES)
    const expected = [...new ToolLibrary('idx', TOOLS).toolHashes]
    const hashesOfLoaded = async (parsed: boolean) => {
      const loaded = await loadIndexedLibrary(dir, config)
      const parse = vi.spyOn(JSON, 'parse')
      try {
        const hashes = [...loaded.library.toolHashes]
        expect(parse.mock.calls.length > 0).toBe(parsed)
        return hashes
      } finally {
        parse.mockRestore()
      }
    }
    expect(await hashesOfLoaded(false)).toEqual(expected)
    // Saved again (a rebuild of the loaded library): the hashes go with it, still unread.
    const loaded = await loadIndexedLibrary(dir, config)
    await saveIndexedLibrary(indexDir, loaded)
    expect(await hashesOfLoaded(false)).toEqual(expected)
    // The same file without its hashes section (saved before them): hashed when first asked.
    const { hashes: _dropped, ...sections } = header.sections
    const older = Buffer.from(good)
    older.fill(0x20, 16, 16 + older.readUInt32LE(12))
    older.write(JSON.stringify({ ...header, sections }), 16, 'utf8')
    await writeFile(idxPath, older)
    expect(await hashesOfLoaded(true)).toEqual(expected)
    // A section of the wrong length is refused.
    const short = Buffer.from(good)
    short.fill(0x20, 16, 16 + short.readUInt32LE(12))
    const [offset, length] = header.sections.hashes
    short.write(
      JSON.stringify({ ...header, sections: { ...sections, hashes: [offset, length - 1] } }),
      16,
      'utf8',
    )
    await writeFile(idxPath, short)
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('hashes section of the wrong length'),
    })
  })

  it('is refused when missing, damaged or describing another tools file', async () => {
    const dir = await save()
    const idxPath = join(dir, 'tools.idx')
    const good = await readFile(idxPath)

    await rm(idxPath)
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringMatching(/tools index file .* can't be read.*Rebuild it with/),
    })

    await writeFile(idxPath, Buffer.from('not an index at all'))
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('is not a toolsel tools index file'),
    })

    // The index of another library (same tool count) describes another tools file.
    const otherDir = join(indexDir, 'other')
    const other = await buildIndexedLibrary(
      new ToolLibrary(
        'idx',
        TOOLS.map((tool) => ({ ...tool, description: `${tool.description}!` })),
      ),
      config,
    )
    await saveIndexedLibrary(otherDir, other)
    await writeFile(idxPath, await readFile(join(otherDir, 'idx', 'tools.idx')))
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('describes another tools file'),
    })

    // A table slot pointing past the last tool.
    const damaged = Buffer.from(good)
    const header = JSON.parse(damaged.toString('utf8', 16, 16 + damaged.readUInt32LE(12)))
    damaged.writeInt32LE(TOOLS.length, header.sections.table[0])
    await writeFile(idxPath, damaged)
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('invalid id table'),
    })

    await writeFile(idxPath, good)
    expect((await loadIndexedLibrary(dir, config)).library.size).toBe(TOOLS.length)
  })

  it("is refused at load when one id table slot points at another tool's position, never saved again (round 54)", async () => {
    // Until round 54 the load checked only that slots were in range: a misplaced slot made that
    // id's lookups miss (get → undefined), and a re-save of the loaded library (lib59) wrote the
    // damaged table again where it used to build a correct one. tools.idx has no checksum of its
    // own, and tools.jsonl is untouched (its CRC-32 still matches): only the table check sees it.
    const dir = await save()
    const idxPath = join(dir, 'tools.idx')
    const good = await readFile(idxPath)
    const header = JSON.parse(good.toString('utf8', 16, 16 + good.readUInt32LE(12)))
    const [offset, length] = header.sections.table
    const table = new Int32Array(
      good.buffer.slice(good.byteOffset + offset, good.byteOffset + offset + length),
    )
    const from = table.indexOf(TOOLS.findIndex((tool) => tool.id === '天气.预报'))
    const other = table.indexOf(TOOLS.findIndex((tool) => tool.id === 'quote"d\\id'))
    const damaged = Buffer.from(good)
    damaged.writeInt32LE(table[other], offset + 4 * from)
    await writeFile(idxPath, damaged)
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('id table that does not match its ids'),
    })
    // Moved to an empty slot off its path (each position once, every slot in range): refused too.
    const mask = table.length - 1
    let to = from
    while (table[to] !== -1 || table[(to - 1) & mask] !== -1) to = (to + 1) & mask
    const moved = Buffer.from(good)
    moved.writeInt32LE(-1, offset + 4 * from)
    moved.writeInt32LE(table[from], offset + 4 * to)
    await writeFile(idxPath, moved)
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('id table that does not match its ids'),
    })
    await writeFile(idxPath, good)
    const loaded = await loadIndexedLibrary(dir, config)
    expect(loaded.library.get('天气.预报')?.name).toBe('预报')
    loaded.library.release(0)
  })

  const headerOf = (bytes: Buffer) =>
    JSON.parse(bytes.toString('utf8', 16, 16 + bytes.readUInt32LE(12)))

  /** A copy of `bytes` whose header text `field` is `text`, padded with spaces (same length). */
  const withHeaderText = (bytes: Buffer, field: string, text: string): Buffer => {
    const at = bytes.indexOf(field, 16)
    expect(at).toBeGreaterThan(0)
    expect(text.length).toBeLessThanOrEqual(field.length)
    const edited = Buffer.from(bytes)
    edited.fill(' ', at, at + field.length)
    edited.write(text, at, 'utf8')
    return edited
  }

  it.each([
    ['before round 55 (the unkeyed FNV-1a, no field)', (): TableKey => UNKEYED],
    [
      'in round 55 (FNV-1a from a seeded basis, tableSeed: the first word of the sha256 of the ids)',
      (): TableKey => ({ hash: 'fnv-1a-seeded', seed: idTableKeys(TOOLS.map((t) => t.id))[0].k0 }),
    ],
  ])(
    'loads an index saved %s with the hash it was written with; its next save writes a halfsiphash-2-4 table (rounds 55, 56)',
    async (_, keyOf) => {
      const dir = await save()
      const idxPath = join(dir, 'tools.idx')
      const keyed = await readFile(idxPath)
      const header = headerOf(keyed)
      expect(header.tableHash).toBe('halfsiphash-2-4')
      expect(header.tableKey).toEqual([expect.any(Number), expect.any(Number)])
      // The file as saved then: that round's header field in place of tableHash and tableKey
      // (padded with spaces: the header keeps its length) and the table of its hash in the slots.
      const field = `,"tableHash":"halfsiphash-2-4","tableKey":[${header.tableKey.join(',')}]`
      const key = keyOf()
      const oldField = key.hash === 'fnv-1a-seeded' ? `,"tableSeed":${key.seed}` : ''
      const old = withHeaderText(keyed, field, oldField)
      const [offset, length] = header.sections.table
      const built = buildIdTable(
        TOOLS.map((tool) => tool.id),
        [key],
      ) as BuiltIdTable
      expect(built.slots.length * 4).toBe(length)
      Buffer.from(built.slots.buffer).copy(old, offset)
      expect(headerOf(old).tableHash).toBeUndefined()
      expect(headerOf(old).tableSeed).toBe(key.hash === 'fnv-1a-seeded' ? key.seed : undefined)
      await writeFile(idxPath, old)
      const loaded = await loadIndexedLibrary(dir, config)
      const again = await mkdtemp(join(tmpdir(), 'toolsel-tools-idx-old-'))
      try {
        for (const [position, tool] of TOOLS.entries())
          expect(loaded.library.positionOf(tool.id)).toBe(position)
        expect(loaded.library.get('天气.预报')?.name).toBe('预报')
        expect(loaded.library.checkedToolsFile()?.table?.key).toEqual(key)
        // Read under the wrong hash, the table would be refused (the round 56 header's).
        await writeFile(idxPath, Buffer.concat([keyed.subarray(0, offset), old.subarray(offset)]))
        await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
          code: 'INDEX_CORRUPT',
          message: expect.stringContaining('id table that does not match its ids'),
        })
        // Saved again: a halfsiphash-2-4 table, the one a fresh save writes.
        const saved = await saveIndexedLibrary(again, loaded)
        const resaved = await readFile(join(saved, 'tools.idx'))
        expect(headerOf(resaved).tableKey).toEqual(header.tableKey)
        expect(resaved.equals(keyed)).toBe(true)
      } finally {
        loaded.library.release(0)
        await rm(again, { recursive: true, force: true })
      }
    },
  )

  it('refuses a header naming an id table hash it does not know, or a bad key (round 56)', async () => {
    const dir = await save()
    const idxPath = join(dir, 'tools.idx')
    const good = await readFile(idxPath)
    const { tableKey } = headerOf(good)
    const field = `"tableHash":"halfsiphash-2-4","tableKey":[${tableKey.join(',')}]`
    const edits = [
      `"tableHash":"halfsiphash-9-9","tableKey":[${tableKey.join(',')}]`,
      `"tableHash":"halfsiphash-2-4","tableKey":[${tableKey[0]},-1]`,
      `"tableHash":"halfsiphash-2-4","tableSeed":${tableKey[0]}`,
    ]
    for (const edit of edits) {
      await writeFile(idxPath, withHeaderText(good, field, edit))
      await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringContaining('has an invalid header'),
      })
    }
    await writeFile(idxPath, good)
    const loaded = await loadIndexedLibrary(dir, config)
    expect(loaded.library.checkedToolsFile()?.table?.key).toEqual({
      hash: 'halfsiphash-2-4',
      k0: tableKey[0],
      k1: tableKey[1],
    })
    loaded.library.release(0)
  })

  it('leaves the tools file unread at load and reads each tool by offset when asked for', async () => {
    const dir = await save()
    expect(await openFiles()).toBe(0)
    const loaded = await loadIndexedLibrary(dir, config)
    expect(await openFiles()).toBe(1)
    const { library } = loaded
    expect(library.get('天气.预报')).toEqual(TOOLS.find((tool) => tool.id === '天气.预报'))
    expect(library.require('quote"d\\id').name).toBe('q')
    // Whole-library walks read the file once: every tool, its bytes, a save of the loaded index.
    expect(library.tools).toEqual(TOOLS)
    const bytes = await readFile(join(dir, 'tools.jsonl'))
    expect(Buffer.concat(await library.toJsonLineChunksSliced()).equals(bytes)).toBe(true)
    // Never the whole file in one synchronous read (until round 54 toJsonLines did, for no caller).
    expect(() => library.toJsonLines()).toThrow(
      expect.objectContaining({
        code: 'INTERNAL',
        message: expect.stringContaining('is read from its tools file'),
      }),
    )
    const copyDir = await saveIndexedLibrary(join(indexDir, 'copy'), loaded)
    const copy = await loadIndexedLibrary(copyDir, config)
    expect(copy.library.contentHash).toBe(library.contentHash)
    expect(copy.library.get('bulk.tool_2999')).toEqual(TOOLS.at(-1))
    copy.library.release(0)

    // Released: the file is closed; a tool not read before can't be read any more.
    library.release(0)
    expect(await openFiles()).toBe(0)
    expect(() => library.get('bulk.tool_1234')).toThrow(REPLACED)
  })

  it('closes the tools file of a replaced or deleted version: no descriptor leaks on reload', async () => {
    const dir = await save()
    const registry = new LibraryRegistry({ releaseGraceMs: 0 })
    expect(await openFiles()).toBe(0)
    for (let reload = 0; reload < 20; reload += 1) {
      registry.set(await loadIndexedLibrary(dir, config))
      expect(registry.require('idx').library.get('bulk.tool_7')?.name).toBe('tool_7')
    }
    expect(await openFiles()).toBe(1)
    // The examples alone changing keeps the library, and its file stays open.
    const current = registry.require('idx')
    registry.set({ ...current })
    expect(current.library.get('bulk.tool_8')?.name).toBe('tool_8')
    registry.delete('idx')
    expect(await openFiles()).toBe(0)

    // With a grace period the replaced version stays readable until it ends.
    const graceful = new LibraryRegistry({ releaseGraceMs: 200 })
    const first = await loadIndexedLibrary(dir, config)
    graceful.set(first)
    graceful.set(await loadIndexedLibrary(dir, config))
    expect(first.library.get('bulk.tool_9')?.name).toBe('tool_9')
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(() => first.library.get('bulk.tool_10')).toThrow(REPLACED)
    graceful.delete('idx')
  })

  it('keeps a replaced version open past its grace while a reader holds it, and closes it after the last', async () => {
    const dir = await save()
    const registry = new LibraryRegistry({ releaseGraceMs: 0 })
    const first = await loadIndexedLibrary(dir, config)
    registry.set(first)
    // A view (a subset reading through its parent) holds its parent's file.
    const firstReader = ToolLibrary.subset(first.library, Int32Array.of(12, 13)).hold()
    const reading = holding(first, async () => {
      // The swap comes while this reader runs; its grace (0) is over at once.
      registry.set(await loadIndexedLibrary(dir, config))
      await new Promise((resolve) => setTimeout(resolve, 50))
      return first.library.get('bulk.tool_11')?.name
    })
    expect(await reading).toBe('tool_11')
    // One reader is done; the other still holds the old version open next to the new one.
    expect(await openFiles()).toBe(2)
    expect(first.library.get('bulk.tool_12')?.name).toBe('tool_12')
    firstReader()
    firstReader()
    expect(await openFiles()).toBe(1)
    expect(() => first.library.get('bulk.tool_13')).toThrow(REPLACED)
    // The served version is untouched; a hold on a library in memory is harmless.
    expect(registry.require('idx').library.get('bulk.tool_13')?.name).toBe('tool_13')
    new ToolLibrary('mem', TOOLS.slice(0, 3)).hold()()
    registry.delete('idx')
    expect(await openFiles()).toBe(0)
  })

  /** The tools file's text with one tool cut short and two lines of one length swapped. */
  function damage(text: string): string {
    const lines = text.split('\n')
    const at = (id: string) => lines.findIndex((line) => line.startsWith(`{"id":"${id}"`))
    const cut = at('bulk.tool_5')
    lines[cut] = `${lines[cut].slice(0, -1)} `
    const [a, b] = [at('bulk.tool_10'), at('bulk.tool_11')]
    expect(lines[a].length).toBe(lines[b].length)
    ;[lines[a], lines[b]] = [lines[b], lines[a]]
    const damaged = lines.join('\n')
    expect(Buffer.byteLength(damaged)).toBe(Buffer.byteLength(text))
    return damaged
  }

  it('refuses at load a tools file changed in place since the save (same size), by its CRC-32', async () => {
    const dir = await save()
    const toolsPath = join(dir, 'tools.jsonl')
    const text = await readFile(toolsPath, 'utf8')
    const changedAtLoad = expect.objectContaining({
      code: 'INDEX_CORRUPT',
      message: expect.stringMatching(
        /tools file .*tools\.jsonl was changed since its index was saved: its CRC-32 is [0-9a-f]{8}, .*tools\.idx says [0-9a-f]{8}\. Rebuild it with/,
      ),
    })
    // Still valid JSON with the right id: only a checksum of the whole file can tell.
    const edited = text.replace('Bulk tool 7 for', 'Bulk tool 8 for')
    expect(edited).not.toBe(text)
    expect(Buffer.byteLength(edited)).toBe(Buffer.byteLength(text))
    await writeFile(toolsPath, edited)
    await expect(loadIndexedLibrary(dir, config)).rejects.toThrow(changedAtLoad)
    await writeFile(toolsPath, damage(text))
    await expect(loadIndexedLibrary(dir, config)).rejects.toThrow(changedAtLoad)
    // Nothing is left open by a refused load.
    expect(await openFiles()).toBe(0)
    await writeFile(toolsPath, text)
    const { library } = await loadIndexedLibrary(dir, config)
    expect(library.get('bulk.tool_7')?.description).toBe('Bulk tool 7 for the id table.')
    library.release(0)
  })

  it('reports a tool line damaged in place after the load (same size) as INDEX_CORRUPT when it is read', async () => {
    const dir = await save()
    const toolsPath = join(dir, 'tools.jsonl')
    const { library } = await loadIndexedLibrary(dir, config)
    // Rewritten in place: the open file sees the new bytes.
    await writeFile(toolsPath, damage(await readFile(toolsPath, 'utf8')))
    expect(library.get('bulk.tool_4')?.name).toBe('tool_4')
    for (const id of ['bulk.tool_5', 'bulk.tool_10', 'bulk.tool_11']) {
      expect(() => library.get(id)).toThrow(
        expect.objectContaining({
          code: 'INDEX_CORRUPT',
          message: expect.stringMatching(
            /line \d+ of the tools file .* is not a valid tool.*Rebuild/,
          ),
        }),
      )
    }
    library.release(0)
  })
})
