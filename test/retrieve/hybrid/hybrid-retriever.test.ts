import { describe, expect, it } from 'vitest'
import { defaultConfig } from '../../../src/config/schema.ts'
import { isToolselError } from '../../../src/errors.ts'
import type { Tool } from '../../../src/library/tool.ts'
import { OnnxEmbeddingModel } from '../../../src/models/onnx/onnx-embedding-model.ts'
import { Bm25Retriever } from '../../../src/retrieve/bm25/bm25-retriever.ts'
import { buildDenseIndex } from '../../../src/retrieve/dense/build-dense-index.ts'
import { DenseRetriever } from '../../../src/retrieve/dense/dense-retriever.ts'
import { HybridRetriever } from '../../../src/retrieve/hybrid/hybrid-retriever.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../../../src/contracts.ts'
import { createHashingEmbeddingModel } from '../../helpers/hashing-embedding-model.ts'
import { runRetrieverContract } from '../retriever.contract.ts'
import {
  TINY_EMBEDDER as TINY,
  TINY_EMBEDDER_MISSING as TINY_MISSING,
} from '../../helpers/tiny-embedder.ts'

async function hashingDense(tools: Tool[]): Promise<DenseRetriever> {
  const embedder = createHashingEmbeddingModel(256)
  return new DenseRetriever({
    embedder,
    index: await buildDenseIndex(tools, embedder, { kind: 'flat' }),
  })
}

function bm25(tools: Tool[]): Bm25Retriever {
  const { k1, b, fieldWeights } = defaultConfig().retrieve.bm25
  return Bm25Retriever.build(tools, { k1, b, fieldWeights: { ...fieldWeights } })
}

for (const fusion of ['rrf', 'weighted'] as const) {
  runRetrieverContract({
    name: `HybridRetriever (${fusion}, bm25 + dense:hashing:256)`,
    create: async (tools) =>
      new HybridRetriever({
        inputs: [{ retriever: bm25(tools) }, { retriever: await hashingDense(tools) }],
        fusion,
      }),
  })
}

let tiny: Promise<OnnxEmbeddingModel> | undefined
runRetrieverContract({
  name: 'HybridRetriever (rrf, dense:hashing:256 + dense:onnx:tiny-embedder)',
  skip: TINY_MISSING,
  create: async (tools) => {
    const embedder = await (tiny ??= OnnxEmbeddingModel.load(TINY))
    const dense = new DenseRetriever({ embedder, index: await buildDenseIndex(tools, embedder) })
    return new HybridRetriever({
      inputs: [{ retriever: await hashingDense(tools) }, { retriever: dense }],
    })
  },
})

/** A real Retriever that returns fixed candidates and records the options it was called with. */
class FixedRetriever implements Retriever {
  readonly calls: RetrieveOptions[] = []
  constructor(
    readonly name: string,
    readonly candidates: Candidate[],
  ) {}
  async retrieve(_query: string, options: RetrieveOptions): Promise<Candidate[]> {
    this.calls.push(options)
    const minScore = options.minScore ?? -Infinity
    return this.candidates.filter((entry) => entry.score >= minScore).slice(0, options.k)
  }
}

describe('HybridRetriever', () => {
  const first = () =>
    new FixedRetriever('bm25', [
      { id: 'a', score: 9 },
      { id: 'b', score: 5 },
      { id: 'c', score: 1 },
    ])
  const second = () =>
    new FixedRetriever('dense:use-lite', [
      { id: 'c', score: 0.9 },
      { id: 'b', score: 0.8 },
    ])

  it('is named after its inputs', () => {
    const hybrid = new HybridRetriever({
      inputs: [{ retriever: first() }, { retriever: second() }],
    })
    expect(hybrid.name).toBe('hybrid(bm25+dense:use-lite)')
    expect(hybrid.fusion).toBe('rrf')
  })

  it('asks each input for max(k, candidatesPerInput) with its own threshold and the signal', async () => {
    const [a, b] = [first(), second()]
    const signal = new AbortController().signal
    const hybrid = new HybridRetriever({
      inputs: [{ retriever: a, minScore: 3 }, { retriever: b }],
      candidatesPerInput: 20,
    })
    await hybrid.retrieve('q', { k: 2, signal })
    expect(a.calls).toEqual([{ k: 20, minScore: 3, signal }])
    expect(b.calls).toEqual([{ k: 20, minScore: undefined, signal }])
    await hybrid.retrieve('q', { k: 30 })
    expect(a.calls[1].k).toBe(30)
  })

  it('fuses with the chosen method and weights, then keeps k above the fused minScore', async () => {
    const weighted = new HybridRetriever({
      inputs: [
        { retriever: first(), weight: 0 },
        { retriever: second(), weight: 1 },
      ],
      fusion: 'weighted',
    })
    expect(await weighted.retrieve('q', { k: 2 })).toEqual([
      { id: 'c', score: 1 },
      { id: 'a', score: 0 },
    ])
    const rrf = new HybridRetriever({ inputs: [{ retriever: first() }, { retriever: second() }] })
    const fused = await rrf.retrieve('q', { k: 3 })
    // c: 1/63 + 1/61 edges out b: 2/62; a: 1/61.
    expect(fused.map((entry) => entry.id)).toEqual(['c', 'b', 'a'])
    expect(await rrf.retrieve('q', { k: 3, minScore: 2 / 63 })).toHaveLength(2)
  })

  it('needs at least two inputs', () => {
    let error: unknown
    try {
      new HybridRetriever({ inputs: [{ retriever: first() }] })
    } catch (caught) {
      error = caught
    }
    expect(isToolselError(error, 'INVALID_CONFIG')).toBe(true)
  })
})
