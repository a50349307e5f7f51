import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkModelDir, formatModelCheck } from '../../../src/models/check-model-dir.ts'
import { TINY_MODELS_MISSING, tinyModel } from './tiny-models.ts'

const scratch = mkdtempSync(join(tmpdir(), 'toolsel-check-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A copy of a fixture, changed by `edit`. */
function brokenCopy(name: string, edit: (directory: string) => void): string {
  const directory = join(scratch, name)
  cpSync(tinyModel('tiny-qwen3-planner'), directory, { recursive: true })
  edit(directory)
  return directory
}

describe.skipIf(TINY_MODELS_MISSING)('checkModelDir', () => {
  it('accepts a complete fixture and reports its dtypes, signature and providers', async () => {
    const report = await checkModelDir(tinyModel('tiny-qwen3-selector'))
    expect(report).toMatchObject({
      ok: true,
      modelType: 'qwen3',
      architectures: ['Qwen3ForCausalLM'],
      chatTemplate: 'tokenizer_config.json',
      thinkingSwitch: true,
      problems: [],
      session: { dtype: 'fp32', file: 'onnx/model.onnx', layers: 2, keepsLogits: true },
    })
    expect(report.dtypes.map((file) => file.dtype)).toEqual(['fp32', 'fp16'])
    expect(report.session?.inputs.map((input) => input.name)).toEqual([
      'input_ids',
      'attention_mask',
      'position_ids',
      'num_logits_to_keep',
      'past_key_values.0.key',
      'past_key_values.0.value',
      'past_key_values.1.key',
      'past_key_values.1.value',
    ])
    expect(report.session?.outputs[0]).toEqual({
      name: 'logits',
      type: 'float32',
      shape: ['batch_size', 'logits_length', 151936],
    })
    expect(report.providers[0]).toEqual({ name: 'cpu', available: true })
    expect(report.providers[1].name).toBe('cuda')
    expect(formatModelCheck(report)).toMatch(
      /Result: usable as onnx:.*tiny-qwen3-selector \(dtypes: fp32, fp16\)\.$/,
    )
  })

  it('inspects the requested dtype and notes an export without num_logits_to_keep', async () => {
    const fp16 = await checkModelDir(tinyModel('tiny-qwen3-selector'), {
      dtype: 'fp16',
      probeCuda: false,
    })
    expect(fp16.session?.outputs[0].type).toBe('float16')
    expect(fp16.providers).toEqual([{ name: 'cpu', available: true }])
    const full = await checkModelDir(tinyModel('tiny-qwen3-thinking'), { probeCuda: false })
    expect(full.ok).toBe(true)
    expect(full.notes.join('\n')).toContain('no num_logits_to_keep input')
  })

  it('lists each missing piece with its fix', async () => {
    const empty = await checkModelDir(scratch, { probeCuda: false })
    expect(empty.ok).toBe(false)
    expect(empty.problems.map((problem) => problem.message)).toEqual([
      'config.json is missing.',
      'tokenizer.json is missing.',
      'tokenizer_config.json is missing.',
      'onnx/model.onnx (dtype fp32) is missing.',
    ])
    expect(formatModelCheck(empty)).toContain(
      'fix: Export the model to ONNX (optimum-cli export onnx --task text-generation-with-past',
    )
    expect((await checkModelDir(join(scratch, 'nope'))).problems[0].message).toMatch(
      /is not a directory/,
    )
  })

  it('finds a missing chat template, a layer count that does not match, and a broken ONNX file', async () => {
    const directory = brokenCopy('broken', (path) => {
      const tokenizerConfig = JSON.parse(readFileSync(join(path, 'tokenizer_config.json'), 'utf8'))
      delete tokenizerConfig.chat_template
      writeFileSync(join(path, 'tokenizer_config.json'), JSON.stringify(tokenizerConfig))
      const config = JSON.parse(readFileSync(join(path, 'config.json'), 'utf8'))
      writeFileSync(join(path, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 28 }))
      writeFileSync(join(path, 'onnx', 'model_q4.onnx'), 'not a model')
    })
    const report = await checkModelDir(directory, { probeCuda: false })
    expect(report.problems.map((problem) => problem.message)).toEqual([
      expect.stringMatching(/^No chat template/),
      'config.json says 28 layers; onnx/model.onnx has a cache for 2.',
    ])
    const q4 = await checkModelDir(directory, { dtype: 'q4', probeCuda: false })
    expect(q4.problems.at(-1)?.message).toMatch(/^ONNX Runtime can't open onnx\/model_q4\.onnx/)
  })
})
