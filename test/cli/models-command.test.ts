import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
    const empty = await mkdtemp(join(tmpdir(), 'toolsel-models-empty-'))
    const { code, stdout } = await run(['models', 'check', empty, '--no-cuda', '--json'])
    expect(code).toBe(1)
    const report = JSON.parse(stdout)
    expect(report.ok).toBe(false)
    expect(report.problems.length).toBeGreaterThan(0)
  })

  it('says in one line (exit 2) that a path is missing or no directory, instead of a report', async () => {
    for (const json of [[], ['--json']]) {
      const missing = await run(['models', 'check', '/nonexistent/model', '--no-cuda', ...json])
      const message =
        'No such directory "/nonexistent/model": pass the model directory that holds config.json and onnx/ (see models/README.md).'
      expect(missing.code).toBe(2)
      // --json: the failure is also one JSON error line on stdout (README: "--json" errors).
      expect(missing.stdout).toBe(
        json.length === 0
          ? ''
          : `${JSON.stringify({ error: { code: 'INVALID_INPUT', message } })}\n`,
      )
      expect(missing.stderr.trim().split('\n')).toEqual([`error [INVALID_INPUT]: ${message}`])
    }
    const file = await run(['models', 'check', 'package.json', '--no-cuda'])
    expect(file.code).toBe(2)
    expect(file.stderr).toContain('"package.json" is not a directory')
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
