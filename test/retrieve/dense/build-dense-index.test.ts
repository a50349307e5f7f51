import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isToolselError } from '../../../src/errors.ts'
import { buildDenseIndex } from '../../../src/retrieve/dense/build-dense-index.ts'
import { loadDenseIndex, saveDenseIndex } from '../../../src/retrieve/dense/dense-index.ts'
import { EmbeddingCache } from '../../../src/retrieve/dense/embedding-cache.ts'
import {
  createHashingEmbeddingModel,
  recordEmbedCalls,
} from '../../helpers/hashing-embedding-model.ts'
import { CONTRACT_TOOLS } from '../retriever.contract.ts'

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'toolsel-dense-'))
})
afterEach(async () => {
  await rm(directory, { recursive: true, force: true })
})

const tools = () => CONTRACT_TOOLS.map((tool) => ({ ...tool }))

describe('buildDenseIndex', () => {
  it('embeds every tool as a document in batches and reports progress', async () => {
    const embedder = recordEmbedCalls(createHashingEmbeddingModel(64))
    const progress: Array<[number, number]> = []
    const dense = await buildDenseIndex(tools(), embedder, {
      kind: 'flat',
      batchSize: 10,
      onProgress: (done, total) => progress.push([done, total]),
    })
    const total = CONTRACT_TOOLS.length
    expect(dense.ids).toEqual(CONTRACT_TOOLS.map((tool) => tool.id))
    expect(dense.index.size).toBe(total)
    expect(embedder.calls.map((call) => call.texts.length)).toEqual([10, 10, total - 20])
    expect(embedder.calls.every((call) => call.options.kind === 'document')).toBe(true)
    expect(progress).toEqual([
      [0, total],
      [10, total],
      [20, total],
      [total, total],
    ])
  })

  it('re-embeds only changed and new tools when given the cache of a previous build', async () => {
    const file = join(directory, 'embeddings.cache')
    const first = recordEmbedCalls(createHashingEmbeddingModel(64))
    const cache = new EmbeddingCache()
    await buildDenseIndex(tools(), first, { kind: 'flat', cache })
    expect(first.embeddedTexts()).toBe(CONTRACT_TOOLS.length)
    await cache.save(file)

    const changed = tools()
    changed[3] = { ...changed[3], description: 'Send an email with attachments' }
    changed.push({ ...changed[0], id: 'weather.get_forecast_v2' })
    changed.splice(5, 1)
    const second = recordEmbedCalls(createHashingEmbeddingModel(64))
    const loaded = await EmbeddingCache.load(file)
    const dense = await buildDenseIndex(changed, second, { kind: 'hnsw', cache: loaded })
    expect(second.embeddedTexts()).toBe(2)
    expect(dense.ids).toEqual(changed.map((tool) => tool.id))
    // The removed tool's vector is pruned; the two new ones are added.
    expect(loaded.size).toBe(changed.length)
  })

  it('stops with ABORTED when the signal fires', async () => {
    const controller = new AbortController()
    const build = buildDenseIndex(tools(), createHashingEmbeddingModel(64), {
      batchSize: 5,
      signal: controller.signal,
      onProgress: (done) => {
        if (done >= 5) controller.abort()
      },
    })
    const error = await build.catch((caught: unknown) => caught)
    expect(isToolselError(error, 'ABORTED')).toBe(true)
  })
})

describe('saveDenseIndex / loadDenseIndex', () => {
  for (const kind of ['flat', 'hnsw'] as const) {
    it(`round-trips a ${kind} index with its ids`, async () => {
      const embedder = createHashingEmbeddingModel(64)
      const dense = await buildDenseIndex(tools(), embedder, { kind })
      await saveDenseIndex(directory, dense)
      const loaded = await loadDenseIndex(directory, {
        name: 'demo',
        embedderId: embedder.modelId,
        dimensions: 64,
      })
      expect(loaded.index.kind).toBe(kind)
      expect(loaded.ids).toEqual(dense.ids)
      const [query] = await embedder.embed(['weather forecast'])
      expect(loaded.index.search(query, 5)).toEqual(dense.index.search(query, 5))
    })
  }

  it('refuses an index built with another embedder', async () => {
    await saveDenseIndex(directory, await buildDenseIndex(tools(), createHashingEmbeddingModel(64)))
    const error = await loadDenseIndex(directory, {
      name: 'demo',
      embedderId: 'hashing:128',
      dimensions: 128,
    }).catch((caught: unknown) => caught)
    expect(isToolselError(error, 'INDEX_MISMATCH')).toBe(true)
  })
})
