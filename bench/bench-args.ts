/**
 * Command-line flags for the bench scripts, the way the `toolsel` CLI answers them: `--help` (or
 * `-h`) prints the script's usage on stdout and exits 0 before any work; an unknown flag, a flag
 * without its value or a bad value prints one line naming the flag (with the closest known one)
 * and "see --help" on stderr and exits 2, never a stack trace.
 *
 * The usage is the script's own module comment (what it measures, its command line), then its
 * flags with their defaults, then an example command from bench/README.md when the comment has
 * none. A library-only file in bench/ (no main) does not use this.
 * @module
 */
import { readFileSync } from 'node:fs'
import { basename, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { closestName } from '../src/config/closest-name.ts'

/** Exit status of a bad command line (as the CLI uses). */
const USAGE_EXIT = 2

/**
 * `parseArgs` (strict) for the script at `scriptUrl` (its `import.meta.url`), answering `--help`
 * and bad flags itself. Returns what `parseArgs` returns.
 */
export function benchArgs<T extends Omit<ParseArgsConfig, 'args' | 'strict'>>(
  scriptUrl: string,
  config: T,
  args: readonly string[] = process.argv.slice(2),
): ReturnType<typeof parseArgs<T & { strict: true }>> {
  const options = config.options ?? {}
  const helpFlags = new Set(['--help', '-h'])
  const end = args.indexOf('--')
  if ((end === -1 ? args : args.slice(0, end)).some((arg) => helpFlags.has(arg))) {
    process.stdout.write(benchUsage(scriptUrl, options))
    process.exit(0)
  }
  try {
    return parseArgs({ ...config, args: [...args], strict: true }) as ReturnType<
      typeof parseArgs<T & { strict: true }>
    >
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) throw error
    return usageError(scriptUrl, describeParseError(error as Error, code, options))
  }
}

/**
 * Prints `message` (one line, naming the flag) and "see --help" on stderr and exits 2: for a
 * flag value the script finds bad after parsing.
 */
export function usageError(scriptUrl: string, message: string): never {
  const script = scriptName(fileURLToPath(scriptUrl))
  process.stderr.write(`${script}: ${message.replace(/\s*\n\s*/g, ' ')} (see --help)\n`)
  process.exit(USAGE_EXIT)
}

/**
 * A flag's `value` as a whole number from `min` to `max`; anything else is a usage error naming
 * the flag (`--turns takes a whole number from 1 to 50, got "0"`, as `usageError`).
 */
export function wholeNumber(
  scriptUrl: string,
  flag: string,
  value: string | undefined,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const number = Number(value)
  if (value !== undefined && Number.isInteger(number) && number >= min && number <= max) {
    return number
  }
  const range = max === Number.MAX_SAFE_INTEGER ? `of ${min} or more` : `from ${min} to ${max}`
  return usageError(scriptUrl, `${flag} takes a whole number ${range}, got "${value ?? ''}"`)
}

type Options = NonNullable<ParseArgsConfig['options']>

function describeParseError(error: Error, code: string, options: Options): string {
  const known = Object.keys(options)
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(error.message)?.[1] ?? ''
    const name = flag.replace(/^-+/, '').split('=')[0]
    const hint = closestName(name, known)
    return `unknown flag ${flag}${hint === undefined ? '' : ` (did you mean --${hint}?)`}`
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /--[\w-]+/.exec(error.message)?.[0]
    if (flag !== undefined && options[flag.slice(2)]?.type === 'string') {
      return `${flag} needs a value (${flag} <value>)`
    }
    if (flag !== undefined) return `${flag} takes no value`
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const arg = /'([^']+)'/.exec(error.message)?.[1]
    return `unexpected argument ${arg ?? ''}`.trimEnd()
  }
  return error.message.split('\n')[0]
}

/** The usage text: the script's module comment, its flags with defaults, an example command. */
export function benchUsage(scriptUrl: string, options: Options): string {
  const path = fileURLToPath(scriptUrl)
  const script = scriptName(path)
  const about = moduleComment(readFileSync(path, 'utf8'))
  const lines = [about === '' ? script : about, '', 'Flags:']
  for (const [name, option] of Object.entries(options)) {
    const value = option.type === 'string' ? ' <value>' : ''
    const short = option.short === undefined ? '' : `-${option.short}, `
    const fallback =
      option.default === undefined
        ? ''
        : `  (default: ${option.default === '' ? '""' : String(option.default)})`
    lines.push(`  ${short}--${name}${value}${fallback}`)
  }
  lines.push('  -h, --help  this text')
  if (!about.includes(`tsx ${script}`)) {
    const example = readmeExample(
      join(path.slice(0, path.length - script.length), 'bench', 'README.md'),
      script,
    )
    lines.push('', 'Example:', `  ${example ?? `node --import tsx ${script}`}`)
  }
  return `${lines.join('\n')}\n`
}

/** `bench/<name>.ts` (or `bench/learn/<name>.ts`): the path from the repository root. */
function scriptName(path: string): string {
  const at = path.lastIndexOf(`${sep}bench${sep}`)
  return at === -1
    ? basename(path)
    : path
        .slice(at + 1)
        .split(sep)
        .join('/')
}

/** The leading `/** … *\/` comment, without its stars and `@module`. */
function moduleComment(source: string): string {
  const match = /^\s*\/\*\*([\s\S]*?)\*\//.exec(source)
  if (match === null) return ''
  return match[1]
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .filter((line) => !line.startsWith('@module'))
    .join('\n')
    .trim()
}

/** The first command line in bench/README.md that runs `script`. */
function readmeExample(readmePath: string, script: string): string | undefined {
  let readme: string
  try {
    readme = readFileSync(readmePath, 'utf8')
  } catch {
    return undefined
  }
  const pattern = new RegExp(`(?:npx tsx|node --import tsx) ${script.replace('.', '\\.')}[^\`\\n]*`)
  return pattern.exec(readme)?.[0].trimEnd()
}
