import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { defaultConfig } from '../../../src/config/schema.ts'
import { ToolLibrary } from '../../../src/library/tool-library.ts'
import { Bm25Retriever } from '../../../src/retrieve/bm25/bm25-retriever.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../../src/store/library-lifecycle.ts'
import { bm25Settings } from '../../../src/store/kinds/bm25-kind.ts'
import { readBm25File, writeBm25File } from '../../../src/store/kinds/bm25-file.ts'
import { indexFileBound } from '../../../src/store/index-file-read.ts'
import { winkIndex } from '../../helpers/wink-reference.ts'
import { SAMPLE_TOOLS } from '../../helpers/sample-tools.ts'

const config = defaultConfig()
const settings = bm25Settings(config)
/** The bound of a file of an index with no record of its files' sizes. */
const unrecorded = indexFileBound({}, 'bm25.bin')
let dir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-bm25-file-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('BM25 binary file', () => {
  it('reads back exactly the postings it wrote', async () => {
    const retriever = Bm25Retriever.build(SAMPLE_TOOLS, settings)
    const path = join(dir, 'bm25.bin')
    await writeBm25File(path, retriever.postings)
    const read = await readBm25File(path, 'Rebuild it.', unrecorded)
    expect(read).toEqual(retriever.postings)
    const restored = Bm25Retriever.fromPostings(retriever.ids, read, settings)
    for (const query of ['send email', 'weather in Paris', 'stock quote'])
      expect(restored.search(query, 5, 0)).toEqual(retriever.search(query, 5, 0))
  })

  it('writes the terms of postings read from a file as they were read: same bytes, no term listed or encoded again (round 54)', async () => {
    // Until round 54 every save listed, checked, joined and encoded the terms again, though those
    // of a library loaded from its index are the loaded ones: ~31 ms of one turn at 100k tools.
    const built = Bm25Retriever.build(SAMPLE_TOOLS, settings).postings
    const path = join(dir, 'bm25.bin')
    await writeBm25File(path, built)
    const read = await readBm25File(path, 'Rebuild it.', unrecorded)
    const listed = vi.spyOn(read.termIndex, 'keys')
    const again = join(dir, 'again.bin')
    await writeBm25File(again, read)
    expect(listed).not.toHaveBeenCalled()
    expect((await readFile(again)).equals(await readFile(path))).toBe(true)
    // Built postings (a changed library's) are listed and encoded as before.
    const listedBuilt = vi.spyOn(built.termIndex, 'keys')
    await writeBm25File(join(dir, 'built.bin'), built)
    expect(listedBuilt).toHaveBeenCalledTimes(1)
    expect((await readFile(join(dir, 'built.bin'))).equals(await readFile(path))).toBe(true)
  })

  it('saves bm25.bin of a loaded library again byte for byte, and a changed library a fresh one (round 54)', async () => {
    const indexed = await buildIndexedLibrary(new ToolLibrary('bm25', SAMPLE_TOOLS), config)
    const first = await saveIndexedLibrary(join(dir, 'first'), indexed)
    const loaded = await loadIndexedLibrary(first, config)
    const resaved = await saveIndexedLibrary(join(dir, 'again'), loaded)
    const bin = (target: string) => readFile(join(target, 'bm25.bin'))
    expect((await bin(resaved)).equals(await bin(first))).toBe(true)
    const extra = {
      id: 'extra.zebra',
      name: 'zebra',
      description: 'Feeds a zebra.',
      parameters: {},
    }
    const changed = await saveIndexedLibrary(
      join(dir, 'changed'),
      await buildIndexedLibrary(new ToolLibrary('bm25', [...loaded.library.tools, extra]), config),
    )
    const fresh = await saveIndexedLibrary(
      join(dir, 'fresh'),
      await buildIndexedLibrary(new ToolLibrary('bm25', [...SAMPLE_TOOLS, extra]), config),
    )
    expect((await bin(changed)).equals(await bin(fresh))).toBe(true)
    expect((await bin(changed)).includes('zebra')).toBe(true)
    loaded.library.release(0)
  })

  it('writes an empty library', async () => {
    const empty = Bm25Retriever.build([], settings)
    await writeBm25File(join(dir, 'empty.bin'), empty.postings)
    expect(await readBm25File(join(dir, 'empty.bin'), '', unrecorded)).toEqual(empty.postings)
  })

  it('refuses a file that is not one, truncated or of another version, with the fix', async () => {
    const path = join(dir, 'bm25.bin')
    await writeBm25File(path, Bm25Retriever.build(SAMPLE_TOOLS, settings).postings)
    const bytes = await readFile(path)
    const refused = async (content: Buffer, why: RegExp) => {
      await writeFile(path, content)
      const error = await readBm25File(path, 'Rebuild it with: toolsel index x.', unrecorded).catch(
        (e) => e,
      )
      expect(error).toMatchObject({ code: 'INDEX_CORRUPT' })
      expect(error.message).toMatch(why)
      expect(error.message).toContain('Rebuild it with: toolsel index x.')
    }
    await refused(Buffer.from('{"not":"binary"}'), /is not a toolsel BM25 file/)
    await refused(bytes.subarray(0, bytes.length - 16), /section/)
    const otherVersion = Buffer.from(bytes)
    otherVersion.writeUInt32LE(99, 8)
    await refused(otherVersion, /format version 99; this version of toolsel reads version 1/)
    const outside = Buffer.from(bytes)
    const header = JSON.parse(outside.toString('utf8', 16, 16 + outside.readUInt32LE(12)))
    outside.writeInt32LE(1_000_000, header.sections.docs[0])
    await refused(outside, /posting outside the library/)
  })
})

