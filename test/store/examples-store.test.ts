/** Usage examples stored with an index: built into BM25, saved atomically, loaded back, checked. */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  recoverIndexDir,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { readStoredExamples } from '../../src/store/examples-part.ts'
import { SAMPLE_EXAMPLES, SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'

const EXAMPLES = SAMPLE_EXAMPLES

async function build(examples?: ExampleSet) {
  const library = new ToolLibrary('sample', SAMPLE_TOOLS)
  return buildIndexedLibrary(library, defaultConfig(), examples ? { examples } : {})
}

describe('an index with usage examples', () => {
  it('ranks a tool by the words of its examples (expansion index), and only with them', async () => {
    const plain = await build()
    const expanded = await build(ExampleSet.of(EXAMPLES))
    const query = 'holler at the drummer'
    const search = (indexed: Awaited<ReturnType<typeof build>>) =>
      indexed.retrievers.get('bm25')!.retrieve(query, { k: 3, minScore: 0 })
    expect(await search(plain)).toEqual([])
    expect((await search(expanded))[0].id).toBe('sms.send_sms')
    // A tool with a single example gets no expansion document (anecdote), but is in the memory.
    expect(
      await expanded.retrievers
        .get('bm25')!
        .retrieve('shoot a note', { k: 3, minScore: 0 })
        .then((hits) => hits.map((hit) => hit.id)),
    ).not.toContain('mail.send_email')
    expect(expanded.examples!.memory.vote('shoot Ann a note').scores.get('mail.send_email')).toBe(1)
    // Without examples the tool scores are exactly the plain index's.
    expect(await plain.retrievers.get('bm25')!.retrieve('send an email', { k: 5 })).toEqual(
      await expanded.retrievers.get('bm25')!.retrieve('send an email', { k: 5 }),
    )
  })

  it('saves examples and the expansion index with the manifest, and loads them back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-examples-store-'))
    const indexed = await build(ExampleSet.of(EXAMPLES, { cap: 50 }))
    const saved = await saveIndexedLibrary(dir, indexed)
    const manifest = JSON.parse(await readFile(join(saved, 'manifest.json'), 'utf8'))
    expect(manifest.examples).toMatchObject({
      file: 'examples.jsonl',
      count: 3,
      version: 1,
      cap: 50,
    })
    expect(manifest.retrievers.bm25).toMatchObject({ examplesFile: 'bm25-examples.bin' })
    const loaded = await loadIndexedLibrary(saved, defaultConfig())
    expect(loaded.examples!.set.examples).toEqual(EXAMPLES)
    expect(loaded.examples!.set.version).toBe(1)
    const query = 'holler at the drummer'
    expect(await loaded.retrievers.get('bm25')!.retrieve(query, { k: 3 })).toEqual(
      await indexed.retrievers.get('bm25')!.retrieve(query, { k: 3 }),
    )
    expect((await readStoredExamples(saved))!.contentHash).toBe(indexed.examples!.set.contentHash)

    await writeFile(join(saved, 'examples.jsonl'), '{"instruction":"x","tools":["sms.send_sms"]}\n')
    await expect(loadIndexedLibrary(saved, defaultConfig())).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('do not match the manifest'),
    })
  })

  it('refuses examples naming tools the library lacks', async () => {
    await expect(
      build(ExampleSet.of([{ instruction: 'x', tools: ['nope.tool'] }])),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { ids: ['nope.tool'] } })
  })

  it('loads an index written before usage examples (no examples field weight)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-examples-old-'))
    const saved = await saveIndexedLibrary(dir, await build())
    const path = join(saved, 'manifest.json')
    const manifest = JSON.parse(await readFile(path, 'utf8'))
    delete manifest.retrievers.bm25.fieldWeights.examples
    await writeFile(path, JSON.stringify(manifest))
    const loaded = await loadIndexedLibrary(saved, defaultConfig())
    expect(loaded.examples).toBeUndefined()
  })

  it('refuses a truncated, altered or mismatched examples file; a crash mid-save keeps the old one', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-examples-corrupt-'))
    const many = Array.from({ length: 60 }, (_, at) => ({
      instruction: `holler at band member ${at} about the gig, é ü 日本`,
      tools: at % 2 ? ['sms.send_sms'] : ['sms.send_sms', 'mail.send_email'],
    }))
    const saved = await saveIndexedLibrary(indexDir, await build(ExampleSet.of(many)))
    const path = join(saved, 'examples.jsonl')
    const bytes = await readFile(path)
    const config = defaultConfig()
    expect((await loadIndexedLibrary(saved, config)).examples!.set.examples).toEqual(many)
    const refused = async (content: Buffer | string, problem: string) => {
      await writeFile(path, content)
      await expect(loadIndexedLibrary(saved, config)).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringContaining(problem),
      })
    }
    // Cut mid-line (mid-character too), cut at a line, a line changed, a byte-order mark added.
    await refused(bytes.subarray(0, bytes.length - 40), "can't be read")
    await refused(bytes.subarray(0, bytes.indexOf('日') + 1), "can't be read")
    const lastLine = bytes.lastIndexOf(10, bytes.length - 2) + 1
    await refused(bytes.subarray(0, lastLine), 'do not match the manifest')
    await refused(bytes.toString().replace('member 7 ', 'member 8 '), 'do not match the manifest')
    await refused('', 'do not match the manifest')
    // Same examples written another way (a byte-order mark, CRLF): the same examples, loaded.
    await writeFile(path, `\uFEFF${bytes.toString().replaceAll('\n', '\r\n')}`)
    expect((await loadIndexedLibrary(saved, config)).examples!.set.examples).toEqual(many)
    // A tool the library lacks, with a manifest that vouches for the file: still refused.
    const manifestPath = join(saved, 'manifest.json')
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'))
    const stranger = ExampleSet.of([...many, { instruction: 'x', tools: ['nope.tool'] }])
    await writeFile(
      manifestPath,
      JSON.stringify({
        ...manifest,
        examples: { ...manifest.examples, count: 61, contentHash: stranger.contentHash },
      }),
    )
    await refused(stranger.toJsonLines(), 'name tools the library does not have ("nope.tool")')
    // Another index format version: refused before the examples are read.
    await writeFile(manifestPath, JSON.stringify({ ...manifest, formatVersion: 99 }))
    await expect(loadIndexedLibrary(saved, config)).rejects.toMatchObject({
      code: 'INDEX_MISMATCH',
    })
    // A save that dies before its commit leaves the index as it was.
    await writeFile(manifestPath, JSON.stringify(manifest))
    await writeFile(path, bytes)
    const next = await build(ExampleSet.of(many.slice(0, 10)))
    await expect(
      saveIndexedLibrary(indexDir, next, {
        beforeCommit: () => {
          throw new Error('crash')
        },
      }),
    ).rejects.toThrow('crash')
    await recoverIndexDir(indexDir)
    expect(await indexDirEntries(indexDir)).toEqual(['sample'])
    expect((await loadIndexedLibrary(saved, config)).examples!.set.examples).toEqual(many)
  })
})
