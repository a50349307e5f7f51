import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { COMMANDS, main } from '../../src/main.ts'
import { runCli } from './run-cli.ts'
import { OPTIONS as BENCH_OPTIONS } from '../../src/cli/bench-command.ts'
import { COMMON_OPTIONS, HELP_WIDTH, type OptionSpec } from '../../src/cli/cli-options.ts'
import { OPTIONS as INDEX_OPTIONS } from '../../src/cli/index-command.ts'
import { OPTIONS as LIBRARIES_OPTIONS } from '../../src/cli/libraries-command.ts'
import { OPTIONS as MCP_OPTIONS } from '../../src/cli/mcp-command.ts'
import { OPTIONS as MODELS_OPTIONS } from '../../src/cli/models-command.ts'
import { OPTIONS as SELECT_OPTIONS } from '../../src/cli/select-command.ts'
import { OPTIONS as SERVE_OPTIONS } from '../../src/cli/serve-command.ts'
import { OPTIONS as SNAPSHOT_OPTIONS } from '../../src/cli/snapshot-command.ts'
import { OPTIONS as TRAIN_DATA_OPTIONS } from '../../src/cli/train-data-command.ts'
import { OPTIONS as TRAIN_OPTIONS } from '../../src/cli/train-command.ts'
import packageJson from '../../package.json' with { type: 'json' }

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
      const { code, stdout, stderr } = await runCli([name, '--help'])
      expect({ name, code, stderr }).toEqual({ name, code: 0, stderr: '' })
      expect(stdout).toMatch(new RegExp(`^Usage: toolsel ${name}[ \\n]`))
    }
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const { code, stdout } = await runCli(argv)
      expect(code, argv.join(' ')).toBe(0)
      expect(stdout).toContain('Commands:')
    }
    // No command at all is a usage error, as an unknown command is (was: usage on stdout, exit 0,
    // so `toolsel $cmd` with $cmd empty succeeded in a script).
    const none = await runCli([])
    expect(none).toMatchObject({ code: 2, stdout: '' })
    expect(none.stderr).toMatch(/^No command given\.\n\nUsage: toolsel <command> \[options\]\n/)
    expect(none.stderr).toContain('Commands:')
    const unknown = await runCli(['nope'])
    expect(unknown).toMatchObject({ code: 2, stdout: '' })
    expect(unknown.stderr).toMatch(/^Unknown command "nope"\.\n/)
    expect((await runCli(['selct', 'x'])).stderr).toMatch(
      /^Unknown command "selct"\. Did you mean "select"\?\n/,
    )
    // The word the README and the HTTP API use for what index does.
    expect((await runCli(['import', 'tools.json'])).stderr).toMatch(
      /^Unknown command "import"\. Did you mean "index" \(import a tool file and build its index\)\?\n/,
    )
  })

  it("each flag of a usage line names its value as the flag's own line does", async () => {
    for (const name of Object.keys(COMMANDS)) {
      const text = await help(name)
      const usage = text.slice(0, text.indexOf('\n'))
      for (const [, flag, value] of usage.matchAll(/\[(--[\w-]+) (<[^>]+>)\]/g)) {
        const line = text.split('\n').find((line) => line.trimStart().startsWith(`${flag} <`))
        if (line === undefined) continue
        expect(line.trimStart(), `${name}: ${flag}`).toMatch(new RegExp(`^${flag} ${value}`))
      }
    }
    // An example command line for a new user, as the README's.
    expect(await help('index')).toContain(
      'toolsel index tools.json --name mytools --retriever bm25,dense:use-lite',
    )
  })

  it('names the closest option for a mistyped one, not how to pass a positional starting with -', async () => {
    const typo = await runCli(['select', 'x', '--libary', 'mine'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toBe(
      'error [INVALID_INPUT]: Unknown option --libary (did you mean --library?). See: toolsel select --help\n',
    )
    expect((await runCli(['serve', '--prot', '9000'])).stderr).toContain(
      'Unknown option --prot (did you mean --port?).',
    )
    expect((await runCli(['select', '-x'])).stderr).toContain(
      'Unknown option -x (a positional argument that starts with "-" goes after "--"). See: toolsel select --help',
    )
  })

  it('options typed before the command: says they go after it, with the command line reordered', async () => {
    // Was only: Unknown command "--log-level". and the usage, which reads as if --log-level
    // were not an option at all (README: "Every command takes --config, --print-config and --log-level").
    const before = await runCli(['--log-level', 'debug', 'select', "it's late", '--json'])
    expect(before).toMatchObject({ code: 2, stdout: '' })
    expect(before.stderr).toMatch(
      /^Unknown command "--log-level"\. Options go after the command: toolsel select --log-level debug 'it'\\''s late' --json\n\nUsage: toolsel <command>/,
    )
    expect((await runCli(['--print-config'])).stderr).toMatch(
      /^Unknown command "--print-config"\. Options go after the command: toolsel <command> --print-config\n/,
    )
    expect((await runCli(['--config', 'a\u001bb.json', 'serve'])).stderr).toMatch(
      /^Unknown command "--config"\. Options go after the command: toolsel serve --config 'a\\x1bb\.json'\n/,
    )
  })

  it('prints the version (was: Unknown command "--version", exit code 2)', async () => {
    for (const flag of ['--version', '-v', 'version']) {
      expect(await runCli([flag])).toEqual({
        code: 0,
        stdout: `toolsel ${packageJson.version}\n`,
        stderr: '',
      })
    }
  })

  it('says what a file: suite record holds besides "tools" (a shared "library" file, --tools)', async () => {
    const text = (await help('bench')).replace(/\s+/g, ' ')
    expect(text).toContain('{instruction, tools | library: <tool file or folder>, gold, category?}')
    expect(text).toContain('records without either use --tools')
    expect(text).toContain('a file whose every query is dropped fails')
  })

  it("says what --tau does: select's applies under every selector (a request's tau), bench's not under learned", async () => {
    expect(await help('bench')).toMatch(
      /--tau <x> +BM25 score threshold of the top1 and llm: selectors' candidates\s+\(default 3\);\s+the learned selector \(the default\) takes every candidate\s+and decides itself/,
    )
    expect(await help('select')).toMatch(
      /--tau <x> +Retrieval score threshold every step's candidates must pass, under any\s+selector \(a request's tau\)\. Default: 0 with the learned selector \(the\s+default\), BM25's retrieve\.bm25\.tau \(3\) under top1 and llm:/,
    )
    const tools = async (...flags: string[]) => {
      const { code, stdout } = await runCli([
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
    // Until round 56 select's --tau did nothing under the learned selector.
    expect(await tools('--tau', '1000')).toEqual([])
    expect(await tools('--tau', '1000', '--selector', 'top1')).toEqual([])
  }, 60_000)

  it('names the default selector the configuration really has', async () => {
    const { selector } = parseConfig({}).select
    for (const command of ['serve', 'select', 'bench']) {
      const line = (await help(command)).match(/--selector <id>[\s\S]*?\(default (\S+?)[,)]/)
      expect(line?.[1], command).toBe(selector)
    }
  })

  it('says the start-up key check runs for a fallback model too (plan.fallback, select.fallback)', async () => {
    // serve-command checks openAiModelUsers of the planner, the selector and both fallback lists.
    expect(await help('serve')).toMatch(
      /when a planner, selector or fallback is llm:openai:, the API key is\s+checked before\s+ready \(GET <baseUrl>\/models\): a 401 or 403 stops the start/,
    )
  })

  it("says select's default retriever is the library's own (auto), as it is, not bm25", async () => {
    expect(parseConfig({}).retrieve.retriever).toBe('auto')
    // bench takes a part too (toolsel bench --suite demo --retriever dense:static:glove-100d runs it).
    expect(await help('bench')).toMatch(
      /--retriever <part> +auto \| [^\n]*, or a part \(dense:<embedder>,\s+hybrid:<part>\+<part>\)/,
    )
    expect(await help('select')).toMatch(
      /--retriever <part> +[^\n]*, or a part the library has\s[\s\S]*?\(default retrieve\.retriever, auto:\s+the library's own default, env TOOLSEL_RETRIEVER\)/,
    )
    // A saved index whose default part is regex (built first), bm25 beside it: without
    // --retriever, select uses regex (the help said "default bm25 when the library has it").
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-help-retriever-'))
    try {
      const file = fileURLToPath(
        new URL('../fixtures/formats/anthropic-tools.json', import.meta.url),
      )
      const indexed = await runCli([
        'index',
        file,
        '--name',
        'rx',
        '--retriever',
        'regex,bm25',
        '--index-dir',
        dir,
      ])
      expect(indexed.code, indexed.stderr).toBe(0)
      const retriever = async (...flags: string[]) => {
        const argv = ['select', 'get the weather', '--json', '--library', 'rx', '--index-dir', dir]
        const { code, stdout, stderr } = await runCli([...argv, '--log-level', 'silent', ...flags])
        expect(code, stderr).toBe(0)
        return JSON.parse(stdout).components.retriever
      }
      expect(await retriever()).toBe('regex')
      expect(await retriever('--retriever', 'bm25')).toBe('bm25')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("README's Command line block", () => {
  it("shows every command, each flag of its lines in that command's --help", async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('\n## Command line'))
    const start = section.indexOf('```sh\n') + 6
    const block = section.slice(start, section.indexOf('\n```', start))
    const flagsByCommand = new Map<string, Set<string>>()
    let command = ''
    for (const line of block.split('\n')) {
      // A line of its own per command; an indented line goes on with the one above (bench).
      const name = line.match(/^npx toolsel (\S+)/)?.[1]
      if (name !== undefined) command = name.startsWith('-') ? '' : name
      const text = line.replace(/#.*$/, '')
      const flags = flagsByCommand.get(command) ?? new Set()
      for (const match of text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) flags.add(match[0])
      flagsByCommand.set(command, flags)
    }
    expect([...flagsByCommand.keys()].filter((name) => name !== '').sort()).toEqual(
      Object.keys(COMMANDS).sort(),
    )
    for (const [name, flags] of flagsByCommand) {
      const text = name === '' ? (await runCli(['--help'])).stdout : await help(name)
      const missing = [...flags].filter(
        (flag) => !new RegExp(`(^|[\\s\\[(|,])${flag}(?![\\w-])`, 'm').test(text),
      )
      expect({ command: name, missing }).toEqual({ command: name, missing: [] })
    }
  })
})

describe("README's Command line block against each --help's usage", () => {
  it('names every flag of a usage line (was: no snapshot --json, no models check --dtype/--no-cuda/--json)', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('\n## Command line'))
    const start = section.indexOf('```sh\n') + 6
    const lines = section.slice(start, section.indexOf('\n```', start)).split('\n')
    for (const name of Object.keys(COMMANDS)) {
      const text = await help(name)
      // The usage: from "Usage:" to the first blank line (a usage of two forms, or wrapped).
      const usage = text.slice(0, text.indexOf('\n\n'))
      const flags = new Set([...usage.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]))
      // The command's README lines: its own, and the indented ones that go on with it.
      const at = lines.findIndex((line) => line.startsWith(`npx toolsel ${name} `))
      let end = at + 1
      while (end < lines.length && lines[end]!.startsWith(' ')) end++
      const summary = lines.slice(at, end).join(' ')
      const missing = [...flags].filter((flag) => !new RegExp(`${flag}(?![\\w-])`).test(summary))
      expect({ command: name, missing }).toEqual({ command: name, missing: [] })
    }
  })
})

describe('help text layout', () => {
  it(`every line of every help fits ${HELP_WIDTH} columns; a blank line before "Common options:"`, async () => {
    const texts: Record<string, string> = { '': (await runCli(['--help'])).stdout }
    for (const name of Object.keys(COMMANDS)) texts[name] = await help(name)
    for (const [name, text] of Object.entries(texts)) {
      const long = text.split('\n').filter((line) => line.length > HELP_WIDTH)
      expect({ command: name, long }).toEqual({ command: name, long: [] })
      if (name === '') continue
      // Was: the last option's line ran into "Common options:" in every command but index.
      expect(text, name).toMatch(/\n\nCommon options:\n/)
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

/**
 * Each flag (or positional) that takes one of a set of values: the command's argv with a value no
 * set holds, and where its help lists them (`flag`: the flag's own lines; `help`: anywhere in
 * the command's help, for a set listed apart, e.g. bench's "Suites:" line or a usage line).
 */
const ENUM_ARGUMENTS: Array<{ argv: string[]; flag: string; scope: 'flag' | 'help' }> = [
  { argv: ['bench', '--suite', 'zz-none'], flag: '--suite', scope: 'help' },
  {
    argv: ['bench', '--suite', 'demo', '--retriever', 'zz-none'],
    flag: '--retriever',
    scope: 'flag',
  },
  { argv: ['bench', '--unmappable', 'zz-none'], flag: '--unmappable', scope: 'flag' },
  { argv: ['bench', '--examples', 'zz-none'], flag: '--examples', scope: 'flag' },
  { argv: ['bench', '--library-mode', 'zz-none'], flag: '--library-mode', scope: 'flag' },
  { argv: ['bench', '--baseline', 'zz-none'], flag: '--baseline', scope: 'flag' },
  { argv: ['bench', '--suite', 'demo', '--planner', 'zz-none'], flag: '--planner', scope: 'flag' },
  {
    argv: ['bench', '--suite', 'demo', '--selector', 'zz-none'],
    flag: '--selector',
    scope: 'flag',
  },
  { argv: ['select', 'x', '--retriever', 'zz-none'], flag: '--retriever', scope: 'flag' },
  { argv: ['select', 'x', '--tool-format', 'zz-none'], flag: '--tool-format', scope: 'flag' },
  { argv: ['select', 'x', '--planner', 'zz-none'], flag: '--planner', scope: 'flag' },
  { argv: ['select', 'x', '--selector', 'zz-none'], flag: '--selector', scope: 'flag' },
  { argv: ['select', 'x', '--log-level', 'zz-none'], flag: '--log-level', scope: 'flag' },
  { argv: ['index', 'package.json', '--format', 'zz-none'], flag: '--format', scope: 'flag' },
  { argv: ['index', 'package.json', '--retriever', 'zz-none'], flag: '--retriever', scope: 'flag' },
  {
    argv: ['index', 'package.json', '--format', 'canonical', '--on-duplicate', 'zz-none'],
    flag: '--on-duplicate',
    scope: 'flag',
  },
  // Refused before the port is opened (the components are made first).
  { argv: ['serve', '--port', '0', '--planner', 'zz-none'], flag: '--planner', scope: 'flag' },
  { argv: ['serve', '--port', '0', '--selector', 'zz-none'], flag: '--selector', scope: 'flag' },
  { argv: ['train', '--model', 'zz-none'], flag: '--model', scope: 'flag' },
  { argv: ['train', '--decision', 'zz-none'], flag: '--decision', scope: 'flag' },
  { argv: ['models', 'check', '.', '--dtype', 'zz-none'], flag: '--dtype', scope: 'flag' },
  { argv: ['train-data', 'zz-none'], flag: 'train-data', scope: 'help' },
  { argv: ['libraries', 'zz-none'], flag: 'libraries', scope: 'help' },
]

/** The values an error message says are accepted ("available: a, b", "one of a, b", "a or b"). */
function acceptedValues(message: string): string[] {
  const list =
    message.match(/\(available: ([^)]*)\)/)?.[1] ??
    message.match(/one of ([^;]*?)(?:,|;) got/)?.[1] ??
    message.match(/must be (\S+ or \S+) \(got/)?.[1] ??
    message.match(/: toolsel \S+ (.*?)\. See/)?.[1]?.replace(/ \| /g, ', ')
  if (list === undefined) {
    // zod's enum message: expected one of "debug"|"info"|…
    const zod = message.split('expected one of ')[1]
    if (zod !== undefined) return [...zod.matchAll(/"([^"]+)"/g)].map((match) => match[1])
    throw new Error(`no list of values in: ${message}`)
  }
  return list
    .split(/, (?:or )?| or /)
    .map((value) => value.trim().split(' ')[0])
    .filter((value) => value.length > 0 && !value.includes('<'))
}

describe('flags that take one of a set of values', () => {
  it('list in --help every value the parser accepts (was: bench --retriever without auto)', async () => {
    for (const { argv, flag, scope } of ENUM_ARGUMENTS) {
      const { code, stdout, stderr } = await runCli(argv)
      // 2 for a refused value, an unknown component's name included (README: exit codes).
      expect({ argv, refused: code === 2, stdout }).toEqual({
        argv,
        refused: true,
        stdout: '',
      })
      const accepted = acceptedValues(stderr)
      expect(accepted.length, stderr).toBeGreaterThan(0)
      const text = await help(argv[0])
      const lines = text.split('\n')
      const start = lines.findIndex((line) => line.startsWith(`  ${flag} `))
      const end = lines.findIndex((line, at) => at > start && /^ {2}-|^$/.test(line))
      const listed = scope === 'help' ? text : lines.slice(start, end).join(' ')
      expect(scope === 'help' || start >= 0, `${argv[0]} ${flag}`).toBe(true)
      const missing = accepted.filter(
        (value) =>
          !new RegExp(
            `(^|[^\\w:.-])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w-]|$)`,
          ).test(listed),
      )
      expect({ command: argv.join(' '), missing }).toEqual({ command: argv.join(' '), missing: [] })
    }
  }, 60_000)
})

describe('toolsel serve --help on stopping', () => {
  it('names the stop signals and the exec advice for a script file (was: nowhere but README)', async () => {
    const text = await help('serve')
    expect(text).toContain('SIGTERM, SIGINT (Ctrl-C) or SIGHUP (the terminal closed)')
    expect(text).toContain('"exec toolsel serve" in the file and "exec ./run.sh" in the script')
    expect(text).toContain('setsid toolsel serve > serve.log 2>&1 &')
  })
})

describe('toolsel mcp --help on stopping', () => {
  it('says how it stops and within which grace (was: nowhere but README)', async () => {
    const text = (await help('mcp')).replace(/\s+/g, ' ')
    expect(text).toContain('It stops when its stdin ends or on SIGINT/SIGTERM')
    const grace = parseConfig({}).server.shutdownGraceMs
    expect(text).toContain(`within server.shutdownGraceMs (default ${grace} ms)`)
    expect(text).toContain('still running at its end are SIGKILLed')
  })
})

describe("each command's --help against its parser", () => {
  /** Flags a help names that belong to another command, with that command. */
  const ELSEWHERE: Record<string, Record<string, string>> = {
    index: { 'tool-format': 'select' },
    train: { selector: 'select' },
  }
  const PARSERS: Record<string, OptionSpec> = {
    serve: SERVE_OPTIONS,
    index: INDEX_OPTIONS,
    libraries: LIBRARIES_OPTIONS,
    select: SELECT_OPTIONS,
    mcp: MCP_OPTIONS,
    bench: BENCH_OPTIONS,
    models: MODELS_OPTIONS,
    snapshot: SNAPSHOT_OPTIONS,
    train: TRAIN_OPTIONS,
    'train-data': TRAIN_DATA_OPTIONS,
  }
  const parsed = (command: string): OptionSpec => ({ ...COMMON_OPTIONS, ...PARSERS[command] })

  it('lists every option the parser takes, and names no option it does not take', async () => {
    expect(Object.keys(PARSERS).sort()).toEqual(Object.keys(COMMANDS).sort())
    for (const command of Object.keys(COMMANDS)) {
      const text = await help(command)
      const named = new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]))
      const options = parsed(command)
      const undocumented = Object.keys(options).filter((option) => !named.has(option))
      const elsewhere = ELSEWHERE[command] ?? {}
      const unknown = [...named].filter((flag) => !(flag in options) && !(flag in elsewhere))
      expect({ command, undocumented, unknown }).toEqual({ command, undocumented: [], unknown: [] })
      for (const [flag, other] of Object.entries(elsewhere)) {
        expect(text, `${command}: --${flag}`).toContain(`--${flag}`)
        expect(Object.keys(parsed(other)), `${command}: --${flag} of ${other}`).toContain(flag)
      }
      // Short forms: each one the parser has is shown, and only those.
      const shorts = Object.values(options).flatMap((spec) => (spec.short ? [spec.short] : []))
      const shown = [...text.matchAll(/(?<![\w-])-([a-zA-Z]),/g)].map((m) => m[1])
      expect({ command, shown }).toEqual({ command, shown: shorts })
    }
  })
})
