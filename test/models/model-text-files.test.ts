import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ToolselError } from '../../src/errors.ts'
import {
  MODEL_TEXT_FILE_MAX_BYTES,
  checkModelTextFiles,
  readModelText,
} from '../../src/models/model-text-files.ts'
import { CausalLmRuntime } from '../../src/models/onnx/causal-lm-runtime.ts'
import { OnnxEmbeddingModel } from '../../src/models/onnx/onnx-embedding-model.ts'
import { runToolselChild } from '../helpers/run-toolsel-child.ts'

const scratch = mkdtempSync(join(tmpdir(), 'toolsel-model-files-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A model directory whose `file` is a link to /dev/zero (the rest a few small JSON files). */
function deviceModelDir(name: string, file: string): string {
  const directory = join(scratch, name)
  mkdirSync(directory)
  writeFileSync(join(directory, 'config.json'), '{"model_type":"qwen3"}')
  writeFileSync(join(directory, 'tokenizer_config.json'), '{}')
  rmSync(join(directory, file), { force: true })
  symlinkSync('/dev/zero', join(directory, file))
  return directory
}

async function loadError(load: () => Promise<unknown>): Promise<ToolselError> {
  const error = await load().then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(ToolselError)
  return error as ToolselError
}

describe('model directory text files, bounded', () => {
  it('toolsel models check refuses a config.json or tokenizer_config.json linked to /dev/zero', async () => {
    // Before: read until killed (2.3 GB RSS for config.json, 4.3 GB for tokenizer_config.json).
    for (const file of ['config.json', 'tokenizer_config.json']) {
      const directory = deviceModelDir(`check-${file}`, file)
      const run = await runToolselChild(['models', 'check', directory, '--no-cuda'], {
        timeoutMs: 30_000,
      })
      expect(run.signal).toBeNull()
      expect(run.code).toBe(1)
      expect(run.stdout + run.stderr).toContain(
        `${file} is not valid JSON: Model file "${join(directory, file)}" is not a regular file`,
      )
    }
  })

  it('a load refuses a device or an oversized file before transformers.js reads it', async () => {
    const device = deviceModelDir('load-device', 'tokenizer.json')
    for (const load of [
      () => CausalLmRuntime.load(device, 'fp32', 'cpu'),
      () => OnnxEmbeddingModel.load(device),
      () => checkModelTextFiles(device),
    ]) {
      const error = await loadError(load)
      expect(error.code).toBe('MODEL_LOAD_FAILED')
      expect(error.message).toBe(
        `Model file "${join(device, 'tokenizer.json')}" is not a regular file (a device, pipe or directory).`,
      )
    }
    // A sparse file one byte over the limit: refused by its size, unread.
    const big = join(scratch, 'big')
    mkdirSync(big)
    writeFileSync(join(big, 'config.json'), '{}')
    writeFileSync(join(big, 'tokenizer.json'), '')
    truncateSync(join(big, 'tokenizer.json'), MODEL_TEXT_FILE_MAX_BYTES + 1)
    const error = await loadError(() => CausalLmRuntime.load(big, 'fp32', 'cpu'))
    expect(error.message).toContain(`is ${MODEL_TEXT_FILE_MAX_BYTES + 1} bytes, larger than`)
    await expect(readModelText(join(big, 'config.json'))).resolves.toBe('{}')
  })
})
