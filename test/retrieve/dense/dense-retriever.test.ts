import { describe, expect, it } from 'vitest'
import { isToolselError } from '../../../src/errors.ts'
import type { EmbeddingModel } from '../../../src/models/embedding-model.ts'
import { OnnxEmbeddingModel } from '../../../src/models/onnx/onnx-embedding-model.ts'
import { buildDenseIndex } from '../../../src/retrieve/dense/build-dense-index.ts'
import { DenseRetriever } from '../../../src/retrieve/dense/dense-retriever.ts'
import type { VectorIndexKind } from '../../../src/retrieve/dense/vector-index.ts'
import {
  createHashingEmbeddingModel,
  recordEmbedCalls,
} from '../../helpers/hashing-embedding-model.ts'
import { CONTRACT_TOOLS, runRetrieverContract } from '../retriever.contract.ts'
import {
  TINY_EMBEDDER as TINY,
  TINY_EMBEDDER_MISSING as TINY_MISSING,
} from '../../helpers/tiny-embedder.ts'

let tiny: Promise<OnnxEmbeddingModel> | undefined
const embedders: Record<string, () => Promise<EmbeddingModel>> = {
  'hashing:256': async () => createHashingEmbeddingModel(256),
  'onnx:tiny-embedder': () => (tiny ??= OnnxEmbeddingModel.load(TINY)),
}

for (const kind of ['flat', 'hnsw'] as VectorIndexKind[]) {
  for (const [embedderId, createEmbedder] of Object.entries(embedders)) {
    runRetrieverContract({
      name: `DenseRetriever (${kind}, ${embedderId})`,
      skip: embedderId.startsWith('onnx:') ? TINY_MISSING : undefined,
      create: async (tools) => {
        const embedder = await createEmbedder()
        return new DenseRetriever({
          embedder,
          index: await buildDenseIndex(tools, embedder, { kind }),
        })
      },
    })
  }
}

describe('DenseRetriever', () => {
  it('is named after its embedder and embeds the query as a query', async () => {
    const embedder = recordEmbedCalls(createHashingEmbeddingModel(64))
    const retriever = new DenseRetriever({
      embedder,
      index: await buildDenseIndex(CONTRACT_TOOLS, embedder, { kind: 'flat' }),
    })
    expect(retriever.name).toBe('dense:hashing:64')
    embedder.calls.length = 0
    await retriever.retrieve('weather', { k: 3 })
    expect(embedder.calls).toEqual([
      { texts: ['weather'], options: { kind: 'query', signal: undefined } },
    ])
  })

  it('applies its default threshold unless the call passes minScore', async () => {
    const embedder = createHashingEmbeddingModel(64)
    const retriever = new DenseRetriever({
      embedder,
      index: await buildDenseIndex(CONTRACT_TOOLS, embedder, { kind: 'flat' }),
      minScore: 0.99,
    })
    expect(await retriever.retrieve('weather forecast', { k: 5 })).toEqual([])
    expect(await retriever.retrieve('weather forecast', { k: 5, minScore: -1 })).toHaveLength(5)
  })

  it('refuses an index built by another embedder with INDEX_MISMATCH', async () => {
    const index = await buildDenseIndex(CONTRACT_TOOLS, createHashingEmbeddingModel(64))
    let error: unknown
    try {
      new DenseRetriever({ embedder: createHashingEmbeddingModel(128), index })
    } catch (caught) {
      error = caught
    }
    expect(isToolselError(error, 'INDEX_MISMATCH')).toBe(true)
    expect((error as Error).message).toContain('built with hashing:64 (64 dims)')
  })
})
