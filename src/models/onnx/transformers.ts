/**
 * The only module that imports `@huggingface/transformers` (and through it ONNX Runtime).
 * Everything else sees our `EmbeddingModel` / `LanguageModel` interfaces. The import is lazy so
 * that commands and tests that never touch a model don't pay for loading the native runtime.
 * @module
 */

type TransformersModule = typeof import('@huggingface/transformers')

let loading: Promise<TransformersModule> | undefined

/** Loads transformers.js once, configured to read local directories only (no hub downloads). */
export function loadTransformers(): Promise<TransformersModule> {
  loading ??= import('@huggingface/transformers').then((transformers) => {
    transformers.env.allowRemoteModels = false
    transformers.env.allowLocalModels = true
    // Model ids we pass are absolute directories; an empty prefix keeps them as given.
    transformers.env.localModelPath = ''
    return transformers
  })
  return loading
}

/** Where a model runs. `cuda` falls back to `cpu` (with a warning) when the CUDA provider can't load. */
export type Device = 'cpu' | 'cuda'

export interface DeviceFallbackResult<T> {
  value: T
  /** The device the value was actually created on. */
  device: Device
  /** Set when `cuda` was requested but `cpu` was used, with the reason. */
  fallbackReason?: string
}

/**
 * Runs `create` on the requested device; when that is `cuda` and it fails (no GPU, no CUDA
 * libraries, a CPU-only ONNX Runtime build), warns through `warn` and retries on `cpu`.
 */
export async function createOnDevice<T>(
  requested: Device,
  create: (device: Device) => Promise<T>,
  warn: (message: string) => void,
): Promise<DeviceFallbackResult<T>> {
  if (requested === 'cpu') return { value: await create('cpu'), device: 'cpu' }
  try {
    return { value: await create('cuda'), device: 'cuda' }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    warn(`CUDA execution provider unavailable (${reason.split('\n')[0]}); falling back to CPU.`)
    return { value: await create('cpu'), device: 'cpu', fallbackReason: reason }
  }
}

type OnnxRuntimeModule = typeof import('onnxruntime-node')

let loadingRuntime: Promise<OnnxRuntimeModule> | undefined

/**
 * ONNX Runtime for Node, for sessions transformers.js does not create (small helper graphs,
 * inspecting a model file). It is the copy transformers.js itself runs on: transformers.js
 * pins onnxruntime-node 1.30.0 and so does our package.json.
 */
export function loadOnnxRuntime(): Promise<OnnxRuntimeModule> {
  loadingRuntime ??= import('onnxruntime-node')
  return loadingRuntime
}
