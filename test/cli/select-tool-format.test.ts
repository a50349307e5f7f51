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

  it('names the formats when given another', async () => {
    const { code, stderr } = await runCli(['select', 'x', '--tool-format', 'gemini'])
    expect(code).toBe(2)
    expect(stderr).toContain(
      '--tool-format must be one of toolsel, openai, openai-responses, anthropic; got "gemini".',
    )
  })
})
