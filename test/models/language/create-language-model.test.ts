import { describe, expect, it } from 'vitest'
import {
  LANGUAGE_MODEL_USAGE,
  createLanguageModel,
} from '../../../src/models/create-language-model.ts'
import { OpenAiLanguageModel } from '../../../src/models/openai/openai-language-model.ts'
import { TINY_MODELS_MISSING, tinyModel } from './tiny-models.ts'

describe('createLanguageModel', () => {
  it('rejects an unknown backend with UNKNOWN_COMPONENT listing the available ones', async () => {
    await expect(createLanguageModel('llama:7b')).rejects.toMatchObject({
      code: 'UNKNOWN_COMPONENT',
      // Was "(available: onnx, openai)": the backends' names, where the embedding backends'
      // message gave their usage.
      message:
        'No such language-model backend: llama (available: onnx:<model directory>, openai:<model name>)',
    })
  })

  it('rejects an id without a model with INVALID_CONFIG and the usage', async () => {
    await expect(createLanguageModel('onnx')).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: 'Language model "onnx" names no model. Use onnx:<model directory>.',
    })
    expect(LANGUAGE_MODEL_USAGE).toEqual(['onnx:<model directory>', 'openai:<model name>'])
  })

  it('builds openai models and asks for the base URL when it is missing', async () => {
    await expect(createLanguageModel('openai:qwen3-8b')).rejects.toThrow(/TOOLSEL_OPENAI_BASE_URL/)
    const model = await createLanguageModel('openai:qwen3-8b', {
      openai: { baseUrl: 'http://localhost:8000/v1' },
    })
    expect(model).toBeInstanceOf(OpenAiLanguageModel)
    expect(model.modelId).toBe('openai:qwen3-8b')
  })

  it.skipIf(TINY_MODELS_MISSING)(
    'shares one onnx model between ids naming the same directory',
    async () => {
      const directory = tinyModel('tiny-qwen3-selector')
      const planner = await createLanguageModel(`onnx:${directory}`)
      const selector = await createLanguageModel(`onnx:${directory}/`)
      expect(selector).toBe(planner)
      expect(planner.modelId).toBe('onnx:tiny-qwen3-selector')
    },
  )
})
