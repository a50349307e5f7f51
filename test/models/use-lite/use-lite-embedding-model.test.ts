import { describe, expect, it } from 'vitest'
import { UseLiteEmbeddingModel } from '../../../src/models/use-lite/use-lite-embedding-model.ts'
import { runEmbeddingModelContract } from '../embedding-model.contract.ts'

let shared: Promise<UseLiteEmbeddingModel> | undefined
const useLite = () => (shared ??= UseLiteEmbeddingModel.load())

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

  it('measures the latency of one short query (printed, not asserted)', async () => {
    const model = await useLite()
    await model.embed(['warm up'])
    const times: number[] = []
    for (let run = 0; run < 50; run++) {
      const start = performance.now()
      await model.embed(['find a cheap flight to Berlin'], { kind: 'query' })
      times.push(performance.now() - start)
    }
    times.sort((a, b) => a - b)
    console.log(
      `use-lite: one short query, median of 50: ${times[25].toFixed(2)} ms (p90 ${times[45].toFixed(2)} ms)`,
    )
    expect(times).toHaveLength(50)
  })
})
