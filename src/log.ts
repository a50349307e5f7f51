/**
 * A small leveled logger writing one line per event to stderr (stdout stays free for command
 * output such as `--json` results). Components take a `Logger` option instead of importing a
 * global, so tests can capture what they log.
 * @module
 */

import { jsonText, logLineText } from './terminal-text.ts'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
  /**
   * One JSON object on one line (`{"time","level",...fields}`), for machine-read records such
   * as the HTTP access log; dropped below the logger's level like the others.
   */
  record(level: Exclude<LogLevel, 'silent'>, fields: Record<string, unknown>): void
  /** Whether lines at `level` are written (callers skip building what would be dropped). */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

/** How lines are written: `text` (`<time> <LEVEL> <message> {fields}`) or one JSON object each. */
export type LogFormat = 'text' | 'json'

export interface LoggerOptions {
  format?: LogFormat
  /** Fields on every `json` line (a `serve --workers` worker's `worker` id). */
  fields?: Record<string, unknown>
}

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  { format = 'text', fields: always = {} }: LoggerOptions = {},
): Logger {
  /** `{time, level, msg}` first; no field replaces them. */
  const jsonLine = (
    at: string,
    head: Record<string, unknown>,
    fields?: Record<string, unknown>,
  ) => {
    const line: Record<string, unknown> = { time: new Date().toISOString(), level: at, ...head }
    for (const [key, value] of Object.entries({ ...always, ...fields }))
      if (!(key in line)) line[key] = value
    return jsonText(JSON.stringify(line))
  }
  const emit = (
    at: Exclude<LogLevel, 'silent'>,
    message: string,
    fields?: Record<string, unknown>,
  ) => {
    if (RANK[at] < RANK[level]) return
    if (format === 'json') return write(jsonLine(at, { msg: message }, fields))
    const suffix = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : ''
    // A message can carry a tool's name, a request's path or an upstream's error text: no escape
    // sequence of theirs reaches the operator's terminal, no line break of theirs starts a line.
    write(logLineText(`${new Date().toISOString()} ${at.toUpperCase()} ${message}${suffix}`))
  }
  return {
    record: (at, fields) => {
      if (RANK[at] < RANK[level]) return
      if (format === 'json') return write(jsonLine(at, {}, fields))
      write(jsonText(JSON.stringify({ time: new Date().toISOString(), level: at, ...fields })))
    },
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    enabled: (at) => RANK[at] >= RANK[level],
  }
}

/**
 * `logger` with `fields` on every line it writes (a line's own fields win): a request's id on the
 * log lines its work causes (the write paths' errors and warnings), as on its access-log line.
 */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  const add = (own?: Record<string, unknown>) => ({ ...fields, ...own })
  return {
    record: (at, own) => logger.record(at, add(own)),
    debug: (message, own) => logger.debug(message, add(own)),
    info: (message, own) => logger.info(message, add(own)),
    warn: (message, own) => logger.warn(message, add(own)),
    error: (message, own) => logger.error(message, add(own)),
    enabled: (at) => logger.enabled(at),
  }
}

/** A logger that drops everything (library default when the caller passes none). */
export const SILENT_LOGGER: Logger = createLogger('silent')

/** A logger that keeps every event in memory, for tests. */
export function createMemoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  return Object.assign(
    createLogger('debug', (line) => lines.push(line)),
    { lines },
  )
}
