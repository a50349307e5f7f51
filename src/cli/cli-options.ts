/**
 * Flag parsing shared by the subcommands (node:util parseArgs) and the common flags every command
 * takes: --config, --print-config, --log-level, --help.
 * @module
 */
import cluster from 'node:cluster'
import { statSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { closestName } from '../config/closest-name.ts'
import { unknownEnvVarWarnings } from '../config/env-vars.ts'
import { loadConfig, type ConfigLayer } from '../config/load-config.ts'
import type { Config } from '../config/schema.ts'
import { errorMessage, ToolselError } from '../errors.ts'
import { decodeUtf8, InvalidUtf8Error, TextTooLongError } from '../read-text-file.ts'
import { createLogger, type Logger } from '../log.ts'
import { redactedUpstreamConfig } from '../mcp/gateway/upstream-redaction.ts'
import { MAX_TRAIN_EXAMPLES_LIMIT } from '../train/splits/example-limits.ts'
import { COMMON_OPTIONS, type OptionSpec } from './command-help.ts'

export type { OptionSpec } from './command-help.ts'
export {
  COMMON_HELP,
  COMMON_OPTIONS,
  HELP_WIDTH,
  maxExamplesHelp,
  maxFileBytesHelp,
  wrapHelp,
} from './command-help.ts'

export interface CommandIO {
  stdout: (text: string) => void
  stderr: (text: string) => void
  env: Record<string, string | undefined>
  /** Whether `stderr` is a terminal (progress redraws a bar there); default false. */
  stderrIsTTY?: boolean
  /** Standard input, for a `-` argument (`toolsel select -`); default none (read as empty). */
  stdin?: AsyncIterable<Buffer | string>
}

/**
 * Standard input as text, for a `-` argument: UTF-8 (a byte-order mark dropped), at most
 * `maxBytes` bytes, INVALID_INPUT `<what> from stdin is larger than …` past them (the rest
 * unread; `raiseHint` after it: how to raise the bound) or for bytes that are not UTF-8 (the
 * byte offset, from 0, and line of the first, as a tool file's error names them).
 */
export async function readStdinText(
  io: CommandIO,
  what: string,
  maxBytes: number,
  raiseHint = '',
): Promise<string> {
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of io.stdin ?? []) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    total += bytes.length
    if (total > maxBytes)
      throw new ToolselError(
        'INVALID_INPUT',
        `${what} from stdin is larger than ${maxBytes} bytes; nothing past that was read${raiseHint}`,
      )
    chunks.push(bytes)
  }
  try {
    return decodeUtf8(Buffer.concat(chunks))
  } catch (error) {
    // Where, as a tool file's and a request body's errors say it (was only "is not UTF-8 text").
    if (error instanceof InvalidUtf8Error)
      throw new ToolselError(
        'INVALID_INPUT',
        `${what} from stdin is not UTF-8 text at byte ${error.offset} (line ${error.line}): send it as UTF-8`,
        { cause: error, details: { byte: error.offset, line: error.line } },
      )
    // A maxBytes raised past ~512 MiB: was said "not UTF-8 text" (the decode's RangeError).
    if (!(error instanceof TextTooLongError)) throw error
    throw new ToolselError(
      'INVALID_INPUT',
      `${what} from stdin is too large to read as one text: ${error.message}`,
    )
  }
}

export { shellWord } from './shell-word.ts'

export interface ParsedCommand<T extends OptionSpec> {
  values: { [K in keyof T]?: T[K] extends { type: 'boolean' } ? boolean : string }
  positionals: string[]
}

export function parseCommand<T extends OptionSpec>(
  argv: string[],
  options: T,
  command: string,
): ParsedCommand<T & typeof COMMON_OPTIONS> {
  try {
    const parsed = parseArgs({
      args: argv,
      options: { ...COMMON_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    })
    return parsed as unknown as ParsedCommand<T & typeof COMMON_OPTIONS>
  } catch (error) {
    throw new ToolselError(
      'INVALID_INPUT',
      `${argumentProblem(error, Object.keys({ ...COMMON_OPTIONS, ...options }))}. See: toolsel ${command} --help`,
      { cause: error },
    )
  }
}

/**
 * parseArgs' message, except for an unknown option: Node's says how to pass a positional that
 * starts with '-' (`place it at the end of the command after '--'`), which a typo is not; ours
 * names the closest option (`Unknown option --libary (did you mean --library?)`).
 */
function argumentProblem(error: unknown, names: readonly string[]): string {
  const message = (error as Error).message
  if ((error as NodeJS.ErrnoException).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return message
  const option = /^Unknown option '([^']+)'/.exec(message)?.[1]
  if (option === undefined) return message
  const closest = option.startsWith('--') ? closestName(option.slice(2), names) : undefined
  return closest === undefined
    ? `Unknown option ${option} (a positional argument that starts with "-" goes after "--")`
    : `Unknown option ${option} (did you mean --${closest}?)`
}

