/**
 * A model directory's ONNX files are bounded before ONNX Runtime or transformers.js reads them
 * (model-weight-files.ts), and the model fingerprint reads each loaded file through one handle,
 * a regular file within its limit (model-fingerprint.ts). Before round 47: a FIFO or a device at
 * `onnx/model.onnx` counted as absent in the fingerprint and was then read by the load (a FIFO
 * hung it, /dev/zero grew the process until killed), and a file of any size was hashed.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ToolselError } from '../../src/errors.ts'
import { checkModelDir } from '../../src/models/check-model-dir.ts'
import { fingerprintStats, modelFilesFingerprint } from '../../src/models/model-fingerprint.ts'
import {
  MODEL_GRAPH_FILE_MAX_BYTES,
  MODEL_WEIGHTS_FILE_MAX_BYTES,
  checkModelWeightFiles,
} from '../../src/models/model-weight-files.ts'
import { CausalLmRuntime } from '../../src/models/onnx/causal-lm-runtime.ts'
import { OnnxEmbeddingModel } from '../../src/models/onnx/onnx-embedding-model.ts'

const scratch = mkdtempSync(join(tmpdir(), 'toolsel-weight-files-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A model directory with small JSON files and `onnx/`, whose `file` is made by `make`. */
function modelDir(name: string, file: string, make: (path: string) => void): string {
  const directory = join(scratch, name)
  mkdirSync(join(directory, 'onnx'), { recursive: true })
  writeFileSync(join(directory, 'config.json'), '{"model_type":"qwen3"}')
  writeFileSync(join(directory, 'tokenizer.json'), '{}')
  writeFileSync(join(directory, 'tokenizer_config.json'), '{}')
  make(join(directory, file))
  return directory
}

const fifo = (path: string) => execFileSync('mkfifo', [path])
const sparse = (size: number) => (path: string) => {
  writeFileSync(path, '')
  truncateSync(path, size)
}

async function refusal(load: () => Promise<unknown>): Promise<ToolselError> {
  const error = await load().then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(ToolselError)
  expect((error as ToolselError).code).toBe('MODEL_LOAD_FAILED')
  return error as ToolselError
}

describe('model ONNX files, bounded', () => {
  it('a FIFO at onnx/model.onnx is refused unread by every load and the fingerprint', async () => {
    const directory = modelDir('fifo', 'onnx/model.onnx', fifo)
    const message = `Model file "${join(directory, 'onnx/model.onnx')}" is not a regular file (a device, pipe or directory).`
    for (const load of [
      () => checkModelWeightFiles(directory, 'fp32'),
      // Before: the fingerprint left it out as absent (resolved), and the loads hung on it.
      () => modelFilesFingerprint(directory, ['config.json', 'onnx/model.onnx']),
      () => OnnxEmbeddingModel.load(directory),
      () => CausalLmRuntime.load(directory, 'fp32', 'cpu'),
    ])
      expect((await refusal(load)).message).toBe(message)
  }, 30_000)

  it('/dev/zero behind a link at external data is refused unread', async () => {
    const directory = modelDir('device', 'onnx/model.onnx_data', (path) =>
      symlinkSync('/dev/zero', path),
    )
    writeFileSync(join(directory, 'onnx/model.onnx'), 'graph')
    const message = `Model file "${join(directory, 'onnx/model.onnx_data')}" is not a regular file`
    expect((await refusal(() => checkModelWeightFiles(directory, 'fp32'))).message).toContain(
      message,
    )
    const files = ['onnx/model.onnx', 'onnx/model.onnx_data']
    expect((await refusal(() => modelFilesFingerprint(directory, files))).message).toContain(
      message,
    )
    // `toolsel models check`: a problem naming it, and no ONNX session started on it.
    const report = await checkModelDir(directory, { probeCuda: false })
    expect(report.ok).toBe(false)
    expect(report.problems.map((problem) => problem.message).join('\n')).toContain(message)
    expect(report.session).toBeUndefined()
  })

  it('a graph file past 2 GiB is refused by its size, unread (sparse: nothing written)', async () => {
    const directory = modelDir(
      'big-graph',
      'onnx/model.onnx',
      sparse(MODEL_GRAPH_FILE_MAX_BYTES + 1),
    )
    const hashed = fingerprintStats.filesHashed
    for (const load of [
      () => checkModelWeightFiles(directory, 'fp32'),
      // Before: 2 GiB hashed (seconds), then read whole by the load.
      () => modelFilesFingerprint(directory, ['onnx/model.onnx']),
      () => CausalLmRuntime.load(directory, 'fp32', 'cpu'),
    ])
      expect((await refusal(load)).message).toContain(
        `is ${MODEL_GRAPH_FILE_MAX_BYTES + 1} bytes, larger than ${MODEL_GRAPH_FILE_MAX_BYTES} bytes (an ONNX graph is at most 2 GiB`,
      )
    expect(fingerprintStats.filesHashed).toBe(hashed)
  })

  it('external data past its limit is refused; within it, the files pass', async () => {
    const directory = modelDir(
      'big-data',
      'onnx/model.onnx_data',
      sparse(MODEL_WEIGHTS_FILE_MAX_BYTES + 1),
    )
    writeFileSync(join(directory, 'onnx/model.onnx'), 'graph')
    expect((await refusal(() => checkModelWeightFiles(directory, 'fp32'))).message).toContain(
      `larger than ${MODEL_WEIGHTS_FILE_MAX_BYTES} bytes (the most read of one external weights file)`,
    )
    truncateSync(join(directory, 'onnx/model.onnx_data'), 1024)
    await expect(checkModelWeightFiles(directory, 'fp32')).resolves.toBeUndefined()
    await expect(
      modelFilesFingerprint(directory, ['onnx/model.onnx', 'onnx/model.onnx_data']),
    ).resolves.toMatch(/^sha256:[0-9a-f]{64}$/)
  })
})
