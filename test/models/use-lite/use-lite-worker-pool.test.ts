import { afterAll, describe, expect, it } from 'vitest'
import { UseLiteEmbeddingModel } from '../../../src/models/use-lite/use-lite-embedding-model.ts'

const TEXTS = Array.from(
  { length: 37 },
  (_, index) => `tool number ${index}: ${'does something useful '.repeat(1 + (index % 5))}`,
)
TEXTS[20] = ''

const pooled = UseLiteEmbeddingModel.load({ threads: 2 })
const single = UseLiteEmbeddingModel.load()

afterAll(async () => {
  await (await pooled).close()
})

describe('use-lite on worker threads', () => {
  it('embeds documents on the workers exactly as on the main thread, in input order', async () => {
    const model = await pooled
    expect(model.threads).toBe(2)
    expect(model.maxBatchSize).toBe(32)
    const fromWorkers = await model.embed(TEXTS, { kind: 'document' })
    const fromMain = await (await single).embed(TEXTS, { kind: 'document' })
    expect(fromWorkers).toHaveLength(TEXTS.length)
    expect(fromWorkers).toEqual(fromMain)
    for (const vector of fromWorkers) {
      const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0))
      expect(norm).toBeCloseTo(1, 5)
    }
  })

  it('stops between batches when the signal fires', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(
      (await pooled).embed(TEXTS, { kind: 'document', signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('starts new workers after close', async () => {
    const model = await pooled
    await model.close()
    expect(await model.embed(TEXTS.slice(0, 20))).toHaveLength(20)
  })

  it('refuses a negative thread count', async () => {
    await expect(UseLiteEmbeddingModel.load({ threads: -1 })).rejects.toThrow(
      'use-lite threads must be a non-negative integer, got -1.',
    )
  })
})
