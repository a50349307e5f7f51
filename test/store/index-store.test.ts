import { mkdir, mkdtemp, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  buildIndexedLibrary,
  deleteIndex,
  listIndexes,
  loadIndexedLibrary,
  recoverIndexDir,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'

const config = defaultConfig()
let indexDir: string

beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-indexes-'))
})

async function saveSample(tools = SAMPLE_TOOLS, name = 'sample') {
  const indexed = await buildIndexedLibrary(new ToolLibrary(name, tools), config, {
    source: { path: '/data/sample.json' },
  })
  return { indexed, dir: await saveIndexedLibrary(indexDir, indexed) }
}

describe('index store', () => {
  it('round-trips a library: same tools, same hash, same retrieval results', async () => {
    const { indexed, dir } = await saveSample()
    expect((await readdir(dir)).sort()).toEqual([
      'bm25.bin',
      'manifest.json',
      'tools.idx',
      'tools.jsonl',
    ])
    const loaded = await loadIndexedLibrary(dir, config)
    expect(loaded.library.tools).toEqual(indexed.library.tools)
    expect(loaded.library.contentHash).toBe(indexed.library.contentHash)
    expect(loaded.manifest).toMatchObject({
      formatVersion: 1,
      library: 'sample',
      toolCount: SAMPLE_TOOLS.length,
      defaultRetriever: 'bm25',
    })
    const query = { k: 5, minScore: 0 }
    expect(await loaded.retrievers.get('bm25')!.retrieve('send email', query)).toEqual(
      await indexed.retrievers.get('bm25')!.retrieve('send email', query),
    )
  })

  it("gives BM25 candidates their tools' positions in the library, built and loaded", async () => {
    const { indexed, dir } = await saveSample()
    const loaded = await loadIndexedLibrary(dir, config)
    for (const { library, retrievers } of [indexed, loaded]) {
      for (const query of ['send email', 'weather forecast for tomorrow', 'search files']) {
        const candidates = await retrievers.get('bm25')!.retrieve(query, { k: 10, minScore: 0 })
        expect(candidates.length).toBeGreaterThan(0)
        for (const { id, position } of candidates) expect(library.idList.at(position!)).toBe(id)
      }
    }
  })

  it('applies the configured tau to loaded indexes', async () => {
    const { dir } = await saveSample()
    const strict = parseConfig({ retrieve: { bm25: { tau: 1000 } } })
    const loaded = await loadIndexedLibrary(dir, strict)
    expect(await loaded.retrievers.get('bm25')!.retrieve('send email', { k: 5 })).toEqual([])
  })

  it('refuses an index built with other BM25 settings, saying how to rebuild', async () => {
    const { dir } = await saveSample()
    const other = parseConfig({ retrieve: { bm25: { k1: 1.5 } } })
    await expect(loadIndexedLibrary(dir, other)).rejects.toMatchObject({
      code: 'INDEX_MISMATCH',
      message: expect.stringContaining('k1 1.2 vs 1.5'),
    })
    await expect(loadIndexedLibrary(dir, other)).rejects.toMatchObject({
      message: expect.stringContaining(
        'Rebuild it with: toolsel index /data/sample.json --name sample.',
      ),
    })
  })

  it('refuses an index of another format version', async () => {
    const { dir } = await saveSample()
    const manifestPath = join(dir, 'manifest.json')
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'))
    await writeFile(manifestPath, JSON.stringify({ ...manifest, formatVersion: 99 }))
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_MISMATCH',
      message: expect.stringContaining('index format 99'),
    })
  })

  it('detects a tools file that does not match the manifest', async () => {
    const { dir } = await saveSample()
    const toolsPath = join(dir, 'tools.jsonl')
    const lines = (await readFile(toolsPath, 'utf8')).trim().split('\n')
    await writeFile(toolsPath, `${lines.slice(1).join('\n')}\n`)
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({ code: 'INDEX_CORRUPT' })
  })

  it('replaces an existing index atomically and leaves no temporary directories', async () => {
    await saveSample()
    const { dir } = await saveSample(SAMPLE_TOOLS.slice(0, 3))
    expect((await loadIndexedLibrary(dir, config)).library.size).toBe(3)
    expect(await indexDirEntries(indexDir)).toEqual(['sample'])
  })

  it('recovers the old index when a save died between its two renames', async () => {
    const { dir } = await saveSample()
    // Simulate the crash window: the old index was moved aside, the new one never arrived.
    await rename(dir, join(indexDir, '.old-sample-0123456789ab'))
    await mkdir(join(indexDir, '.tmp-sample-ba9876543210'))
    await recoverIndexDir(indexDir)
    expect(await indexDirEntries(indexDir)).toEqual(['sample'])
    expect((await loadIndexedLibrary(dir, config)).library.size).toBe(SAMPLE_TOOLS.length)
  })

  it('lists and deletes indexes', async () => {
    await saveSample(SAMPLE_TOOLS, 'one')
    await saveSample(SAMPLE_TOOLS, 'two')
    await mkdir(join(indexDir, 'not-an-index'))
    expect(await listIndexes(indexDir)).toEqual(['one', 'two'])
    expect(await deleteIndex(indexDir, 'one')).toBe(true)
    expect(await deleteIndex(indexDir, 'one')).toBe(false)
    expect(await listIndexes(indexDir)).toEqual(['two'])
  })

  it('says how to build an index when none exists', async () => {
    await expect(loadIndexedLibrary(join(indexDir, 'missing'), config)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('toolsel index <file> --name <library>'),
    })
  })
})
