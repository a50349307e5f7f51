/**
 * Where an importer is in its input (file, record, line) and how it reports problems there, so
 * that every format words its errors and warnings the same way.
 * @module
 */
import { basename, extname } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { shownName } from '../name-characters.ts'
import { MAX_TOOL_TAGS, overFieldLimit } from '../tool-id-limit.ts'
import type { Tool, ToolSource } from '../tool.ts'
import { DEFAULT_MAX_TOOLS, type ImportFormat, type ProviderNames } from './import-formats.ts'

/** The name used in messages when text is imported without a file name. */
const UNNAMED_INPUT = '<input>'

export interface ImportContext {
  /** The input's name in messages: `inputName`, else the given file name, else `<input>`. */
  readonly file: string
  /**
   * The file name as given (detection reads its extension; its base name is `source.file`
   * unless `inputName` is given); absent for unnamed text.
   */
  readonly fileName?: string
  /** What the input is called in messages and `source.file` instead of `fileName` (`stdin`). */
  readonly inputName?: string
  /** The namespace option, if any. */
  readonly namespace?: string
  /** Tool names toolsel wrote (`sms--send_sms`): read back as ids (default) or kept. */
  readonly providerNames?: ProviderNames
  /**
   * 1-based line of each record, for JSON Lines and CSV input. When set, messages say
   * `line N`; otherwise they say `record N` with the 0-based position in the JSON array.
   */
  recordLines?: readonly number[]
  /** Most records the file may hold and tools the import may produce (`ImportOptions.maxTools`). */
  readonly maxTools: number
  /** Collected warnings, each already prefixed with the file name. */
  readonly warnings: string[]
  /** The first warning without the file name (`record 2: skipped …`), for the file's own error. */
  firstWarning?: string
}

/** A fresh context for one file (or one unnamed text); warnings start empty. */
export function createImportContext(options: {
  fileName?: string
  inputName?: string
  namespace?: string
  providerNames?: ProviderNames
  maxTools?: number
}): ImportContext {
  return {
    file: options.inputName ?? options.fileName ?? UNNAMED_INPUT,
    fileName: options.fileName,
    inputName: options.inputName,
    namespace: options.namespace,
    providerNames: options.providerNames,
    maxTools: options.maxTools ?? DEFAULT_MAX_TOOLS,
    warnings: [],
  }
}

/**
 * IMPORT_FAILED: the file holds more than `context.maxTools` records or tools (`what`: `records`
 * or `tools`, `where`: how far it was read), naming the key, env var and limit.
 */
export function tooManyTools(context: ImportContext, what: string, where = ''): ToolselError {
  const error = importFailed(context, {
    message: `more than ${context.maxTools} ${what}${where}: refused (library.maxTools, env TOOLSEL_MAX_TOOLS, raises the limit)`,
  })
  error.details.maxTools = context.maxTools
  return error
}

/** `line 4` (JSON Lines, CSV: 1-based line) or `record 3` (JSON: 0-based position). */
export function recordLabel(context: ImportContext, record: number): string {
  const line = context.recordLines?.[record]
  return line === undefined ? `record ${record}` : `line ${line}`
}

export interface ImportProblem {
  /** 0-based position of the record; absent for problems with the document as a whole. */
  record?: number
  /** Path of the bad field inside the record, e.g. `function.name` or `api_list[2].api_name`. */
  field?: string
  /** What is wrong, e.g. `expected a non-empty string, got 42`. */
  message: string
  cause?: unknown
  /** The format the message tells to import the file as (`details.suggestedFormat`), if any. */
  suggestedFormat?: ImportFormat
}

/**
 * IMPORT_FAILED worded as `file: line 4: field "name": expected …`, with the same facts in
 * `details` ({file, record, line, field}) for programs.
 */
export function importFailed(context: ImportContext, problem: ImportProblem): ToolselError {
  const parts = [context.file]
  if (problem.record !== undefined) parts.push(recordLabel(context, problem.record))
  if (problem.field !== undefined) parts.push(`field "${problem.field}"`)
  parts.push(problem.message)
  return new ToolselError('IMPORT_FAILED', parts.join(': '), {
    cause: problem.cause,
    details: {
      file: context.file,
      record: problem.record,
      line: problem.record === undefined ? undefined : context.recordLines?.[problem.record],
      field: problem.field,
      suggestedFormat: problem.suggestedFormat,
    },
  })
}

/**
 * IMPORT_FAILED at `record` when `tool` already holds MAX_TOOL_TAGS tags: a record repeating a
 * tool adds its category to the tool's tags (ToolBench, COLT corpora), each looked for among the
 * others, so a file repeating one tool with ever new categories was quadratic in its records.
 */
export function assertTagRoom(context: ImportContext, record: number, tool: Tool): void {
  const tags = tool.tags?.length ?? 0
  if (tags < MAX_TOOL_TAGS) return
  const error = importFailed(context, {
    record,
    message: `tool ${shownName(tool.id)} repeated with another category: ${overFieldLimit({ tool, field: 'tags', size: tags + 1, limit: MAX_TOOL_TAGS })}`,
  })
  Object.assign(error.details, { id: tool.id, field: 'tags', size: tags + 1, limit: MAX_TOOL_TAGS })
  throw error
}

/** Adds a warning worded like an error message (`file: line 4: …`). */
export function addWarning(context: ImportContext, record: number | undefined, message: string) {
  const where = record === undefined ? '' : `${recordLabel(context, record)}: `
  context.firstWarning ??= `${where}${message}`
  context.warnings.push(`${context.file}: ${where}${message}`)
}

/** The provenance every importer puts in `tool.source`: format, file, record and line. */
export function sourceOf(context: ImportContext, format: ImportFormat, record: number): ToolSource {
  const source: ToolSource = { format }
  // The base name: tools are served to every read key, the server's directories are not theirs.
  if (context.inputName !== undefined) source.file = context.inputName
  else if (context.fileName !== undefined) source.file = basename(context.fileName)
  source.record = record
  const line = context.recordLines?.[record]
  if (line !== undefined) source.line = line
  return source
}

/** The namespace option, else the file's base name without its extension (`github.json` → `github`). */
export function namespaceOrFileStem(context: ImportContext): string | undefined {
  if (context.namespace !== undefined) return context.namespace
  if (context.fileName === undefined) return undefined
  const name = basename(context.fileName)
  return name.slice(0, name.length - extname(name).length) || name
}
