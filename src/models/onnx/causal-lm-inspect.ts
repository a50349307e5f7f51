/**
 * What ONNX Runtime says about a model file (input and output names, types and shapes) and which
 * execution providers it can really create here. Used by `toolsel models check`.
 * @module
 */
import { errorFirstLine } from '../../errors.ts'
import { loadOnnxRuntime, missingCudaProvider } from './transformers.ts'

export interface TensorInfo {
  name: string
  /** ONNX Runtime's element type name: `int64`, `float32`, `float16`, … */
  type: string
  /** Fixed sizes as numbers, symbolic ones by name (`batch_size`). */
  shape: Array<number | string>
}

export interface OnnxModelInfo {
  inputs: TensorInfo[]
  outputs: TensorInfo[]
}

export interface ProviderStatus {
  name: 'cpu' | 'cuda'
  available: boolean
  /** Why it is not available. */
  reason?: string
}

/** ORT prints its own red errors on a failed provider; we report the reason ourselves. */
const QUIET = { logSeverityLevel: 4 as const }

/** Opens `path` on CPU and reads its signature. Loads the weights: seconds for a 1.7B model. */
export async function inspectOnnxModel(path: string): Promise<OnnxModelInfo> {
  const ort = await loadOnnxRuntime()
  const session = await ort.InferenceSession.create(path, QUIET)
  try {
    return {
      inputs: session.inputMetadata.map(describe),
      outputs: session.outputMetadata.map(describe),
    }
  } finally {
    await session.release()
  }
}

/**
 * CPU always; CUDA only when this onnxruntime-node build ships its provider and a session on
 * `probePath` (the smallest model file is enough) really starts on it.
 */
export async function probeExecutionProviders(probePath: string): Promise<ProviderStatus[]> {
  const ort = await loadOnnxRuntime()
  const cuda = ort.listSupportedBackends().find((backend) => backend.name === 'cuda')
  // Without its libraries the CUDA session fails after ORT's own red stderr line; say why here.
  const missing = cuda ? missingCudaProvider() : 'this onnxruntime-node build has no CUDA provider'
  if (missing !== undefined) {
    return [
      { name: 'cpu', available: true },
      { name: 'cuda', available: false, reason: missing },
    ]
  }
  try {
    const session = await ort.InferenceSession.create(probePath, {
      ...QUIET,
      executionProviders: ['cuda'],
    })
    await session.release()
    return [
      { name: 'cpu', available: true },
      { name: 'cuda', available: true },
    ]
  } catch (error) {
    const reason = errorFirstLine(error)
    return [
      { name: 'cpu', available: true },
      { name: 'cuda', available: false, reason },
    ]
  }
}

function describe(metadata: {
  name: string
  isTensor: boolean
  type?: string
  shape?: ReadonlyArray<number | string>
}): TensorInfo {
  return {
    name: metadata.name,
    type: metadata.isTensor ? (metadata.type ?? 'unknown') : 'non-tensor',
    shape: metadata.isTensor ? [...(metadata.shape ?? [])] : [],
  }
}
