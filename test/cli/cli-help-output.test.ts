import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { main } from '../../src/main.ts'

async function help(command: string): Promise<string> {
  let stdout = ''
  const code = await main([command, '--help'], {
    stdout: (text) => (stdout += text),
    stderr: () => {},
    env: {},
  })
  expect(code).toBe(0)
  return stdout
}

describe('command help', () => {
  it('names the default selector the configuration really has', async () => {
    const { selector } = parseConfig({}).select
    for (const command of ['serve', 'select', 'bench']) {
      const line = (await help(command)).match(/--selector <id>[\s\S]*?\(default (\S+?)[,)]/)
      expect(line?.[1], command).toBe(selector)
    }
  })
})

describe('toolsel select --explain', () => {
  it('shows the probability of each candidate in the text output, not only with --json', async () => {
    let stdout = ''
    const code = await main(
      ['select', 'send an sms to Bob', '--explain', '--log-level', 'silent'],
      {
        stdout: (text) => (stdout += text),
        stderr: () => {},
        env: {},
      },
    )
    expect(code).toBe(0)
    expect(stdout).toMatch(/\*\s+[\d.]+\s+sms\.send_sms {2}p=0\.\d{3}/)
  }, 60_000)
})
