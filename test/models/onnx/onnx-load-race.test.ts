/**
 * Weights replaced while an `onnx:<dir>` model loads: the fingerprint a load reports
 * (`OnnxEmbeddingModel.fingerprint`, recorded by a dense index as `modelFiles`) must be that of
 * the weights the model embeds with. A real file swap (the q8 weights copied over `model.onnx`)
 * runs between the fingerprint and transformers.js's read of the files (`onnxLoadHooks`), and a
 * copy of the old weights puts them back after the read.
 */
import { copyFile, cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryLogger } from '../../../src/log.ts'
import { modelFilesFingerprint } from '../../../src/models/model-fingerprint.ts'
import { OnnxEmbeddingModel, onnxLoadHooks } from '../../../src/models/onnx/onnx-embedding-model.ts'
import {
  TINY_EMBEDDER as TINY,
  TINY_EMBEDDER_MISSING as MISSING,
} from '../../helpers/tiny-embedder.ts'

const TEXTS = ['send an email to Ann', 'weather forecast for tomorrow', 'convert a currency']
// Enough to tell the weights apart (the model's own fingerprint lists the files its load reads).
const FILES = ['onnx/model.onnx']

describe.skipIf(MISSING !== undefined)('onnx model files replaced during a load', () => {
  let scratch: string
  let swapped: OnnxEmbeddingModel // the q8 weights as model.onnx, loaded from their own directory
  let original: OnnxEmbeddingModel // the fixture's own weights, loaded from a copy
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'toolsel-onnx-race-'))
    const dir = await copyOfTiny('reference')
    await copyFile(join(dir, 'onnx/model_quantized.onnx'), join(dir, 'onnx/model.onnx'))
    swapped = await OnnxEmbeddingModel.load(dir)
    original = await OnnxEmbeddingModel.load(await copyOfTiny('original'))
  })
  afterEach(() => {
    delete onnxLoadHooks.beforeRead
    delete onnxLoadHooks.afterRead
  })
  afterAll(async () => {
    await swapped?.dispose()
    await original?.dispose()
    await rm(scratch, { recursive: true, force: true })
  })

  async function copyOfTiny(name: string): Promise<string> {
    const dir = join(scratch, name)
    await cp(TINY, dir, { recursive: true })
    return dir
  }

  it('reports the fingerprint of the weights it embeds with, loading again after the swap', async () => {
    const dir = await copyOfTiny('swapped-once')
    const old = await modelFilesFingerprint(dir, FILES)
    let swaps = 0
    onnxLoadHooks.beforeRead = async (directory) => {
      if (directory !== dir || swaps++ > 0) return
      await copyFile(join(dir, 'onnx/model_quantized.onnx'), join(dir, 'onnx/model.onnx'))
    }
    const logger = createMemoryLogger()
    const model = await OnnxEmbeddingModel.load(dir, { logger })
    try {
      expect(await modelFilesFingerprint(dir, FILES)).not.toBe(old)
      delete onnxLoadHooks.beforeRead
      // Was: the fingerprint of the old weights, with the new weights' vectors.
      const again = await OnnxEmbeddingModel.load(dir)
      expect(model.fingerprint).toBe(again.fingerprint)
      await again.dispose()
      expect(await model.embed(TEXTS)).toEqual(await swapped.embed(TEXTS))
      expect(swaps).toBe(2) // the swap, then the second load's hook call
      expect(logger.lines.join('\n')).toContain(
        'Embedding model files changed while it loaded; loading it again',
      )
    } finally {
      await model.dispose()
    }
  })

  it('loads again when the weights were replaced and put back during the load (A, B, A)', async () => {
    const dir = await copyOfTiny('replaced-and-put-back')
    const old = await modelFilesFingerprint(dir, FILES)
    let swaps = 0
    let putBack = 0
    onnxLoadHooks.beforeRead = async (directory) => {
      if (directory !== dir || swaps++ > 0) return
      await copyFile(join(dir, 'onnx/model_quantized.onnx'), join(dir, 'onnx/model.onnx'))
    }
    onnxLoadHooks.afterRead = async (directory) => {
      if (directory !== dir || putBack++ > 0) return
      await copyFile(join(TINY, 'onnx/model.onnx'), join(dir, 'onnx/model.onnx'))
    }
    const logger = createMemoryLogger()
    const model = await OnnxEmbeddingModel.load(dir, { logger })
    try {
      // The same bytes as before the load: the fingerprints agree, the files' ctimes do not.
      expect(await modelFilesFingerprint(dir, FILES)).toBe(old)
      expect(model.fingerprint).toBe(original.fingerprint)
      // Was: the q8 weights' vectors under the fp32 weights' fingerprint.
      const vectors = await model.embed(TEXTS)
      expect(vectors).toEqual(await original.embed(TEXTS))
      expect(vectors).not.toEqual(await swapped.embed(TEXTS))
      expect([swaps, putBack]).toEqual([2, 2])
      expect(logger.lines.join('\n')).toContain(
        'Embedding model files changed while it loaded; loading it again',
      )
    } finally {
      await model.dispose()
    }
  })

  it('gives up with MODEL_LOAD_FAILED when the files change during every load', async () => {
    const dir = await copyOfTiny('always-changing')
    let turn = 0
    onnxLoadHooks.beforeRead = async (directory) => {
      if (directory !== dir) return
      // The q8 weights and the fp32 ones in turn: each load sees its files change.
      const from =
        turn++ % 2 === 0 ? join(dir, 'onnx/model_quantized.onnx') : join(TINY, 'onnx/model.onnx')
      await copyFile(from, join(dir, 'onnx/model.onnx'))
    }
    await expect(OnnxEmbeddingModel.load(dir)).rejects.toMatchObject({
      code: 'MODEL_LOAD_FAILED',
      message: expect.stringContaining('its files changed during each of 3 loads'),
    })
    expect(turn).toBe(3)
  })
})
