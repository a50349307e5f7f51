/**
 * The only module that imports `@huggingface/transformers` (and through it ONNX Runtime).
 * Everything else sees our `EmbeddingModel` / `LanguageModel` interfaces. The import is lazy so
 * that commands and tests that never touch a model don't pay for loading the native runtime.
 * @module
 */

import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { errorFirstLine, errorMessage } from '../../errors.ts'

type TransformersModule = typeof import('@huggingface/transformers')

let loading: Promise<TransformersModule> | undefined

/** Loads transformers.js once, configured to read local directories only (no hub downloads). */
export function loadTransformers(): Promise<TransformersModule> {
  loading ??= import('@huggingface/transformers').then((transformers) => {
    transformers.env.allowRemoteModels = false
    transformers.env.allowLocalModels = true
    // Model ids we pass are absolute directories; an empty prefix keeps them as given.
    transformers.env.localModelPath = ''
    // Its file cache (<its package>/.cache by default) is looked in before the model directory,
    // under the file's own path: a file there would be read in place of the one checked
    // (`assertTrustedPath`, `checkModelTextFiles`). Nothing is downloaded, so nothing is cached.
    transformers.env.useFSCache = false
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

/** ONNX Runtime's CUDA provider libraries, per platform (none is built for macOS). */
const CUDA_PROVIDER_FILES: Partial<Record<NodeJS.Platform, readonly string[]>> = {
  linux: ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so'],
  win32: ['onnxruntime_providers_shared.dll', 'onnxruntime_providers_cuda.dll'],
}

/**
 * Why this onnxruntime-node install cannot run CUDA at all, or undefined when its CUDA provider
 * libraries are there. They are downloaded by onnxruntime-node's install script (linux x64) and
 * are absent after an install without network or with `--onnxruntime-node-install-cuda=skip`.
 * Asking ONNX Runtime for CUDA then fails with "Failed to load shared library" after it prints
 * its own red `[E:onnxruntime…] Failed to load library libonnxruntime_providers_shared.so` line
 * on stderr (its process-wide logger, which a session's logSeverityLevel does not reach); the
 * files' absence says the same, and asks nothing of it. `bindingDir`: for tests.
 */
export function missingCudaProvider(
  bindingDir = join(
    dirname(createRequire(import.meta.url).resolve('onnxruntime-node')),
    '..',
    'bin',
    'napi-v6',
    process.platform,
    process.arch,
  ),
): string | undefined {
  const files = CUDA_PROVIDER_FILES[process.platform]
  if (files === undefined) return `onnxruntime-node has no CUDA provider on ${process.platform}`
  const missing = files.filter((file) => !existsSync(join(bindingDir, file)))
  return missing.length === 0
    ? undefined
    : `this onnxruntime-node install has no CUDA provider (${missing.join(', ')} missing in ${bindingDir}; onnxruntime-node's install script downloads them on linux x64)`
}

/**
 * Runs `create` on the requested device; when that is `cuda` and it fails (no GPU, no CUDA
 * libraries, a CPU-only ONNX Runtime build), warns through `warn` and retries on `cpu`. Without
 * the CUDA provider's libraries (`cudaMissing`, from `missingCudaProvider`) it does not try cuda.
 * When they are there and a session still fails, ONNX Runtime's own stderr line stays: it names
 * the library that did not load (libcudnn, libcublas…), which its exception does not.
 */
export async function createOnDevice<T>(
  requested: Device,
  create: (device: Device) => Promise<T>,
  warn: (message: string) => void,
  cudaMissing: () => string | undefined = missingCudaProvider,
): Promise<DeviceFallbackResult<T>> {
  if (requested === 'cpu') return { value: await create('cpu'), device: 'cpu' }
  const missing = cudaMissing()
  if (missing !== undefined) {
    warn(`CUDA execution provider unavailable (${missing}); falling back to CPU.`)
    return { value: await create('cpu'), device: 'cpu', fallbackReason: missing }
  }
  try {
    return { value: await create('cuda'), device: 'cuda' }
  } catch (error) {
    const reason = errorMessage(error)
    warn(`CUDA execution provider unavailable (${errorFirstLine(error)}); falling back to CPU.`)
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
