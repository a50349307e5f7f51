import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isToolselError } from '../../../src/errors.ts'
import { createMemoryLogger } from '../../../src/log.ts'
import {
  OnnxEmbeddingModel,
  resolveSettings,
} from '../../../src/models/onnx/onnx-embedding-model.ts'
import { loadTransformers } from '../../../src/models/onnx/transformers.ts'
import { runEmbeddingModelContract } from '../embedding-model.contract.ts'
import {
  TINY_EMBEDDER as TINY,
  TINY_EMBEDDER_MISSING as MISSING,
} from '../../helpers/tiny-embedder.ts'

let shared: Promise<OnnxEmbeddingModel> | undefined
const tiny = () => (shared ??= OnnxEmbeddingModel.load(TINY, { maxBatchSize: 2 }))

runEmbeddingModelContract({
  name: 'onnx:tiny-embedder',
  create: tiny,
  dimensions: 32,
  skip: MISSING,
})

function cosine(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, index) => sum + value * b[index], 0)
}

describe.skipIf(MISSING !== undefined)('OnnxEmbeddingModel', () => {
  let scratch: string
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'toolsel-onnx-'))
  })
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true })
  })

  /** A copy of the fixture with extra files, for settings tests. */
  async function variant(name: string, files: Record<string, unknown>): Promise<string> {
    const directory = join(scratch, name)
    await cp(TINY, directory, { recursive: true })
    for (const [file, content] of Object.entries(files)) {
      await mkdir(join(directory, file, '..'), { recursive: true })
      await writeFile(join(directory, file), JSON.stringify(content))
    }
    return directory
  }

  it('loads the fixture through transformers.js on the cpu with its toolsel.json settings', async () => {
    const model = await tiny()
    expect(model.modelId).toBe('onnx:tiny-embedder')
    expect(model.device).toBe('cpu')
    expect(model.settings).toEqual({
      pooling: 'mean',
      normalize: true,
      queryPrefix: '',
      documentPrefix: '',
    })
  })

  it('puts the query or document prefix before the text', async () => {
    const prefixed = await OnnxEmbeddingModel.load(TINY, {
      queryPrefix: 'query: ',
      documentPrefix: 'passage: ',
    })
    const plain = await tiny()
    const [query] = await prefixed.embed(['find flights'], { kind: 'query' })
    const [document] = await prefixed.embed(['find flights'])
    const [expectedQuery, expectedDocument, bare] = await plain.embed([
      'query: find flights',
      'passage: find flights',
      'find flights',
    ])
    expect(cosine(query, expectedQuery)).toBeGreaterThan(0.9999)
    expect(cosine(document, expectedDocument)).toBeGreaterThan(0.9999)
    expect(cosine(query, bare)).toBeLessThan(0.9999)
  })

  it('reads pooling and prompts from sentence-transformers files, under toolsel.json and options', async () => {
    const directory = await variant('st', {
      'toolsel.json': {},
      '1_Pooling/config.json': { pooling_mode_cls_token: true, pooling_mode_mean_tokens: false },
      'config_sentence_transformers.json': { prompts: { query: 'query: ', passage: 'passage: ' } },
    })
    expect(await resolveSettings(directory)).toEqual({
      pooling: 'cls',
      normalize: true,
      queryPrefix: 'query: ',
      documentPrefix: 'passage: ',
    })
    await writeFile(join(directory, 'toolsel.json'), JSON.stringify({ queryPrefix: 'q: ' }))
    expect(await resolveSettings(directory, { pooling: 'mean' })).toMatchObject({
      pooling: 'mean',
      queryPrefix: 'q: ',
    })
  })

  it('applies CLS pooling: the tiny model has no attention, so every text gets the [CLS] vector', async () => {
    const directory = await variant('cls', { 'toolsel.json': { pooling: 'cls' } })
    const model = await OnnxEmbeddingModel.load(directory)
    const [a, b] = await model.embed(['send a message', 'weather in paris'])
    expect(cosine(a, b)).toBeGreaterThan(0.9999)
  })

  it('refuses an invalid toolsel.json with MODEL_LOAD_FAILED', async () => {
    const directory = await variant('bad', { 'toolsel.json': { pooling: 'max' } })
    const error = await OnnxEmbeddingModel.load(directory).catch((caught: unknown) => caught)
    expect(isToolselError(error, 'MODEL_LOAD_FAILED')).toBe(true)
    expect((error as Error).message).toContain('toolsel.json')
  })

  it('loads the q8 weights with dtype q8, close to fp32', async () => {
    const quantized = await OnnxEmbeddingModel.load(TINY, { dtype: 'q8' })
    const [a] = await quantized.embed(['track my order'])
    const [b] = await (await tiny()).embed(['track my order'])
    expect(cosine(a, b)).toBeGreaterThan(0.99)
    expect(a).not.toEqual(b)
  })

  it('fails with MODEL_LOAD_FAILED naming the directory when weights or files are missing', async () => {
    const noWeights = await OnnxEmbeddingModel.load(TINY, { dtype: 'fp16' }).catch(
      (caught: unknown) => caught,
    )
    expect(isToolselError(noWeights, 'MODEL_LOAD_FAILED')).toBe(true)
    expect((noWeights as Error).message).toContain(TINY)
    const noDirectory = await OnnxEmbeddingModel.load(join(scratch, 'nothing')).catch(
      (caught: unknown) => caught,
    )
    expect(isToolselError(noDirectory, 'MODEL_LOAD_FAILED')).toBe(true)
    expect((noDirectory as Error).message).toContain('config.json')
  })

  it('falls back to the cpu with a logged warning when cuda is unavailable', async () => {
    const logger = createMemoryLogger()
    const model = await OnnxEmbeddingModel.load(TINY, { device: 'cuda', logger })
    const warned = logger.lines.some(
      (line) => line.includes('WARN') && line.includes('falling back to CPU'),
    )
    // On a machine with a working CUDA provider there is nothing to fall back from.
    expect(model.device === 'cuda' || warned, logger.lines.join('\n')).toBe(true)
    if (model.device === 'cpu') expect(warned).toBe(true)
    expect((await model.embed(['hello']))[0]).toHaveLength(32)
  })

  it("reads the model directory's own files, never a file in transformers.js's cache under their path", async () => {
    // transformers.js looks in its file cache (<its package>/.cache) first, under the file's own
    // path: a config.json planted there would be read in place of the directory's checked one.
    const transformers = await loadTransformers()
    const cacheDir = transformers.env.cacheDir
    const model = join(scratch, 'cached-model')
    const cache = join(scratch, 'transformers-cache')
    await cp(TINY, model, { recursive: true })
    await mkdir(join(cache, model), { recursive: true })
    await writeFile(join(cache, model, 'config.json'), '{"model_type": "planted", not json')
    transformers.env.cacheDir = cache
    try {
      const loaded = await OnnxEmbeddingModel.load(model)
      expect(loaded.dimensions).toBe(32)
      await loaded.dispose()
    } finally {
      transformers.env.cacheDir = cacheDir
    }
  })

  it('truncates texts longer than the model window', async () => {
    const [vector] = await (await tiny()).embed(['weather '.repeat(1000)])
    expect(vector.every(Number.isFinite)).toBe(true)
  })
})
