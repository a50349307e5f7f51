import { afterEach, describe, expect, it } from 'vitest'
import { isToolselError } from '../../src/errors.ts'
import {
  EMBEDDING_MODEL_USAGE,
  clearEmbeddingModelCache,
  createEmbeddingModel,
} from '../../src/models/create-embedding-model.ts'
import { HashingEmbeddingModel } from '../../src/models/hashing-embedding-model.ts'
import { TINY_EMBEDDER as TINY } from '../helpers/tiny-embedder.ts'

afterEach(() => clearEmbeddingModelCache())

describe('createEmbeddingModel', () => {
  it('builds a hashing model with the given or default dimensions', async () => {
    const model = await createEmbeddingModel('hashing:32')
    expect(model).toBeInstanceOf(HashingEmbeddingModel)
    expect(model.dimensions).toBe(32)
    expect((await createEmbeddingModel('hashing')).modelId).toBe('hashing:256')
  })

  it('shares one instance per id and options', async () => {
    const first = await createEmbeddingModel('hashing:32')
    expect(await createEmbeddingModel('hashing:32')).toBe(first)
    expect(await createEmbeddingModel('hashing:64')).not.toBe(first)
  })

  it('loads onnx:<dir> once for concurrent callers', async () => {
    const [a, b] = await Promise.all([
      createEmbeddingModel(`onnx:${TINY}`),
      createEmbeddingModel(`onnx:${TINY}`),
    ])
    expect(a).toBe(b)
    expect(a.modelId).toBe('onnx:tiny-embedder')
    expect(a.dimensions).toBe(32)
  })

  it('refuses an unknown backend with UNKNOWN_COMPONENT naming the available ones', async () => {
    const error = await createEmbeddingModel('word2vec:big').catch((caught: unknown) => caught)
    expect(isToolselError(error, 'UNKNOWN_COMPONENT')).toBe(true)
    expect((error as Error).message).toBe(
      `No such embedding backend: word2vec (available: ${EMBEDDING_MODEL_USAGE.join(', ')})`,
    )
    expect(EMBEDDING_MODEL_USAGE).toEqual([
      'use-lite',
      'onnx:<model directory>',
      'static[:glove-100d]',
      'hashing[:<dimensions>]',
    ])
  })

  it('reports MODEL_LOAD_FAILED for bad arguments and does not cache the failure', async () => {
    for (const id of ['hashing:abc', 'onnx:', 'onnx:/nonexistent/model']) {
      const error = await createEmbeddingModel(id).catch((caught: unknown) => caught)
      expect(isToolselError(error, 'MODEL_LOAD_FAILED'), `${id}: ${String(error)}`).toBe(true)
    }
    const retry = await createEmbeddingModel('onnx:/nonexistent/model').catch(
      (caught: unknown) => caught,
    )
    expect(isToolselError(retry, 'MODEL_LOAD_FAILED')).toBe(true)
  })
})
