import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { ENV_VARS, unknownEnvVarWarnings } from '../../src/config/env-vars.ts'
import { main } from '../../src/main.ts'

describe('environment variables', () => {
  it('README names every variable toolsel reads', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    const missing = Object.keys(ENV_VARS).filter((name) => !readme.includes(`\`${name}\``))
    expect(missing).toEqual([])
  })

  it('warns about a TOOLSEL_ variable that is no setting, naming the closest one', () => {
    expect(
      unknownEnvVarWarnings({
        TOOLSEL_PROT: '9000',
        TOOLSEL_LIBARY: 'demo',
        TOOLSEL_SOMETHING_ELSE: '1',
        // Read elsewhere: the config file, bin/toolsel.mjs, the examples' clients.
        TOOLSEL_CONFIG: 'c.json',
        TOOLSEL_RUN_SOURCE: '1',
        TOOLSEL_URL: 'http://127.0.0.1:8080',
        TOOLSEL_API_KEY: 'k',
        TOOLSEL_PORT: '9000',
        PATH: '/bin',
      }),
    ).toEqual([
      'Environment variable TOOLSEL_LIBARY is not a toolsel setting and is ignored (did you mean TOOLSEL_LIBRARY?); README, "Command line", lists the variables.',
      'Environment variable TOOLSEL_PROT is not a toolsel setting and is ignored (did you mean TOOLSEL_PORT?); README, "Command line", lists the variables.',
      'Environment variable TOOLSEL_SOMETHING_ELSE is not a toolsel setting and is ignored; README, "Command line", lists the variables.',
    ])
  })

  it('a command prints the warning on stderr and runs', async () => {
    const stdout: string[] = []
    const stderr: string[] = []
    const code = await main(['select', '--print-config'], {
      stdout: (text) => stdout.push(text),
      stderr: (text) => stderr.push(text),
      env: { TOOLSEL_PROT: '9000' },
    })
    expect(code).toBe(0)
    expect(JSON.parse(stdout.join('')).server.port).toBe(8080)
    expect(stderr.join('')).toContain(
      'WARN Environment variable TOOLSEL_PROT is not a toolsel setting and is ignored (did you mean TOOLSEL_PORT?)',
    )
  })
})
