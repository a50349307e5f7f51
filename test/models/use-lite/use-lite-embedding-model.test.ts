import { describe, expect, it } from 'vitest'
import { UseLiteEmbeddingModel } from '../../../src/models/use-lite/use-lite-embedding-model.ts'
import { runEmbeddingModelContract } from '../embedding-model.contract.ts'

let shared: Promise<UseLiteEmbeddingModel> | undefined
const useLite = () => (shared ??= UseLiteEmbeddingModel.load())

// The contract checks a query embeds the same call after call and alone as within a batch; its
// latency is measured by `npm run bench:perf -- --dense --dense-embedder use-lite` (query
// embedding p50/p99, bench/perf/dense.ts), not here.
runEmbeddingModelContract({ name: 'use-lite', create: useLite, dimensions: 512 })

function dot(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, index) => sum + value * b[index], 0)
}

describe('UseLiteEmbeddingModel', () => {
  it('puts a request closer to the tool that serves it than to an unrelated tool', async () => {
    const model = await useLite()
    const [query, sms, forecast] = await model.embed([
      'send a text message',
      'send_sms: Send an SMS text message to a phone number',
      'get_forecast: Get the weather forecast',
    ])
    expect(dot(query, sms)).toBeGreaterThan(dot(query, forecast))
  })

  it('keeps an empty text at the end of a batch (the sparse batch would drop it)', async () => {
    const model = await useLite()
    const vectors = await model.embed(['hello', ''])
    expect(vectors).toHaveLength(2)
  })
})
