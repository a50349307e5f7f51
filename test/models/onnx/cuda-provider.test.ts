/**
 * Whether CUDA is tried at all: without onnxruntime-node's CUDA provider libraries a cuda session
 * is not asked for (ONNX Runtime printed its own red "Failed to load library
 * libonnxruntime_providers_shared.so" line on stderr before failing); with them it is, and a
 * failure still falls back to the CPU.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  createOnDevice,
  missingCudaProvider,
  type Device,
} from '../../../src/models/onnx/transformers.ts'

describe('the CUDA provider check', () => {
  it.skipIf(process.platform !== 'linux')(
    'names the provider libraries a binding directory lacks, and nothing once they are there',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'toolsel-ort-bin-'))
      expect(missingCudaProvider(dir)).toBe(
        `this onnxruntime-node install has no CUDA provider (libonnxruntime_providers_shared.so, libonnxruntime_providers_cuda.so missing in ${dir}; onnxruntime-node's install script downloads them on linux x64)`,
      )
      await writeFile(join(dir, 'libonnxruntime_providers_shared.so'), '')
      expect(missingCudaProvider(dir)).toContain('(libonnxruntime_providers_cuda.so missing')
      await writeFile(join(dir, 'libonnxruntime_providers_cuda.so'), '')
      expect(missingCudaProvider(dir)).toBeUndefined()
    },
  )

  it('does not try cuda without the provider, and falls back when a cuda session fails', async () => {
    const tried: Device[] = []
    const warnings: string[] = []
    const create = async (device: Device) => {
      tried.push(device)
      if (device === 'cuda') throw new Error('Failed to load shared library\nmore')
      return device
    }
    const absent = await createOnDevice(
      'cuda',
      create,
      (line) => warnings.push(line),
      () => 'no x',
    )
    expect(absent).toEqual({ value: 'cpu', device: 'cpu', fallbackReason: 'no x' })
    expect(tried).toEqual(['cpu'])
    const failing = await createOnDevice(
      'cuda',
      create,
      (line) => warnings.push(line),
      () => undefined,
    )
    expect(failing).toMatchObject({ value: 'cpu', device: 'cpu' })
    expect(tried).toEqual(['cpu', 'cuda', 'cpu'])
    expect(warnings).toEqual([
      'CUDA execution provider unavailable (no x); falling back to CPU.',
      'CUDA execution provider unavailable (Failed to load shared library); falling back to CPU.',
    ])
  })
})
