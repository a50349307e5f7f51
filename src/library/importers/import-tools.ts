/**
 * Importing tools from text or a file: detect (or take) the format, run its importer, check
 * that the result is a usable library (not empty, unique ids).
 * @module
 */
import { isToolselError, ToolselError } from '../../errors.ts'
import {
  assertParameterShape,
  MAX_PARAMETER_KEYS,
  MAX_PARAMETER_VALUES,
  type Tool,
} from '../tool.ts'
import { escapedName, shownName, unshowableTools } from '../name-characters.ts'
import { normalizeToolSchema } from '../schema/normalize-schema.ts'
import { schemaErrors } from '../schema/validate-schema.ts'
import { duplicateToolId } from './assert-unique-ids.ts'
import {
  firstTooLongId,
  firstOverFieldLimit,
  firstTooLongName,
  MAX_TOOL_ID_CHARS,
  MAX_TOOL_NAME_CHARS,
  overFieldLimit,
  toolIdTooLong,
  toolNameTooLong,
} from '../tool-id-limit.ts'
import { importAnthropic } from './anthropic-importer.ts'
import { importBeirCorpus } from './beir-corpus-importer.ts'
import { importCanonical } from './canonical-importer.ts'
import { importCraft } from './craft-importer.ts'
import { sniffText, uploadFileName } from './detect-format.ts'
import { importFunctions } from './functions-importer.ts'
import { importGorilla } from './gorilla-importer.ts'
import {
  addWarning,
  createImportContext,
  importFailed,
  tooManyTools,
  type ImportContext,
} from './import-context.ts'
import {
  IMPORT_FORMAT_NAMES,
  ON_DUPLICATE_CHOICES,
  type ImportFormat,
  type ImportOptions,
  type ImportResult,
  type InvalidSchema,
  type SchemaChange,
} from './import-formats.ts'
import { importMcp } from './mcp-importer.ts'
import { importOpenai } from './openai-importer.ts'
import { importOpenapi } from './openapi-importer.ts'
import { resolveDuplicates } from './resolve-duplicates.ts'
import { importPostman } from './postman-importer.ts'
import { importTaskbench } from './taskbench-importer.ts'
import { importToolbench } from './toolbench-importer.ts'
import {
  fileProblem,
  FileTooLargeError,
  InvalidUtf8Error,
  MAX_TEXT_CHARS,
  NotRegularFileError,
  readUtf8FileUpTo,
  TextTooLongError,
} from '../../read-text-file.ts'

type JsonImporter = (parsed: unknown, context: ImportContext) => Tool[]

/** The importer of every JSON format; craft reads CSV text and openapi is asynchronous. */
const JSON_IMPORTERS: Readonly<Record<Exclude<ImportFormat, 'craft' | 'openapi'>, JsonImporter>> = {
  canonical: importCanonical,
  functions: importFunctions,
  openai: importOpenai,
  anthropic: importAnthropic,
  mcp: importMcp,
  toolbench: importToolbench,
  'beir-corpus': importBeirCorpus,
  gorilla: importGorilla,
  taskbench: importTaskbench,
  postman: importPostman,
}

/** Shown in warnings: how many schema changes or problems are spelled out before "…". */
const LISTED_IN_WARNINGS = 3

/**
 * Imports tools from text (an HTTP upload, a string in a test), any format. Pass `fileName`
 * when there is one: it is used in messages, for detection and as the default namespace.
 * Throws IMPORT_FAILED, DUPLICATE_TOOL_ID or UNKNOWN_FORMAT; the whole import fails on the first
 * bad record.
 */
export async function importTools(
  text: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const { context, format, parsed } = start(text, options)
  try {
    const imported =
      format !== 'openapi'
        ? importSync(text, format, parsed, context)
        : await importOpenapi(parsed, context)
    warnOfDetectedFormat(context, text, options)
    return finish(imported, format, context, options)
  } catch (error) {
    throw withDetectedFormat(error, text, options)
  }
}

