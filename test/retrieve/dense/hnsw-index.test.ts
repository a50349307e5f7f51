import { mkdtemp, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isToolselError } from '../../../src/errors.ts'
import { FlatIndex } from '../../../src/retrieve/dense/flat-index.ts'
import {
  DEFAULT_HNSW_PARAMS,
  HNSW_DATA_FILE,
  HnswIndex,
  hnswLoadHooks,
} from '../../../src/retrieve/dense/hnsw-index.ts'
import { randomUnitVectors } from './random-vectors.ts'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'toolsel-hnsw-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('HnswIndex', () => {
  it('finds the exact top 15 for at least 99% of 100 queries over 10k random 64-d vectors', () => {
    const vectors = randomUnitVectors(10_000, 64, 11)
    const queries = randomUnitVectors(100, 64, 12)
    const flat = new FlatIndex(64, 'random')
    flat.add(vectors)
    const hnsw = new HnswIndex(64, 'random')
    hnsw.add(vectors)
    let found = 0
    for (const query of queries) {
      const exact = new Set(flat.search(query, 15).map((hit) => hit.position))
      found += hnsw.search(query, 15).filter((hit) => exact.has(hit.position)).length
    }
    const recall = found / (15 * queries.length)
    // (No timing here: tests assert behaviour; this one printed build and search times.)
    expect(recall, `recall with ${JSON.stringify(DEFAULT_HNSW_PARAMS)}`).toBeGreaterThanOrEqual(
      0.99,
    )
    // Building 10k vectors is seconds on a quiet core; 33.7 s in a full run at load ~18 (nice 10)
    // passed the default 30 s: synchronous work, so a bound is only a guard against a hang.
  }, 180_000)

  it('returns cosine scores, best first, at most size hits, and grows past its capacity', () => {
    const index = new HnswIndex(2, 'test', {}, 1)
    index.add([Float32Array.of(10, 0), Float32Array.of(0, 3), Float32Array.of(1, 1)])
    const hits = index.search(Float32Array.of(2, 0.1), 10)
    expect(hits.map((hit) => hit.position)).toEqual([0, 2, 1])
    expect(hits[0].score).toBeCloseTo(2 / Math.hypot(2, 0.1), 5)
    expect(index.size).toBe(3)
    expect(index.search(Float32Array.of(1, 0), 0)).toEqual([])
  })

  it('saves and loads the same graph with its parameters, and lets efSearch change at load', async () => {
    const index = new HnswIndex(16, 'hashing:16', { m: 8, efConstruction: 50, efSearch: 20 })
    index.add(randomUnitVectors(300, 16, 21))
    await index.save(directory)
    const expected = { name: 'demo', embedderId: 'hashing:16', dimensions: 16 }
    const loaded = await HnswIndex.load(directory, expected)
    expect(loaded.params).toEqual({ m: 8, efConstruction: 50, efSearch: 20, randomSeed: 100 })
    const [query] = randomUnitVectors(1, 16, 22)
    expect(loaded.search(query, 10)).toEqual(index.search(query, 10))
    expect((await HnswIndex.load(directory, expected, { efSearch: 64 })).params.efSearch).toBe(64)
  })

  it('refuses a load with other dimensions with INDEX_MISMATCH', async () => {
    const index = new HnswIndex(16, 'hashing:16')
    index.add(randomUnitVectors(5, 16))
    await index.save(directory)
    const error = await HnswIndex.load(directory, {
      name: 'demo',
      embedderId: 'hashing:16',
      dimensions: 32,
    }).catch((caught: unknown) => caught)
    expect(isToolselError(error, 'INDEX_MISMATCH')).toBe(true)
    expect((error as Error).message).toContain('was built with hashing:16 (16 dims)')
  })
  it('reads the graph file it checked, not one put at its name after the check', async () => {
    const expected = { name: 'demo', embedderId: 'hashing:16', dimensions: 16 }
    const index = new HnswIndex(16, 'hashing:16', { m: 8, efConstruction: 50, efSearch: 20 })
    index.add(randomUnitVectors(30, 16, 23))
    await index.save(directory)
    // Another index's graph (60 vectors), put at the name between the check and the read.
    const other = await mkdtemp(join(tmpdir(), 'toolsel-hnsw-other-'))
    const larger = new HnswIndex(16, 'hashing:16', { m: 8, efConstruction: 50, efSearch: 20 })
    larger.add(randomUnitVectors(60, 16, 24))
    await larger.save(other)
    hnswLoadHooks.beforeRead = (path) =>
      rename(join(other, HNSW_DATA_FILE), path).then(() => undefined)
    try {
      // Before round 47: INDEX_CORRUPT, "holds 60 vectors; its header promises 30".
      const loaded = await HnswIndex.load(directory, expected)
      expect(loaded.size).toBe(30)
      const [query] = randomUnitVectors(1, 16, 25)
      expect(loaded.search(query, 5)).toEqual(index.search(query, 5))
    } finally {
      hnswLoadHooks.beforeRead = undefined
      await rm(other, { recursive: true, force: true })
    }
  })
})
