import { describe, expect, it } from 'vitest'
import { HashingEmbeddingModel } from '../../src/models/hashing-embedding-model.ts'
import { runEmbeddingModelContract } from './embedding-model.contract.ts'

runEmbeddingModelContract({
  name: 'hashing:64',
  create: async () => new HashingEmbeddingModel(64),
  dimensions: 64,
})

describe('HashingEmbeddingModel', () => {
  it('names itself after its dimensions', () => {
    expect(new HashingEmbeddingModel(128).modelId).toBe('hashing:128')
    expect(new HashingEmbeddingModel().dimensions).toBe(256)
  })

  it('gives texts that share words a higher cosine than unrelated texts', async () => {
    const model = new HashingEmbeddingModel(512)
    const [query, related, unrelated] = await model.embed([
      'weather forecast for Paris',
      'get the weather forecast',
      'send an email to a friend',
    ])
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i], 0)
    expect(dot(query, related)).toBeGreaterThan(dot(query, unrelated))
  })

  it('ignores case and punctuation, and embeds a text without words as the zero vector', async () => {
    const model = new HashingEmbeddingModel(64)
    const [a, b, empty] = await model.embed(['Send_SMS now!', 'send sms NOW', '  ?! '])
    expect(a).toEqual(b)
    expect(empty.every((value) => value === 0)).toBe(true)
  })

  it('rejects dimensions outside 8-65536', () => {
    expect(() => new HashingEmbeddingModel(4)).toThrow(RangeError)
    expect(() => new HashingEmbeddingModel(1.5)).toThrow(RangeError)
  })
})