/**
 * `importTools` for every format but `openapi`, whose `$ref` resolution is asynchronous (an
 * OpenAPI spec here fails with IMPORT_FAILED pointing to `importTools`).
 */
export function importToolsFromText(text: string, options: ImportOptions = {}): ImportResult {
  const { context, format, parsed } = start(text, options)
  if (format === 'openapi') {
    throw importFailed(context, {
      message: 'OpenAPI specs are imported asynchronously: use importTools or importToolsFromFile',
    })
  }
  try {
    const imported = importSync(text, format, parsed, context)
    warnOfDetectedFormat(context, text, options)
    return finish(imported, format, context, options)
  } catch (error) {
    throw withDetectedFormat(error, text, options)
  }
}

/**
 * A file imported with a format it is not (`--format mcp` on OpenAI tools) fails on a field of
 * the format it was told (`field "name": expected a non-empty string`); when detection names
 * another format, the error says so, which is what to do.
 */
function withDetectedFormat(error: unknown, text: string, options: ImportOptions): unknown {
  if (options.format === undefined || !isToolselError(error, 'IMPORT_FAILED')) return error
  // The importer already named the format to use.
  if (error.details.suggestedFormat !== undefined) return error
  const detected = otherDetectedFormat(text, options)
  if (detected === undefined) return error
  return new ToolselError(
    'IMPORT_FAILED',
    `${error.message.replace(/\.$/, '')}. The file looks like ${detected}, not ${options.format}: import it as ${detected} (or leave the format to detection).`,
    { cause: error.cause, details: { ...error.details, detectedFormat: detected } },
  )
}

/**
 * The same for an import that went through with warnings (`--format functions` on Anthropic tools:
 * each `input_schema` is not read, "rename it parameters"): one more warning names the format the
 * file looks like. Imports without warnings are not re-detected.
 */
function warnOfDetectedFormat(context: ImportContext, text: string, options: ImportOptions): void {
  if (options.format === undefined || context.warnings.length === 0) return
  const detected = otherDetectedFormat(text, options)
  if (detected === undefined) return
  addWarning(
    context,
    undefined,
    `the file looks like ${detected}, not ${options.format}: import it as ${detected} (or leave the format to detection)`,
  )
}

/** The format detection gives `text` when it is not the one asked for; undefined otherwise. */
function otherDetectedFormat(text: string, options: ImportOptions): ImportFormat | undefined {
  try {
    const { format } = sniffText(text, createImportContext({ fileName: options.fileName }))
    return format === options.format ? undefined : format
  } catch {
    return undefined
  }
}

/** The largest tool file read by default (`maxFileBytes`): far above any real spec or dump. */
export const DEFAULT_MAX_TOOL_FILE_BYTES = 256 * 1024 * 1024

/**
 * Reads a file (UTF-8, `maxFileBytes` at most; bytes that are not UTF-8 are IMPORT_FAILED naming
 * the first one's offset and line) and imports it; `fileName` defaults to the path as given.
 * A file that cannot be read (missing, a directory, a FIFO, no permission) is INVALID_INPUT.
 */
