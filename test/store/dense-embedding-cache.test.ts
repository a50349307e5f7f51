import { chmod, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { toolContentHash, type Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { EmbeddingCache } from '../../src/retrieve/dense/embedding-cache.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import {
  createHashingEmbeddingModel,
  recordEmbedCalls,
} from '../helpers/hashing-embedding-model.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

let indexDir: string

beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-dense-cache-'))
})

const config = parseConfig({ retrieve: { dense: { embedder: 'hashing' } } })

/** Builds `tools` as library "sample" over the previous index, saves it, returns the embed count. */
async function rebuild(
  tools: Tool[],
  options: { text?: 'full' | 'short'; logger?: ReturnType<typeof createMemoryLogger> } = {},
) {
  const embedder = recordEmbedCalls(createHashingEmbeddingModel())
  const settings = parseConfig({
    retrieve: { dense: { embedder: 'hashing', text: options.text ?? 'full' } },
  })
  const indexed = await buildIndexedLibrary(new ToolLibrary('sample', tools), settings, {
    retriever: 'hybrid',
    embedder,
    previousIndexDir: join(indexDir, 'sample'),
    logger: options.logger,
  })
  const dir = await saveIndexedLibrary(indexDir, indexed)
  return { embedded: embedder.embeddedTexts(), calls: embedder.calls, dir }
}

describe('embedding cache reuse', () => {
  it('re-embeds only the tools that changed when a library is rebuilt under the same name', async () => {
    expect((await rebuild(SAMPLE_TOOLS)).embedded).toBe(SAMPLE_TOOLS.length)

    const changed = SAMPLE_TOOLS.slice(1).map((tool) =>
      tool.id === 'mail.send_email'
        ? { ...tool, description: 'Send an email with attachments.' }
        : tool,
    )
    const added: Tool = {
      id: 'notes.create_note',
      name: 'create_note',
      namespace: 'notes',
      description: 'Create a note with a title and text.',
      parameters: { type: 'object', properties: {} },
    }
    const second = await rebuild([...changed, added])
    expect(second.embedded).toBe(2)
    expect(second.calls.flatMap((call) => call.texts).join('\n')).toContain('attachments')
    expect(second.calls.every((call) => call.options.kind === 'document')).toBe(true)

    // The saved cache holds the current tools only (the removed tool's vector is pruned).
    const cache = await EmbeddingCache.load(join(second.dir, 'embeddings.cache'))
    expect(cache.size).toBe(SAMPLE_TOOLS.length)

    const loaded = await loadIndexedLibrary(second.dir, config)
    const [first] = await loaded.retrievers.get('dense')!.retrieve('create a note', { k: 1 })
    expect(first.id).toBe('notes.create_note')

    expect((await rebuild([...changed, added])).embedded).toBe(0)
  })

  it('re-embeds everything when the tool text kind changed (the cache is keyed by tool content)', async () => {
    await rebuild(SAMPLE_TOOLS)
    const short = await rebuild(SAMPLE_TOOLS, { text: 'short' })
    expect(short.embedded).toBe(SAMPLE_TOOLS.length)
    expect(
      short.calls.flatMap((call) => call.texts).some((text) => text.includes('Parameters:')),
    ).toBe(false)
    expect((await rebuild(SAMPLE_TOOLS, { text: 'short' })).embedded).toBe(0)
  })

  it('ignores an unreadable cache with a warning and embeds every tool', async () => {
    const { dir } = await rebuild(SAMPLE_TOOLS)
    const file = join(dir, 'embeddings.cache')
    const bytes = Buffer.alloc(8)
    bytes.writeUInt32LE(4)
    await writeFile(file, Buffer.concat([bytes.subarray(0, 4), Buffer.from('{no')]))
    const logger = createMemoryLogger()
    expect((await rebuild(SAMPLE_TOOLS, { logger })).embedded).toBe(SAMPLE_TOOLS.length)
    expect(logger.lines.join('\n')).toContain('Ignoring the previous embedding cache')
  })

  it.skipIf(process.platform === 'win32')(
    'ignores a cache group or others can write, with a warning, and embeds every tool',
    async () => {
      const { dir } = await rebuild(SAMPLE_TOOLS)
      await chmod(join(dir, 'embeddings.cache'), 0o666)
      const logger = createMemoryLogger()
      expect((await rebuild(SAMPLE_TOOLS, { logger })).embedded).toBe(SAMPLE_TOOLS.length)
      expect(logger.lines.join('\n')).toMatch(/Ignoring the embedding cache .*mode 666/)
      // The rebuild wrote its own (0644): the next one trusts it.
      expect((await rebuild(SAMPLE_TOOLS)).embedded).toBe(0)
    },
  )

  it("ignores a cache whose vectors of this embedder have another length than the embedder's", async () => {
    const { dir } = await rebuild(SAMPLE_TOOLS)
    const file = join(dir, 'embeddings.cache')
    // Every hash of the library, under the embedder's id, with vectors one shorter: a poisoned
    // (or stale) file whose header looks right.
    const saved = await EmbeddingCache.load(file)
    const poisoned = new EmbeddingCache()
    const embedder = createHashingEmbeddingModel()
    for (const tool of SAMPLE_TOOLS) {
      const hash = toolContentHash(tool)
      const vector = saved.get(embedder.modelId, hash)!
      poisoned.set(embedder.modelId, hash, vector.slice(1))
    }
    await poisoned.save(file)
    const logger = createMemoryLogger()
    expect((await rebuild(SAMPLE_TOOLS, { logger })).embedded).toBe(SAMPLE_TOOLS.length)
    expect(logger.lines.join('\n')).toMatch(
      new RegExp(`holds ${embedder.dimensions - 1}-dimension vectors of ${embedder.modelId}`),
    )
  })

  it('reports dense progress from the first to the last tool', async () => {
    const stages: string[] = []
    await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config, {
      retriever: 'dense',
      onProgress: ({ stage, done, total }) => stages.push(`${stage} ${done}/${total}`),
    })
    const dense = stages.filter((line) => line.startsWith('dense'))
    expect(dense[0]).toBe(`dense 0/${SAMPLE_TOOLS.length}`)
    expect(dense.at(-1)).toBe(`dense ${SAMPLE_TOOLS.length}/${SAMPLE_TOOLS.length}`)
  })
})
