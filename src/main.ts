/**
 * The `toolsel` command line: one subcommand per job. Each command file parses its own flags and
 * loads the config once (defaults < file < env < flags).
 * @module
 */
import { closestName } from './config/closest-name.ts'
import type { CommandIO } from './cli/cli-options.ts'
import { asksForHelp, type OptionSpec } from './cli/command-help.ts'
import { shellWord } from './cli/shell-word.ts'
import { errorMessage, isToolselError } from './errors.ts'
import { indexDirWarnings } from './store/index-dir-claims.ts'
import { jsonText, terminalLine, terminalText } from './terminal-text.ts'
import packageJson from '../package.json' with { type: 'json' }

type Command = (argv: string[], io: CommandIO) => Promise<number>

/** A command's help module (`src/cli/<name>-help.ts`): its help text and its flags. */
interface CommandHelp {
  HELP: string
  OPTIONS: OptionSpec
}

/**
 * Subcommands: [load, one-line summary, load the help]. A command's module (and the libraries it
 * needs: the MCP SDK, hono, ajv…) is imported only when that command runs, so `toolsel --help` or
 * `select` does not pay for `serve` and `mcp` (bench/README.md, "CLI start cost", round 47); its
 * help and flags are a light module of their own, so that `toolsel <command> --help` does not
 * load the command either (round 49).
 */
export const COMMANDS: Record<
  string,
  [() => Promise<Command>, string, () => Promise<CommandHelp>]
> = {
  serve: [
    async () => (await import('./cli/serve-command.ts')).serveCommand,
    'Start the HTTP service',
    () => import('./cli/serve-help.ts'),
  ],
  index: [
    async () => (await import('./cli/index-command.ts')).indexCommand,
    'Import a tool file and build its index',
    () => import('./cli/index-help.ts'),
  ],
  libraries: [
    async () => (await import('./cli/libraries-command.ts')).librariesCommand,
    'List, show or delete libraries (saved indexes, or a running service: --server)',
    () => import('./cli/libraries-help.ts'),
  ],
  select: [
    async () => (await import('./cli/select-command.ts')).selectCommand,
    'Select tools for an instruction',
    () => import('./cli/select-help.ts'),
  ],
  mcp: [
    async () => (await import('./cli/mcp-command.ts')).mcpCommand,
    'Serve the MCP tools over stdio (toolsel mcp --stdio)',
    () => import('./cli/mcp-help.ts'),
  ],
  bench: [
    async () => (await import('./cli/bench-command.ts')).benchCommand,
    'Run the offline quality benchmark and write reports',
    () => import('./cli/bench-help.ts'),
  ],
  models: [
    async () => (await import('./cli/models-command.ts')).modelsCommand,
    'Check a local model directory, or an OpenAI-compatible endpoint (openai:<model>)',
    () => import('./cli/models-help.ts'),
  ],
  snapshot: [
    async () => (await import('./cli/snapshot-command.ts')).snapshotCommand,
    'Write a snapshot of the saved indexes, or restore one (snapshot restore <dir>)',
    () => import('./cli/snapshot-help.ts'),
  ],
  train: [
    async () => (await import('./cli/train-command.ts')).trainCommand,
    'Train the learned selector (default: on the benchmark training splits)',
    () => import('./cli/train-help.ts'),
  ],
  'train-data': [
    async () => (await import('./cli/train-data-command.ts')).trainDataCommand,
    'Write planner/selector training records (SFT, GRPO) in toolsel prompt format',
    () => import('./cli/train-data-help.ts'),
  ],
}

/**
 * Words people type for a command that has another name (the README and the HTTP API say
 * "import" for what `index` does): the unknown-command message names the command.
 */
const COMMAND_SYNONYMS: Readonly<Record<string, string>> = {
  import: 'index',
  build: 'index',
  library: 'libraries',
  libs: 'libraries',
  server: 'serve',
  start: 'serve',
  benchmark: 'bench',
  eval: 'bench',
}

/**
 * The commands that take `--json` (static: a command's module loads only when it runs; the test
 * checks this set against each command's OPTIONS).
 */
export const JSON_COMMANDS: ReadonlySet<string> = new Set([
  'bench',
  'libraries',
  'models',
  'select',
  'snapshot',
])

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length))
  const lines = Object.entries(COMMANDS).map(
    ([name, [, summary]]) => `  ${name.padEnd(width)}  ${summary}`,
  )
  return `Usage: toolsel <command> [options]

Picks the tools an agent needs out of a large tool library (Plan-Retrieve-Select).

Commands:
${lines.join('\n')}

Run "toolsel <command> --help" for a command's options, "toolsel --version" for the version.
`
}

