import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isToolselError } from '../../../src/errors.ts'
import { FLAT_DATA_FILE, FlatIndex } from '../../../src/retrieve/dense/flat-index.ts'
import { randomUnitVectors } from './random-vectors.ts'

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'toolsel-flat-'))
})
afterEach(async () => {
  await rm(directory, { recursive: true, force: true })
})

const expectation = { name: 'demo', embedderId: 'hashing:8', dimensions: 8 }

describe('FlatIndex', () => {
  it('returns exact cosine neighbours, best first, for unnormalised input', () => {
    const index = new FlatIndex(2, 'test', 1)
    index.add([Float32Array.of(10, 0), Float32Array.of(0, 3), Float32Array.of(1, 1)])
    const hits = index.search(Float32Array.of(2, 0.1), 3)
    expect(hits.map((hit) => hit.position)).toEqual([0, 2, 1])
    expect(hits[0].score).toBeCloseTo(2 / Math.hypot(2, 0.1), 6)
    expect(index.size).toBe(3)
  })

  it('agrees with a brute-force sort on random vectors and returns at most size hits', () => {
    const vectors = randomUnitVectors(500, 16, 3)
    const index = new FlatIndex(16, 'test')
    index.add(vectors)
    const [query] = randomUnitVectors(1, 16, 99)
    const expected = vectors
      .map((vector, position) => ({
        position,
        score: vector.reduce((sum, value, dimension) => sum + value * query[dimension], 0),
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10)
    const hits = index.search(query, 10)
    expect(hits.map((hit) => hit.position)).toEqual(expected.map((hit) => hit.position))
    expect(index.search(query, 1000)).toHaveLength(500)
    expect(index.search(query, 0)).toEqual([])
  })

  it('refuses vectors of the wrong length with INVALID_INPUT', () => {
    const index = new FlatIndex(4, 'test')
    expect(() => index.add([new Float32Array(3)])).toThrow(/3 dimensions/)
    expect(() => index.search(new Float32Array(5), 1)).toThrow(/5 dimensions/)
  })

  it('saves and loads the same vectors', async () => {
    const index = new FlatIndex(8, 'hashing:8', 2)
    index.add(randomUnitVectors(50, 8, 5))
    await index.save(directory)
    const loaded = await FlatIndex.load(directory, expectation)
    const [query] = randomUnitVectors(1, 8, 6)
    expect(loaded.size).toBe(50)
    expect(loaded.search(query, 5)).toEqual(index.search(query, 5))
  })

  it('refuses an index built with another embedder, naming both and the fix', async () => {
    const index = new FlatIndex(8, 'hashing:8')
    index.add(randomUnitVectors(3, 8))
    await index.save(directory)
    const error = await FlatIndex.load(directory, {
      name: 'demo',
      embedderId: 'use-lite',
      dimensions: 512,
    }).catch((caught: unknown) => caught)
    expect(isToolselError(error, 'INDEX_MISMATCH')).toBe(true)
    expect((error as Error).message).toBe(
      'Index "demo" was built with hashing:8 (8 dims); config asks for use-lite (512). Rebuild it with: toolsel index <file> --name demo --retriever dense --embedder use-lite, or change retrieve.dense.embedder.',
    )
  })

  it('reports INDEX_CORRUPT for a truncated data file or a missing header', async () => {
    const index = new FlatIndex(8, 'hashing:8')
    index.add(randomUnitVectors(3, 8))
    await index.save(directory)
    await writeFile(join(directory, FLAT_DATA_FILE), new Uint8Array(10))
    const truncated = await FlatIndex.load(directory, expectation).catch(
      (caught: unknown) => caught,
    )
    expect(isToolselError(truncated, 'INDEX_CORRUPT')).toBe(true)
    const missing = await FlatIndex.load(join(directory, 'none'), expectation).catch(
      (caught: unknown) => caught,
    )
    expect(isToolselError(missing, 'INDEX_CORRUPT')).toBe(true)
  })
})
