import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isToolselError } from '../../../src/errors.ts'
import { EmbeddingCache } from '../../../src/retrieve/dense/embedding-cache.ts'

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'toolsel-cache-'))
})
afterEach(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('EmbeddingCache', () => {
  it('keys vectors by embedder id and content hash', () => {
    const cache = new EmbeddingCache()
    cache.set('use-lite', 'h1', Float32Array.of(1, 2))
    expect(cache.get('use-lite', 'h1')).toEqual(Float32Array.of(1, 2))
    expect(cache.get('hashing:8', 'h1')).toBeUndefined()
  })

  it('round-trips through a file, vectors of different lengths included', async () => {
    const cache = new EmbeddingCache()
    cache.set('use-lite', 'h1', Float32Array.of(0.25, -1, 3))
    cache.set('héllo:ü', 'h2', Float32Array.of(7))
    const file = join(directory, 'embeddings.cache')
    await cache.save(file)
    const loaded = await EmbeddingCache.load(file)
    expect(loaded.size).toBe(2)
    expect(loaded.get('use-lite', 'h1')).toEqual(Float32Array.of(0.25, -1, 3))
    expect(loaded.get('héllo:ü', 'h2')).toEqual(Float32Array.of(7))
  })

  it('starts empty when the file is missing and reports INDEX_CORRUPT when it is garbled', async () => {
    expect((await EmbeddingCache.load(join(directory, 'none'))).size).toBe(0)
    const file = join(directory, 'bad.cache')
    await writeFile(file, 'not a cache')
    const error = await EmbeddingCache.load(file).catch((caught: unknown) => caught)
    expect(isToolselError(error, 'INDEX_CORRUPT')).toBe(true)
  })

  it('retains only the listed hashes of one embedder', () => {
    const cache = new EmbeddingCache()
    cache.set('a', 'h1', Float32Array.of(1))
    cache.set('a', 'h2', Float32Array.of(2))
    cache.set('b', 'h1', Float32Array.of(3))
    cache.retain('a', new Set(['h2']))
    expect(cache.get('a', 'h1')).toBeUndefined()
    expect(cache.get('a', 'h2')).toBeDefined()
    expect(cache.get('b', 'h1')).toBeDefined()
  })
})