export async function main(argv: string[], io: CommandIO = defaultIO()): Promise<number> {
  const [name, ...rest] = argv
  // No command: a usage error as an unknown command is (usage on stderr, exit 2), so that
  // `toolsel $cmd` with $cmd empty fails in a script and `toolsel | less` pages nothing; git and
  // npm also fail (exit 1, though with the usage on stdout), docker prints it on stderr. Asking
  // for it (--help, help) is a success: stdout, exit 0.
  if (name === undefined) {
    io.stderr(`No command given.\n\n${usage()}`)
    return 2
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage())
    return 0
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.stdout(`toolsel ${packageJson.version}\n`)
    return 0
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (!command) {
    const synonym = Object.hasOwn(COMMAND_SYNONYMS, name) ? COMMAND_SYNONYMS[name] : undefined
    const closest = synonym ?? closestName(name, Object.keys(COMMANDS))
    const guess =
      closest === undefined
        ? ''
        : ` Did you mean "${closest}"${synonym === undefined ? '' : ` (${COMMANDS[synonym][1].toLowerCase()})`}?`
    io.stderr(`Unknown command "${name}".${guess}${optionFirstHint(argv)}\n\n${usage()}`)
    return 2
  }
  // An index directory's entry left alone is a warning line of the CLI's own, not Node's
  // "(node:1234) ToolselWarning: …" with its --trace-warnings hint; its name is the directory's
  // (anyone's), so printed terminal-safe. `serve` sends these to its logger instead.
  indexDirWarnings.report = (message) => io.stderr(`Warning: ${terminalLine(message)}\n`)
  // `<command> --help` (as the command's own flag parsing reads it: a refused flag beside it is
  // the command's error): printed from the help module, the command's own not loaded.
  const help = await command[2]()
  if (asksForHelp(rest, help.OPTIONS)) {
    io.stdout(`${help.HELP}\n`)
    return 0
  }
  const run = await command[0]()
  // `--json` (read from the words, so that a refused flag or value is reported as JSON too): a
  // failure is also `{"error":{"code","message"}}` on stdout, npm's way, for a script that parses
  // stdout; the line on stderr and the exit code are as without it.
  const json = JSON_COMMANDS.has(name) && wantsJson(rest)
  const fail = (code: string, message: string): void => {
    if (json) io.stdout(`${jsonText(JSON.stringify({ error: { code, message } }))}\n`)
    io.stderr(`error [${code}]: ${terminalText(message)}\n`)
  }
  try {
    return await run(rest, io)
  } catch (error) {
    // A message can quote a library (a tool id) or a server (its error text): terminalText.
    if (isToolselError(error)) {
      fail(error.code, error.message)
      return REFUSED_INPUT.has(error.code) ? 2 : 1
    }
    // A file system error no command wrapped (a path under a file, no permission, a full disk):
    // its message names the call and the path; a stack trace would only hide it.
    if (isSystemError(error)) {
      fail(error.code, error.message)
      return 1
    }
    // A bug: its stack on stderr as Node prints it (exit code 1), and with --json the error.
    if (json) {
      const message = errorMessage(error)
      io.stdout(`${jsonText(JSON.stringify({ error: { code: 'INTERNAL', message } }))}\n`)
    }
    throw error
  }
}

/** Whether `--json` is among a command's options (before a `--`, after which words are positional). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json')
}

/**
 * For options typed before the command (`toolsel --log-level debug select hi`): options go after
 * it; the command line again with the command first when one is there (terminal-safe: the words
 * are the user's).
 */
function optionFirstHint(argv: readonly string[]): string {
  if (!argv[0].startsWith('-')) return ''
  const at = argv.findIndex((word) => Object.hasOwn(COMMANDS, word))
  const words =
    at < 0
      ? ['<command>', shellWord(argv[0])]
      : [argv[at], ...argv.slice(0, at), ...argv.slice(at + 1)].map(shellWord)
  return terminalLine(` Options go after the command: toolsel ${words.join(' ')}`)
}

/**
 * Error codes that mean the command's input was refused (exit 2): a bad value, a bad setting, or
 * a planner, selector, retriever or model backend of a name that does not exist.
 */
const REFUSED_INPUT: ReadonlySet<string> = new Set([
  'INVALID_INPUT',
  'INVALID_CONFIG',
  'UNKNOWN_COMPONENT',
])

function isSystemError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    typeof (error as NodeJS.ErrnoException).syscall === 'string'
  )
}

function defaultIO(): CommandIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    stdin: process.stdin,
  }
}