describe('BM25 binary file, larger', () => {
  it('reads back a larger index (terms and postings past a step), refuses it corrupted', async () => {
    // 3,000 tools, ~6,000 terms (past 1,024 a step), ~30,000 postings (past 16,384 a step).
    const tools = Array.from({ length: 3000 }, (_, at) => ({
      id: `t.tool_${at}`,
      name: `tool_${at}`,
      description: `word${at % 2000} word${(at * 7) % 2003} é${at % 500} 日本${at % 300} shared`,
      parameters: { type: 'object' as const, properties: {} },
    }))
    const retriever = Bm25Retriever.build(tools, settings)
    expect(retriever.postings.termIndex.size).toBeGreaterThan(2048)
    expect(retriever.postings.docs.length).toBeGreaterThan(16_384)
    const path = join(dir, 'bm25.bin')
    await writeBm25File(path, retriever.postings)
    expect(await readBm25File(path, 'Rebuild it.', unrecorded)).toEqual(retriever.postings)

    const bytes = await readFile(path)
    const header = JSON.parse(bytes.toString('utf8', 16, 16 + bytes.readUInt32LE(12)))
    const refused = async (content: Buffer, why: RegExp) => {
      await writeFile(path, content)
      const error = await readBm25File(path, 'Rebuild it.', unrecorded).catch((e) => e)
      expect(error).toMatchObject({ code: 'INDEX_CORRUPT' })
      expect(error.message).toMatch(why)
    }
    // A term's line break replaced: one term fewer than the header says.
    const [termsAt] = header.sections.terms
    const merged = Buffer.from(bytes)
    merged[merged.indexOf(10, termsAt)] = 0x78
    await refused(merged, /term dictionary of the wrong size/)
    // A term's offset past the next one's, deep in the table.
    const offsets = Buffer.from(bytes)
    offsets.writeUInt32LE(0xffffff, header.sections.offsets[0] + 4 * 5000)
    await refused(offsets, /inconsistent postings offsets/)
    // A posting outside the library, in the last step.
    const outside = Buffer.from(bytes)
    outside.writeInt32LE(-1, header.sections.docs[0] + header.sections.docs[1] - 4)
    await refused(outside, /posting outside the library/)
  })
})

describe('indexes saved before the binary format', () => {
  it('still load (wink’s JSON export, no fileFormat in the manifest) with the same results', async () => {
    const library = new ToolLibrary('old', SAMPLE_TOOLS)
    const indexed = await buildIndexedLibrary(library, config)
    const target = await saveIndexedLibrary(dir, indexed)
    // Rewrite it as toolsel wrote indexes before: bm25.json holding wink's export.
    await writeFile(join(target, 'bm25.json'), winkIndex(SAMPLE_TOOLS, settings).exportJSON())
    await rm(join(target, 'bm25.bin'))
    const manifest = JSON.parse(await readFile(join(target, 'manifest.json'), 'utf8'))
    delete manifest.retrievers.bm25.fileFormat
    manifest.retrievers.bm25.file = 'bm25.json'
    await writeFile(join(target, 'manifest.json'), JSON.stringify(manifest))
    const loaded = await loadIndexedLibrary(target, config)
    for (const query of ['send an email to Bob', 'weather forecast Paris', 'book a flight']) {
      expect(await loaded.retrievers.get('bm25')!.retrieve(query, { k: 5 })).toEqual(
        await indexed.retrievers.get('bm25')!.retrieve(query, { k: 5 }),
      )
    }
  })
})
