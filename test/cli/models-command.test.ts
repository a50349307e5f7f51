import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'
import { TINY_MODELS_MISSING, tinyModel } from '../models/language/tiny-models.ts'

const run = runCli

describe('toolsel models check', () => {
  it.skipIf(TINY_MODELS_MISSING)(
    'validates a model directory and prints its inputs, outputs and providers',
    async () => {
      const { code, stdout } = await run([
        'models',
        'check',
        tinyModel('tiny-qwen3-planner'),
        '--no-cuda',
      ])
      expect(code).toBe(0)
      expect(stdout).toContain('past_key_values.0.key')
      expect(stdout).toContain('execution providers')
      expect(stdout).toContain('Result: usable as onnx:')
    },
  )

  it('exits 1 and lists the problems for a directory that would not load', async () => {
    const { code, stdout } = await run([
      'models',
      'check',
      '/nonexistent/model',
      '--no-cuda',
      '--json',
    ])
    expect(code).toBe(1)
    const report = JSON.parse(stdout)
    expect(report.ok).toBe(false)
    expect(report.problems.length).toBeGreaterThan(0)
  })

  it('explains its usage', async () => {
    expect((await run(['models', '--help'])).stdout).toContain(
      'Usage: toolsel models check <model dir>',
    )
    const wrong = await run(['models', 'inspect', 'x'])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('toolsel models check <model dir>')
  })
})
