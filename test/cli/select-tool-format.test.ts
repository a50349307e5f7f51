import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'

describe('toolsel select --tool-format', () => {
  it('prints the tools as a model API takes them, with toolIds', async () => {
    const { code, stdout } = await runCli([
      'select',
      'text Bob that I am late',
      '--tool-format',
      'openai',
    ])
    expect(code).toBe(0)
    const answer = JSON.parse(stdout)
    expect(answer.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'sms--send_sms',
          description: expect.any(String),
          parameters: expect.objectContaining({ type: 'object' }),
        },
      },
    ])
    expect(answer.toolIds).toEqual({ 'sms--send_sms': 'sms.send_sms' })
    expect(answer.steps[0].selected).toBe('sms.send_sms')
  }, 60_000)

  it('prints what toolsel index reads back as the same tool ids', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-select-export-'))
    for (const format of ['openai', 'openai-responses', 'anthropic']) {
      const select = await runCli(['select', 'text Bob that I am late', '--tool-format', format])
      expect(select.code).toBe(0)
      const file = join(dir, `${format}.json`)
      // The whole answer, then the bare tool list an agent stack keeps.
      for (const saved of [select.stdout, JSON.stringify(JSON.parse(select.stdout).tools)]) {
        await writeFile(file, saved)
        const index = await runCli(['index', file, '--index-dir', dir, '--name', 'copy'])
        expect(index.code).toBe(0)
        expect(index.stderr).toContain('read back as tool ids (sms--send_sms → sms.send_sms)')
        const tools = await readFile(join(dir, 'copy', 'tools.jsonl'), 'utf8')
        expect(JSON.parse(tools.split('\n')[0])).toMatchObject({
          id: 'sms.send_sms',
          name: 'send_sms',
          namespace: 'sms',
          source: { format: format === 'anthropic' ? 'anthropic' : 'openai' },
        })
      }
    }
    const kept = await runCli([
      'index',
      join(dir, 'anthropic.json'),
      '--index-dir',
      dir,
      '--provider-names',
      'keep',
    ])
    expect(kept.code).toBe(0)
    expect(kept.stderr).not.toContain('read back')
    const bad = await runCli(['index', join(dir, 'anthropic.json'), '--provider-names', 'auto'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('Unknown --provider-names "auto" (available: decode, keep).')
  }, 60_000)

  it('names the formats when given another', async () => {
    const { code, stderr } = await runCli(['select', 'x', '--tool-format', 'gemini'])
    expect(code).toBe(2)
    expect(stderr).toContain(
      '--tool-format must be one of toolsel, openai, openai-responses, anthropic; got "gemini".',
    )
  })
})
