/**
 * Builds embedding models from config ids of the form `backend` or `backend:argument`, through a
 * plain lookup table, and shares one instance per id and options.
 * @module
 */
import { lookupBackend, parseComponentId, unknownBackend } from '../component-id.ts'
import { errorMessage, ToolselError } from '../errors.ts'
import type { EmbeddingModel } from './embedding-model.ts'
import { DEFAULT_HASHING_DIMENSIONS, HashingEmbeddingModel } from './hashing-embedding-model.ts'
import type { OnnxEmbeddingOptions } from './onnx/onnx-embedding-model.ts'
import type { UseLiteOptions } from './use-lite/use-lite-embedding-model.ts'

/** Options for every backend; each backend reads the ones it knows. */
export type EmbeddingModelOptions = OnnxEmbeddingOptions & UseLiteOptions

type Factory = (argument: string, options: EmbeddingModelOptions) => Promise<EmbeddingModel>

/**
 * The backends. Heavy ones are imported on first use so that a process that only uses BM25
 * never loads ONNX Runtime or TensorFlow.js.
 */
const EMBEDDING_BACKENDS: Readonly<Record<string, { usage: string; create: Factory }>> =
  Object.freeze({
    'use-lite': {
      usage: 'use-lite',
      create: async (_argument, options) => {
        const { UseLiteEmbeddingModel } = await import('./use-lite/use-lite-embedding-model.ts')
        return UseLiteEmbeddingModel.load({ threads: options.threads })
      },
    },
    onnx: {
      usage: 'onnx:<model directory>',
      create: async (directory, options) => {
        if (directory === '')
          throw new Error('onnx needs a model directory: onnx:<model directory>')
        const { OnnxEmbeddingModel } = await import('./onnx/onnx-embedding-model.ts')
        return OnnxEmbeddingModel.load(directory, options)
      },
    },
    static: {
      usage: 'static[:glove-100d]',
      create: async (name, options) => {
        const { StaticEmbeddingModel } = await import('./static/static-embedding-model.ts')
        return StaticEmbeddingModel.load(name === '' ? undefined : name, (message) =>
          options.logger?.info(message),
        )
      },
    },
    hashing: {
      usage: 'hashing[:<dimensions>]',
      create: async (dimensions) =>
        new HashingEmbeddingModel(
          dimensions === '' ? DEFAULT_HASHING_DIMENSIONS : Number(dimensions),
        ),
    },
  })

/** Ids accepted by `createEmbeddingModel`, for help texts and error messages. */
export const EMBEDDING_MODEL_USAGE = Object.values(EMBEDDING_BACKENDS).map(
  (backend) => backend.usage,
)

const instances = new Map<string, Promise<EmbeddingModel>>()

/**
 * Returns the embedding model for `id` (`use-lite`, `onnx:<dir>`, `static:glove-100d`,
 * `hashing:<dims>`). Calls with the
 * same id and options share one instance, so a model shared by several indexes loads once.
 * Throws UNKNOWN_COMPONENT for an unknown backend and MODEL_LOAD_FAILED when loading fails.
 */
export function createEmbeddingModel(
  id: string,
  options: EmbeddingModelOptions = {},
): Promise<EmbeddingModel> {
  const { backend: backendName, argument } = parseComponentId(id)
  const backend = lookupBackend(EMBEDDING_BACKENDS, backendName)
  if (!backend) {
    return Promise.reject(unknownBackend('embedding', backendName, id, EMBEDDING_MODEL_USAGE))
  }
  const key = cacheKey(id, options)
  let instance = instances.get(key)
  if (!instance) {
    instance = backend.create(argument, options).catch((error: unknown) => {
      // A failed load must not stick: the next call (after the user fixes the files) retries.
      instances.delete(key)
      if (error instanceof ToolselError) throw error
      throw new ToolselError(
        'MODEL_LOAD_FAILED',
        `Embedding model "${id}" could not be created: ${errorMessage(error)}`,
        { cause: error, details: { id } },
      )
    })
    instances.set(key, instance)
  }
  return instance
}

/** Forgets every shared instance (tests; a reload after the model files changed). */
export function clearEmbeddingModelCache(): void {
  instances.clear()
}

function cacheKey(id: string, options: EmbeddingModelOptions): string {
  // The logger only changes where messages go, not the vectors, so it is not part of the key.
  const { logger: _logger, ...settings } = options
  const sorted = Object.keys(settings)
    .sort()
    .map((key) => [key, settings[key as keyof typeof settings]])
  return `${id}\u0000${JSON.stringify(sorted)}`
}
