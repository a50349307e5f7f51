import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import { buildIdTable, IdTable, idTableSize } from '../../src/library/id-table.ts'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

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

async function save(tools: readonly Tool[] = TOOLS): Promise<string> {
  const indexed = await buildIndexedLibrary(new ToolLibrary('idx', tools), config)
  return saveIndexedLibrary(indexDir, indexed)
}

describe('id table', () => {
  it('finds every id at its position and misses unknown ones', () => {
    const ids = TOOLS.map((tool) => tool.id)
    const table = buildIdTable(ids)
    if (!(table instanceof Int32Array)) throw new Error('no duplicates expected')
    expect(table.length).toBe(idTableSize(ids.length))
    expect(table.length).toBeGreaterThanOrEqual(2 * ids.length)
    const lookup = new IdTable(ids, table)
    for (const [position, id] of ids.entries()) expect(lookup.get(id)).toBe(position)
    for (const missing of ['', 'bulk.tool_3000', 'weather', 'météo']) {
      expect(lookup.get(missing)).toBeUndefined()
      expect(lookup.has(missing)).toBe(false)
    }
  })

  it('reports the first repeated id', () => {
    expect(buildIdTable(['a', 'b', 'a', 'b'])).toEqual({ duplicate: 2 })
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
})
