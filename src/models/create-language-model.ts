/**
 * Builds language models from config ids of the form `backend:argument` through a plain lookup
 * table: `onnx:<model directory>` or `openai:<served model name>`.
 * @module
 */
import { lookupBackend, parseComponentId, unknownBackend } from '../component-id.ts'
import { ToolselError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { LanguageModel } from './language-model.ts'
import type { OnnxLanguageModelOptions } from './onnx/onnx-language-model.ts'
import type { OpenAiLanguageModelOptions } from './openai/openai-language-model.ts'

export interface LanguageModelOptions {
  /** Settings of `onnx:` models (dtype, device, scoreBatchSize). */
  onnx?: Omit<OnnxLanguageModelOptions, 'logger'>
  /** Settings of `openai:` models; `baseUrl` is required for them. */
  openai?: Partial<Omit<OpenAiLanguageModelOptions, 'logger'>>
  logger?: Logger
}

type Factory = (argument: string, options: LanguageModelOptions) => Promise<LanguageModel>

/** The backends. ONNX Runtime is imported on first use, so `openai:` never loads it. */
const LANGUAGE_MODEL_BACKENDS: Readonly<Record<string, { usage: string; create: Factory }>> =
  Object.freeze({
    onnx: {
      usage: 'onnx:<model directory>',
      create: async (directory, options) => {
        const { OnnxLanguageModel } = await import('./onnx/onnx-language-model.ts')
        return OnnxLanguageModel.load(directory, { ...options.onnx, logger: options.logger })
      },
    },
    openai: {
      usage: 'openai:<model name>',
      create: async (model, options) => {
        const baseUrl = options.openai?.baseUrl
        if (!baseUrl) {
          throw new ToolselError(
            'INVALID_CONFIG',
            `openai:${model} needs the server's base URL. Set models.openai.baseUrl or TOOLSEL_OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for vLLM).`,
            { details: { model } },
          )
        }
        const { OpenAiLanguageModel } = await import('./openai/openai-language-model.ts')
        return new OpenAiLanguageModel(model, {
          ...options.openai,
          baseUrl,
          logger: options.logger,
        })
      },
    },
  })

/** Ids accepted by `createLanguageModel`, for help texts and error messages. */
export const LANGUAGE_MODEL_USAGE = Object.values(LANGUAGE_MODEL_BACKENDS).map(
  (backend) => backend.usage,
)

/**
 * The language model for `id`. `onnx:` models are shared per resolved directory, dtype and
 * device, so a planner and a selector naming the same directory load it once. Throws
 * UNKNOWN_COMPONENT for an unknown backend, INVALID_CONFIG for a missing argument or setting,
 * and MODEL_LOAD_FAILED when loading fails.
 */
export async function createLanguageModel(
  id: string,
  options: LanguageModelOptions = {},
): Promise<LanguageModel> {
  const { backend: backendName, argument } = parseComponentId(id)
  const backend = lookupBackend(LANGUAGE_MODEL_BACKENDS, backendName)
  if (!backend) throw unknownBackend('language-model', backendName, id, LANGUAGE_MODEL_USAGE)
  if (argument === '') {
    throw new ToolselError(
      'INVALID_CONFIG',
      `Language model "${id}" names no model. Use ${backend.usage}.`,
      { details: { id } },
    )
  }
  return backend.create(argument, options)
}