export async function importToolsFromFile(
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  let text: string
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_TOOL_FILE_BYTES
  try {
    text = await readUtf8FileUpTo(path, maxBytes, { regularOnly: options.regularOnly })
  } catch (error) {
    if (error instanceof InvalidUtf8Error) {
      // Read as U+FFFD before: a Latin-1 file imported with its accents silently replaced.
      throw new ToolselError(
        'IMPORT_FAILED',
        `Tool file "${path}" is not UTF-8 text at byte ${error.offset} (line ${error.line}): save it as UTF-8. Nothing was imported.`,
        { cause: error, details: { file: path, line: error.line, byte: error.offset } },
      )
    }
    if (error instanceof TextTooLongError) {
      throw new ToolselError(
        'IMPORT_FAILED',
        `Tool file "${path}" is too large to import as one file: ${error.message}. Split its tools into several files in a directory and import the directory. Nothing was imported.`,
        { cause: error, details: { file: path, chars: error.chars, maxChars: MAX_TEXT_CHARS } },
      )
    }
    if (error instanceof FileTooLargeError) {
      throw new ToolselError(
        'IMPORT_FAILED',
        `Tool file "${path}" is larger than ${maxBytes} bytes: refused without reading it whole (library.maxFileBytes, env TOOLSEL_MAX_FILE_BYTES, or --max-file-bytes <n> raises the limit).`,
        { cause: error, details: { file: path, maxFileBytes: maxBytes } },
      )
    }
    // A path that names no readable file is input refused (exit 2), like an --examples or a
    // benchmark file that is not there; a file read whose tools do not import is IMPORT_FAILED.
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot read tool file "${path}": ${error instanceof NotRegularFileError ? `${error.message}; nothing was read` : fileProblem(error)}`,
      { cause: error, details: { file: path } },
    )
  }
  return importTools(text, { ...options, fileName: options.fileName ?? path })
}

function start(text: string, options: ImportOptions) {
  assertKnownFormat(options.format)
  assertKnownOnDuplicate(options.onDuplicate)
  const fileName =
    options.fileName ??
    (options.uploadName === undefined ? undefined : uploadFileName(options.uploadName, text))
  const context = createImportContext({ ...options, fileName })
  const { format, parsed } = sniffText(text, context, options.format)
  return { context, format, parsed: parsed?.value }
}

function importSync(
  text: string,
  format: Exclude<ImportFormat, 'openapi'>,
  parsed: unknown,
  context: ImportContext,
): Tool[] {
  return format === 'craft' ? importCraft(text, context) : JSON_IMPORTERS[format](parsed, context)
}

/** Checks the result is a library (not empty, ids unique or resolved) and normalises schemas. */
function finish(
  imported: Tool[],
  format: ImportFormat,
  context: ImportContext,
  options: ImportOptions,
): ImportResult {
  if (imported.length > context.maxTools) {
    throw tooManyTools(context, 'tools', ` (${imported.length} imported)`)
  }
  if (imported.length === 0) {
    // Every record skipped (built-in or server tools…): say why, or the import looks like a bug.
    const skipped = context.warnings.length
    const why = skipped === 0 ? '' : ` (${skipped} warning(s), the first: ${context.firstWarning})`
    throw importFailed(context, {
      message: `no tools found in this ${format} file${why}; a library needs at least one`,
    })
  }
  const { tools, duplicates } = resolveDuplicates(
    imported,
    options.onDuplicate ?? 'error',
    () => context.file,
    (id, first, second) =>
      duplicateToolId(context, id, recordOf(first, imported), recordOf(second, imported), [
        first,
        second,
      ]),
  )
  assertIdLengths(tools, imported, context)
  assertNameLengths(tools, imported, context)
  assertFieldLimits(tools, imported, context)
  const summarized: string[] = []
  if (duplicates.length > 0) {
    const counts = { renamed: 0, dropped: 0, identical: 0 }
    for (const entry of duplicates) counts[entry.action] += 1
    addWarning(
      context,
      undefined,
      `duplicate ids (--on-duplicate ${options.onDuplicate}): ${counts.renamed} renamed, ${counts.dropped} dropped, ${counts.identical} identical copies dropped`,
    )
    summarized.push(context.warnings.at(-1)!)
  }
  warnOfUnshowableNames(tools, context)
  const { schemaChanges, invalidSchemas } = normalizeSchemas(tools, context, summarized)
  return {
    tools,
    format,
    warnings: context.warnings,
    summarized,
    files: [{ file: context.file, format, tools: tools.length }],
    duplicates,
    schemaChanges,
    invalidSchemas,
  }
}

/**
 * Rewrites every tool's parameters into JSON Schema where needed (`normalizeToolSchema`) and
 * checks them with ajv; both are summarised as warnings and listed in full in the result.
 */
export function normalizeSchemas(
  tools: Tool[],
  context: ImportContext,
  summarized: string[] = [],
): { schemaChanges: SchemaChange[]; invalidSchemas: InvalidSchema[] } {
  const schemaChanges: SchemaChange[] = []
  const invalidSchemas: InvalidSchema[] = []
  for (const tool of tools) {
    // Deeper schemas would overflow the stack of the rewrite and of ajv, larger ones hold the
    // import (and every answer with schemas) for long: refuse them first.
    assertParameterShape(tool.id, tool.parameters, MAX_PARAMETER_VALUES, MAX_PARAMETER_KEYS)
    const { schema, changes } = normalizeToolSchema(tool.parameters)
    if (changes.length > 0) {
      tool.parameters = schema
      schemaChanges.push({ id: tool.id, changes })
    }
    const errors = schemaErrors(tool.parameters)
    if (errors.length > 0) invalidSchemas.push({ id: tool.id, errors })
  }
  if (schemaChanges.length > 0) {
    const listed = schemaChanges
      .slice(0, LISTED_IN_WARNINGS)
      .map(
        ({ id, changes }) =>
          `${escapedName(id)}: ${changes[0]}${changes.length > 1 ? ` (+${changes.length - 1})` : ''}`,
      )
    addWarning(
      context,
      undefined,
      `parameters of ${schemaChanges.length} tool(s) rewritten into JSON Schema: ${listed.join('; ')}${schemaChanges.length > LISTED_IN_WARNINGS ? '; …' : ''}`,
    )
    summarized.push(context.warnings.at(-1)!)
  }
  if (invalidSchemas.length > 0) {
    const listed = invalidSchemas
      .slice(0, LISTED_IN_WARNINGS)
      .map(({ id, errors }) => `${escapedName(id)}: ${errors[0]}`)
    addWarning(
      context,
      undefined,
      `parameters of ${invalidSchemas.length} tool(s) are not valid JSON Schema (imported as they are; fix them at the source): ${listed.join('; ')}${invalidSchemas.length > LISTED_IN_WARNINGS ? '; …' : ''}`,
    )
    summarized.push(context.warnings.at(-1)!)
  }
  return { schemaChanges, invalidSchemas }
}

/**
 * One warning listing the tools whose name or id holds a control character, a bidi override or
 * isolate, or a lone surrogate (`refusedNameCharacter`): such a tool may display as another one.
 * They are imported as they are, not refused: real catalogs hold such names (a ToolBench API name
 * with a U+0008), and refusing would fail a whole library or benchmark suite over one tool while
 * its id stays what gold answers name. Uploads need the admin key; the MCP gateway, whose
 * upstreams are not trusted, skips such tools instead (upstream-tools.ts). Names are not checked
 * for length here: past MAX_TOOL_NAME_CHARS (500) they are refused (`assertNameLengths`); the
 * gateway's 128 is MCP's, and real ToolBench names exceed it.
 */
function warnOfUnshowableNames(tools: readonly Tool[], context: ImportContext): void {
  const listed: string[] = []
  let count = 0
  for (const { tool, fields } of unshowableTools(tools)) {
    count += 1
    if (listed.length < LISTED_IN_WARNINGS) {
      const problems = fields.map(
        ({ field, codePoint, index }) => `${field} holds ${codePoint} at ${index}`,
      )
      listed.push(`${shownName(tool.id)}: ${problems.join(', ')}`)
    }
  }
  if (count === 0) return
  addWarning(
    context,
    undefined,
    `${count} tool(s) have an id or name holding a control character, bidi override or isolate, or lone surrogate (imported as they are; such a tool may display as another one): ${listed.join('; ')}${count > LISTED_IN_WARNINGS ? '; …' : ''}. Rename them at the source; they are shown escaped in CLI output and logs.`,
  )
}

/** Said of a too long id that `onDuplicate: rename` made. */
export const RENAMED = ' once renamed (--on-duplicate rename adds _N to a repeated id)'

/**
 * IMPORT_FAILED for the first tool whose id (after any `onDuplicate` rename) is longer than
 * MAX_TOOL_ID_CHARS: no request could name it (tool-id-limit.ts). Ids are never cut: two long
 * ids cut alike would become one.
 */
function assertIdLengths(
  tools: readonly Tool[],
  imported: readonly Tool[],
  context: ImportContext,
) {
  const long = firstTooLongId(tools)
  if (long === undefined) return
  throw failedAt(
    long,
    imported,
    context,
    `${toolIdTooLong(long.id)}${imported.includes(long) ? '' : RENAMED}: shorten the name or id it is made from`,
    { maxToolIdChars: MAX_TOOL_ID_CHARS },
  )
}

/**
 * IMPORT_FAILED for the first tool whose name, namespace, a tag or MCP title is longer than
 * MAX_TOOL_NAME_CHARS (tool-id-limit.ts), naming the tool, the field and the limit. Every import
 * comes here: files and directories (`toolsel index`), uploads (PUT/POST /v1/libraries) and the
 * gateway's upstream tools/list.
 */
function assertNameLengths(
  tools: readonly Tool[],
  imported: readonly Tool[],
  context: ImportContext,
) {
  const long = firstTooLongName(tools)
  if (long === undefined) return
  const { tool, field, length } = long
  throw failedAt(
    tool,
    imported,
    context,
    `tool ${shownName(tool.id)}: ${toolNameTooLong(long)}: shorten it at the source`,
    {
      id: tool.id.slice(0, MAX_TOOL_ID_CHARS),
      field,
      length,
      maxToolNameChars: MAX_TOOL_NAME_CHARS,
    },
  )
}

/**
 * IMPORT_FAILED for the first tool holding more than MAX_TOOL_TAGS tags, a description longer
 * than MAX_TOOL_DESCRIPTION_CHARS or `source` metadata longer than MAX_TOOL_SOURCE_CHARS as JSON
 * (tool-id-limit.ts), naming the tool, the field, its size and
 * the limit; every import, as `assertNameLengths` (the gateway skips such an upstream tool).
 */
function assertFieldLimits(
  tools: readonly Tool[],
  imported: readonly Tool[],
  context: ImportContext,
) {
  const over = firstOverFieldLimit(tools)
  if (over === undefined) return
  const { tool, field, size, limit } = over
  throw failedAt(
    tool,
    imported,
    context,
    `tool ${shownName(tool.id)}: ${overFieldLimit(over)}: shorten it at the source`,
    { id: tool.id.slice(0, MAX_TOOL_ID_CHARS), field, size, limit },
  )
}

/** IMPORT_FAILED at `tool`'s record of `imported` (none when a rename made it), with `details`. */
function failedAt(
  tool: Tool,
  imported: readonly Tool[],
  context: ImportContext,
  message: string,
  details: Record<string, unknown>,
): ToolselError {
  const record = recordOf(tool, imported)
  const error = importFailed(context, { record: record >= 0 ? record : undefined, message })
  Object.assign(error.details, details)
  return error
}

function recordOf(tool: Tool, tools: readonly Tool[]): number {
  return typeof tool.source?.record === 'number' ? tool.source.record : tools.indexOf(tool)
}

function assertKnownOnDuplicate(mode: string | undefined): void {
  if (mode === undefined || (ON_DUPLICATE_CHOICES as string[]).includes(mode)) return
  throw new ToolselError(
    'INVALID_INPUT',
    `Unknown on-duplicate mode "${mode}"; use one of ${ON_DUPLICATE_CHOICES.join(', ')}.`,
    { details: { onDuplicate: mode, choices: ON_DUPLICATE_CHOICES } },
  )
}

/** Format names come from JSON bodies and CLI flags too, so the type alone is no guarantee. */
function assertKnownFormat(format: string | undefined): void {
  if (format === undefined || (IMPORT_FORMAT_NAMES as string[]).includes(format)) return
  throw new ToolselError(
    'UNKNOWN_FORMAT',
    `Unknown tool format "${format}"; use one of ${IMPORT_FORMAT_NAMES.join(', ')}, or omit it to detect the format.`,
    { details: { format, formats: IMPORT_FORMAT_NAMES } },
  )
}
