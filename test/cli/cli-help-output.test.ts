import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { COMMANDS, main } from '../../src/main.ts'
import packageJson from '../../package.json' with { type: 'json' }

/** Runs the CLI in process: its exit code and what it wrote. */
async function run(argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: {},
  })
  return { code, stdout, stderr }
}

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
  it('every command has --help on stdout with exit code 0, starting with its usage', async () => {
    for (const name of Object.keys(COMMANDS)) {
      const { code, stdout, stderr } = await run([name, '--help'])
      expect({ name, code, stderr }).toEqual({ name, code: 0, stderr: '' })
      expect(stdout).toMatch(new RegExp(`^Usage: toolsel ${name}[ \\n]`))
    }
    for (const argv of [[], ['--help'], ['-h'], ['help']]) {
      const { code, stdout } = await run(argv)
      expect(code, argv.join(' ')).toBe(0)
      expect(stdout).toContain('Commands:')
    }
    const unknown = await run(['nope'])
    expect(unknown).toMatchObject({ code: 2, stdout: '' })
    expect(unknown.stderr).toMatch(/^Unknown command "nope"\.\n/)
    expect((await run(['selct', 'x'])).stderr).toMatch(
      /^Unknown command "selct"\. Did you mean "select"\?\n/,
    )
    // The word the README and the HTTP API use for what index does.
    expect((await run(['import', 'tools.json'])).stderr).toMatch(
      /^Unknown command "import"\. Did you mean "index" \(import a tool file and build its index\)\?\n/,
    )
  })

  it('names the closest option for a mistyped one, not how to pass a positional starting with -', async () => {
    const typo = await run(['select', 'x', '--libary', 'mine'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toBe(
      'error [INVALID_INPUT]: Unknown option --libary (did you mean --library?). See: toolsel select --help\n',
    )
    expect((await run(['serve', '--prot', '9000'])).stderr).toContain(
      'Unknown option --prot (did you mean --port?).',
    )
    expect((await run(['select', '-x'])).stderr).toContain(
      'Unknown option -x (a positional argument that starts with "-" goes after "--"). See: toolsel select --help',
    )
  })

  it('prints the version (was: Unknown command "--version", exit code 2)', async () => {
    for (const flag of ['--version', '-v', 'version']) {
      expect(await run([flag])).toEqual({
        code: 0,
        stdout: `toolsel ${packageJson.version}\n`,
        stderr: '',
      })
    }
  })

  it('says what a file: suite record holds besides "tools" (a shared "library" file, --tools)', async () => {
    const text = (await help('bench')).replace(/\s+/g, ' ')
    expect(text).toContain('{instruction, tools | library: <tool file>, gold, category?}')
    expect(text).toContain('records without either use --tools')
    expect(text).toContain('a file whose every query is dropped fails')
  })

  it('says --tau is not applied by the default (learned) selector, as it is not', async () => {
    for (const command of ['select', 'bench']) {
      expect(await help(command), command).toMatch(
        /--tau <x> +BM25 score threshold of the top1 and llm: selectors' candidates \(default 3\);\s+the learned selector \(the default\) takes every candidate and decides itself/,
      )
    }
    const tools = async (...flags: string[]) => {
      const { code, stdout } = await run([
        'select',
        'What is the weather in Paris and email Ann',
        '--json',
        '--log-level',
        'silent',
        ...flags,
      ])
      expect(code).toBe(0)
      return JSON.parse(stdout).tools.map((tool: { id: string }) => tool.id)
    }
    const learned = await tools()
    expect(learned.length).toBeGreaterThan(0)
    expect(await tools('--tau', '1000')).toEqual(learned)
    expect(await tools('--tau', '1000', '--selector', 'top1')).toEqual([])
  }, 60_000)

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
