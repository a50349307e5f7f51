/**
 * The shared suite every `EmbeddingModel` runs: shapes, unit length, determinism, batching,
 * abort. Each backend's test file calls `runEmbeddingModelContract`.
 * @module
 */
import { describe, expect, it } from 'vitest'
import { isToolselError } from '../../src/errors.ts'
import type { EmbeddingModel } from '../../src/models/embedding-model.ts'

export interface EmbeddingModelContractOptions {
  name: string
  /** Returns the model under test (may be shared between tests). */
  create: () => Promise<EmbeddingModel>
  /** Expected vector length, when the backend fixes it. */
  dimensions?: number
  /** When set, the suite is skipped and this reason is shown. */
  skip?: string
}

const TEXTS = [
  'send a text message',
  'Get the weather forecast for Paris',
  'convert 100 dollars to euros',
  'x',
  '',
]

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0))
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  return a.reduce((max, value, index) => Math.max(max, Math.abs(value - b[index])), 0)
}

export function runEmbeddingModelContract(options: EmbeddingModelContractOptions): void {
  describe.skipIf(options.skip !== undefined)(
    `EmbeddingModel contract: ${options.name}${options.skip ? ` (skipped: ${options.skip})` : ''}`,
    () => {
      it('describes itself', async () => {
        const model = await options.create()
        expect(model.modelId.length).toBeGreaterThan(0)
        expect(model.maxBatchSize).toBeGreaterThan(0)
        if (options.dimensions !== undefined) expect(model.dimensions).toBe(options.dimensions)
      })

      it('returns one finite vector of `dimensions` floats per text, in order', async () => {
        const model = await options.create()
        const vectors = await model.embed(TEXTS)
        expect(vectors).toHaveLength(TEXTS.length)
        for (const vector of vectors) {
          expect(vector).toBeInstanceOf(Float32Array)
          expect(vector).toHaveLength(model.dimensions)
          expect(vector.every(Number.isFinite)).toBe(true)
        }
        expect(await model.embed([])).toEqual([])
      })

      it('returns unit vectors for texts with words', async () => {
        const model = await options.create()
        const vectors = await model.embed(TEXTS.slice(0, 4))
        for (const vector of vectors) expect(norm(vector)).toBeCloseTo(1, 4)
      })

      it('is deterministic and independent of batching', async () => {
        const model = await options.create()
        const batch = await model.embed(TEXTS)
        const again = await model.embed(TEXTS)
        expect(again).toEqual(batch)
        for (const [index, text] of TEXTS.entries()) {
          const [single] = await model.embed([text])
          // Padding changes float summation order in some backends: close, not bit-equal.
          expect(maxDifference(single, batch[index]), text).toBeLessThan(1e-4)
        }
      })

      it('accepts query and document kinds; a query embeds the same call after call', async () => {
        const model = await options.create()
        const [query] = await model.embed(['weather'], { kind: 'query' })
        const [document] = await model.embed(['weather'], { kind: 'document' })
        expect(query).toHaveLength(model.dimensions)
        expect(document).toHaveLength(model.dimensions)
        // The per-request path: one query at a time, as a request embeds it.
        for (let call = 0; call < 3; call += 1) {
          expect((await model.embed(['weather'], { kind: 'query' }))[0]).toEqual(query)
        }
      })

      it('rejects with ABORTED when the signal has fired', async () => {
        const model = await options.create()
        const controller = new AbortController()
        controller.abort()
        const error = await model
          .embed(TEXTS, { signal: controller.signal })
          .catch((caught: unknown) => caught)
        expect(isToolselError(error, 'ABORTED'), String(error)).toBe(true)
      })
    },
  )
}
