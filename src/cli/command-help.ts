/**
 * The help and the flags of `toolsel command`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { MAX_TRAIN_EXAMPLES, MAX_TRAIN_EXAMPLES_LIMIT } from '../train/splits/example-limits.ts'

export type OptionSpec = NonNullable<ParseArgsConfig['options']>

export const COMMON_OPTIONS = {
  config: { type: 'string' },
  'print-config': { type: 'boolean' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpec

export const COMMON_HELP = `Common options:
  --config <file>      JSON config file (also TOOLSEL_CONFIG)
  --print-config       Print the merged configuration and exit
  --log-level <level>  debug, info, warn, error or silent
  -h, --help           Show this help`

/** The widest line of a command's help (README: CLI lines ≤ 100 columns). */
export const HELP_WIDTH = 100

/**
 * `text` wrapped at word boundaries into lines of at most HELP_WIDTH columns, its first line
 * starting at column `first` (after text already on that line) and each further line indented
 * by `indent` spaces: for help lines built from a list that grows (formats, suites).
 */
export function wrapHelp(text: string, first: number, indent: number): string {
  const lines: string[] = []
  let line = ''
  let column = first
  for (const word of text.split(' ')) {
    if (line !== '' && column + 1 + word.length > HELP_WIDTH) {
      lines.push(line)
      line = ''
      column = indent
    }
    column += (line === '' ? 0 : 1) + word.length
    line = line === '' ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.join(`\n${' '.repeat(indent)}`)
}

/**
 * The help lines of `--max-file-bytes`, for each command that reads tool files, its text starting
 * at `column` (the command's other options').
 */
export function maxFileBytesHelp(column: number, after = ''): string {
  const flag = '  --max-file-bytes <n>'
  const indent = ' '.repeat(column)
  return [
    `${flag.padEnd(column - 1)} Largest tool file read, in bytes (default 268435456, 256 MiB,`,
    `${indent}env TOOLSEL_MAX_FILE_BYTES): a larger one (or a device that never`,
    `${indent}ends, /dev/zero) is refused after that many bytes${after}`,
  ].join('\n')
}

/** The help lines of `--max-examples`, its text starting at `column`. */
export function maxExamplesHelp(column: number): string {
  const flag = '  --max-examples <n>'
  const indent = ' '.repeat(column)
  return [
    `${flag.padEnd(column - 1)} Most examples the --examples file may hold (default ${MAX_TRAIN_EXAMPLES},`,
    `${indent}at most ${MAX_TRAIN_EXAMPLES_LIMIT}): a file with more is refused when the`,
    `${indent}reading passes that many, the rest unread`,
  ].join('\n')
}

/**
 * Whether `argv` asks for the help as a command's flag parsing (cli-options.ts' parseCommand)
 * reads it with `options`: false when that parsing refuses it, so that the command reports it.
 */
export function asksForHelp(argv: readonly string[], options: OptionSpec): boolean {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { ...COMMON_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    })
    return values.help === true
  } catch {
    return false
  }
}