/** Parses a numeric flag, naming the flag when it isn't a number. */
export function numberFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const number = Number(value)
  if (value.trim() === '' || !Number.isFinite(number)) {
    throw new ToolselError('INVALID_INPUT', `--${flag} expects a number, got "${value}".`)
  }
  return number
}

/** `--max-file-bytes <n>` (library.maxFileBytes): a whole number of bytes above 0. */
export function maxFileBytesFlag(value: string | undefined): number | undefined {
  const bytes = numberFlag(value, 'max-file-bytes')
  if (bytes === undefined || (Number.isSafeInteger(bytes) && bytes > 0)) return bytes
  throw new ToolselError(
    'INVALID_INPUT',
    `--max-file-bytes expects a whole number of bytes above 0, got "${value}".`,
  )
}

/**
 * `--max-examples <n>` of train and train-data: most examples an examples file may hold, a whole
 * number from 1 to MAX_TRAIN_EXAMPLES_LIMIT (default MAX_TRAIN_EXAMPLES).
 */
export function maxExamplesFlag(value: string | undefined): number | undefined {
  const count = numberFlag(value, 'max-examples')
  if (
    count === undefined ||
    (Number.isInteger(count) && count >= 1 && count <= MAX_TRAIN_EXAMPLES_LIMIT)
  )
    return count
  throw new ToolselError(
    'INVALID_INPUT',
    `--max-examples expects a whole number from 1 to ${MAX_TRAIN_EXAMPLES_LIMIT}, got "${value}".`,
  )
}

/**
 * A `--data <dir>` the user typed must be a directory: a typo otherwise skipped every suite
 * (bench exited 0 with the demo only) or failed on the first missing file (train).
 */
export function dataDirFlag(value: string | undefined, command: string): string | undefined {
  if (value === undefined) return undefined
  if (!statSync(value, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ToolselError(
      'INVALID_INPUT',
      `--data "${value}" is not a directory (the benchmark data root, e.g. ../shared/data). See: toolsel ${command} --help`,
    )
  }
  return value
}

/** Loads the config for a command: defaults < file < env < these flags. */
export async function commandConfig(
  values: { config?: string; 'log-level'?: string },
  flags: ConfigLayer,
  io: CommandIO,
  files: Array<{ source: string; layer: ConfigLayer }> = [],
): Promise<{ config: Config; logger: Logger }> {
  const config = await loadConfig({
    file: values.config,
    env: io.env,
    flags: { ...flags, 'log.level': values['log-level'] },
    files,
  })
  const logger = createLogger(config.log.level, (line) => io.stderr(`${line}\n`), {
    format: config.log.format,
    fields: cluster.isWorker ? { worker: cluster.worker!.id } : undefined,
  })
  if (config.log.format === 'json') logProcessEventsAsJson(logger)
  // Once per command: `serve --workers N` workers inherit the environment the primary checked.
  if (!cluster.isWorker) for (const warning of unknownEnvVarWarnings(io.env)) logger.warn(warning)
  return { config, logger }
}

let processEventsLogged = false

/**
 * `log.format: json`: Node's warnings (its default prints `(node:<pid>) Name: message` and more
 * lines) and an uncaught exception's stack (printed over several lines, then exit code 1) become
 * one JSON line each through `logger`, so a log shipper reading JSON lines loses none of them.
 * Once per process.
 */
function logProcessEventsAsJson(logger: Logger): void {
  if (processEventsLogged) return
  processEventsLogged = true
  process.removeAllListeners('warning')
  process.on('warning', (warning) =>
    logger.warn(`${warning.name}: ${warning.message}`, { warning: warning.name }),
  )
  process.on('uncaughtException', (error) => {
    logger.error(`Uncaught exception: ${errorMessage(error)}`, {
      stack: error instanceof Error ? error.stack : undefined,
    })
    process.exit(1)
  })
}

/**
 * `--print-config`: the merged config on stdout, every secret replaced by `***` (the output ends up
 * in bug reports and CI logs); the command then does nothing else (exit 0).
 */
export function printConfig(config: Config, io: CommandIO): number {
  io.stdout(`${redactedConfigJson(config)}\n`)
  return 0
}

/** The config as JSON with every secret replaced by `***`. */
function redactedConfigJson(config: Config): string {
  const copy = structuredClone(config)
  if (copy.auth.adminKey) copy.auth.adminKey = '***'
  copy.auth.readKeys = copy.auth.readKeys.map((key) => ({ ...key, key: '***' }))
  if (copy.models.openai.apiKey) copy.models.openai.apiKey = '***'
  // A gateway file's env, headers, URL credentials and credential flags (often secrets).
  for (const [name, server] of Object.entries(copy.gateway.servers))
    copy.gateway.servers[name] = redactedUpstreamConfig(server)
  return JSON.stringify(copy, null, 2)
}
