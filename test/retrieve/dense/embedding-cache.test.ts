import { execFileSync } from 'node:child_process'
import { appendFile, chmod, mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isToolselError } from '../../../src/errors.ts'
import {
  EMBEDDING_CACHE_MAX_BYTES,
  EmbeddingCache,
} from '../../../src/retrieve/dense/embedding-cache.ts'

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

  describe('a file it does not trust is a miss with a warning, unread', () => {
    /** A cache of two 3-d vectors of `use-lite`, saved to `file`; answers the warnings list. */
    async function saved(file: string) {
      const cache = new EmbeddingCache()
      cache.set('use-lite', 'h1', Float32Array.of(1, 2, 3))
      cache.set('use-lite', 'h2', Float32Array.of(4, 5, 6))
      await cache.save(file)
    }
    const load = async (file: string, options: { modelId?: string; dimensions?: number } = {}) => {
      const warnings: string[] = []
      const cache = await EmbeddingCache.load(file, {
        ...options,
        warn: (message) => warnings.push(message),
      })
      return { size: cache.size, warnings }
    }

    it('writes the file 0644 and reads it back (the check passes on its own files)', async () => {
      const file = join(directory, 'embeddings.cache')
      await saved(file)
      expect((await stat(file)).mode & 0o777).toBe(0o644)
      expect(await load(file, { modelId: 'use-lite', dimensions: 3 })).toEqual({
        size: 2,
        warnings: [],
      })
    })

    it.skipIf(process.platform === 'win32')(
      'one group or others can write (another user could have put vectors of their own in it)',
      async () => {
        const file = join(directory, 'embeddings.cache')
        await saved(file)
        await chmod(file, 0o664)
        const loaded = await load(file)
        expect(loaded.size).toBe(0)
        expect(loaded.warnings.join('\n')).toMatch(
          /its group \(gid \d+\) can write it \(mode 664\)/,
        )
      },
    )

    it.skipIf(process.platform === 'win32')(
      'one in a directory any user can write, not sticky (they could replace the file): the rule of trusted-path.ts',
      async () => {
        const dir = join(directory, 'index')
        await mkdir(dir)
        const file = join(dir, 'embeddings.cache')
        await saved(file)
        expect((await load(file)).size).toBe(2)
        // Before round 45 only the file's own owner and mode were looked at: this one was read.
        await chmod(dir, 0o777)
        const loaded = await load(file)
        expect(loaded.size).toBe(0)
        expect(loaded.warnings.join('\n')).toContain(
          `${dir}: any user can write it (mode 777): chmod o-w ${dir}`,
        )
        // Sticky (as /tmp): others can't replace what they don't own in it.
        await chmod(dir, 0o1777)
        expect((await load(file)).size).toBe(2)
      },
    )

    it('a huge sparse file whose header looks valid, unread', async () => {
      const file = join(directory, 'embeddings.cache')
      await saved(file)
      // Sparse: no disk used, and never read (the old code read it whole: 1 GiB of memory).
      const huge = 2 ** 30 + 1
      expect(EMBEDDING_CACHE_MAX_BYTES).toBe(huge - 1)
      const handle = await open(file, 'r+')
      await handle.truncate(huge)
      await handle.close()
      const loaded = await load(file)
      expect(loaded.size).toBe(0)
      expect(loaded.warnings.join('\n')).toMatch(
        new RegExp(`it is ${huge} bytes, more than the ${huge - 1} read`),
      )
    })

    it('a file longer than its header says (something appended to a valid cache)', async () => {
      const file = join(directory, 'embeddings.cache')
      await saved(file)
      const size = (await stat(file)).size
      await appendFile(file, Buffer.alloc(1024 * 1024, 7))
      const loaded = await load(file)
      expect(loaded.size).toBe(0)
      expect(loaded.warnings.join('\n')).toMatch(
        new RegExp(`more than the ${size} its header says`),
      )
    })

    it('vectors of the embedder of another length than its own (a poisoned or stale file)', async () => {
      const file = join(directory, 'embeddings.cache')
      await saved(file)
      const loaded = await load(file, { modelId: 'use-lite', dimensions: 512 })
      expect(loaded.size).toBe(0)
      expect(loaded.warnings.join('\n')).toMatch(
        /it holds 3-dimension vectors of use-lite, whose vectors have 512/,
      )
      // Another embedder's vectors are not checked against this one's length.
      expect((await load(file, { modelId: 'hashing:8', dimensions: 8 })).size).toBe(2)
    })

    it('a header whose dimensions are absurd is INDEX_CORRUPT before any vector is read', async () => {
      const file = join(directory, 'embeddings.cache')
      const header = Buffer.from(
        JSON.stringify({ format: 1, entries: [['use-lite', 'h1', 2 ** 40]] }),
      )
      const prefix = Buffer.alloc(4)
      prefix.writeUInt32LE(header.byteLength)
      await writeFile(file, Buffer.concat([prefix, header]))
      const error = await EmbeddingCache.load(file).catch((caught: unknown) => caught)
      expect(isToolselError(error, 'INDEX_CORRUPT')).toBe(true)
      expect((error as Error).message).toMatch(/is not \[model, hash, dimensions\]/)
    })

    it.skipIf(process.platform === 'win32')(
      'a FIFO planted at the name (the old read waited for a writer forever)',
      async () => {
        const file = join(directory, 'embeddings.cache')
        execFileSync('mkfifo', [file])
        const loaded = await load(file)
        expect(loaded.size).toBe(0)
        expect(loaded.warnings.join('\n')).toMatch(/it is not a regular file/)
      },
    )
  })
})
