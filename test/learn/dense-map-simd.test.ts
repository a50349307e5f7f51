import { describe, expect, it } from 'vitest'
import { applyMap, MappedEncoder } from '../../src/learn/dense-map.ts'
import { simdMapProduct } from '../../src/learn/dense-map-simd.ts'
import { loadDefaultModel } from '../../src/learn/learned-model.ts'
import { normalizeL2 } from '../../src/models/embedding-model.ts'

/** Deterministic values in [-0.5, 0.5) (xorshift32). */
function stream(seed: number): () => number {
  let state = seed
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 2 ** 32 - 0.5
  }
}

const bits = (vector: Float32Array) => Array.from(new Uint32Array(vector.buffer))

describe('simdMapProduct', () => {
  it('gives the JavaScript product to the bit (the shipped map and other sizes)', () => {
    const { denseMap } = loadDefaultModel()
    const random = stream(7)
    const cases = [
      { size: denseMap!.size, matrix: Float32Array.from(denseMap!.query) },
      { size: denseMap!.size, matrix: Float32Array.from(denseMap!.tool) },
      // 22 rows: one pass of twenty, then a pair.
      ...[2, 22, 64].map((size) => ({
        size,
        matrix: Float32Array.from({ length: size * size }, random),
      })),
    ]
    for (const { size, matrix } of cases) {
      const product = simdMapProduct(matrix, size)
      expect(product).toBeDefined()
      for (let trial = 0; trial < 50; trial++) {
        const input = normalizeL2(Float32Array.from({ length: size }, random))
        if (trial === 0) input.fill(0)
        const out = new Float32Array(size)
        product!(input, out)
        expect(bits(normalizeL2(out))).toEqual(bits(applyMap(matrix, size, input)))
      }
    }
  })

  it('leaves an odd size to the JavaScript loop', () => {
    expect(simdMapProduct(new Float32Array(9), 3)).toBeUndefined()
    const encoder = new MappedEncoder(
      { modelId: 'fixed', embedText: () => Float32Array.of(1, 2, 3) },
      Float32Array.of(1, 0, 0, 0, 2, 0, 0, 0, 3),
      3,
      'query',
    )
    expect(Array.from(encoder.embedText('x'))).toEqual(
      Array.from(applyMap(Float32Array.of(1, 0, 0, 0, 2, 0, 0, 0, 3), 3, Float32Array.of(1, 2, 3))),
    )
  })
})
