/**
 * Format detection. The rules, in order:
 * 1. A `.csv` file is `craft` (the only CSV format); so is text whose first line is a CSV header
 *    with `tool_id` and `tool` columns.
 * 2. Everything else must be JSON (`.jsonl`: JSON Lines; otherwise one document, or JSON Lines
 *    when that fails line by line, see `parseJsonText`). Then the shape decides:
 *    - an object with `jsonrpc` or `result.tools` → `mcp`; with a `nodes` array → `taskbench`;
 *      with a `tools` array → its first tool decides between `canonical`, `openai` and `mcp`;
 *    - an array or JSON Lines → its first record decides, by the keys in `ITEM_RULES`;
 *    - any other object is read as a list of one record when exactly one item rule fits it (a
 *      one-line JSON Lines file without its `.jsonl` name, a single pasted tool).
 * 3. No rule, or more than one, matches → UNKNOWN_FORMAT listing the formats. An empty file or
 *    an empty list → IMPORT_FAILED (there is nothing to import, whatever the format).
 * @module
 */
import { extname } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { createImportContext, importFailed, type ImportContext } from './import-context.ts'
import { IMPORT_FORMATS, IMPORT_FORMAT_NAMES, type ImportFormat } from './import-formats.ts'
import { parseJsonText, stripByteOrderMark, type ParsedJsonText } from './parse-json-text.ts'

type Item = Record<string, unknown>

/** What the first record of an array (or the first tool of `{tools}`) looks like, per format. */
const ITEM_RULES: ReadonlyArray<{ format: ImportFormat; matches: (item: Item) => boolean }> = [
  { format: 'canonical', matches: (item) => isString(item.id) && isString(item.name) },
  { format: 'openai', matches: (item) => item.type === 'function' },
  { format: 'mcp', matches: (item) => 'inputSchema' in item },
  { format: 'toolbench', matches: (item) => Array.isArray(item.api_list) },
  { format: 'beir-corpus', matches: (item) => isString(item._id) && isString(item.text) },
  { format: 'gorilla', matches: (item) => 'api_call' in item && 'api_name' in item },
]

/** Formats that may wrap their tools as `{"tools": [...]}`. */
const TOOLS_WRAPPER_FORMATS: ReadonlySet<ImportFormat> = new Set(['canonical', 'openai', 'mcp'])

/**
 * Detects the format of a tool file from its name and content.
 * Throws UNKNOWN_FORMAT naming the file and what was seen, or IMPORT_FAILED for empty or
 * malformed input.
 */
export function detectFormat(text: string, fileName?: string): ImportFormat {
  return sniffText(text, createImportContext({ fileName })).format
}

/**
 * Parses the text as far as the format needs (CSV is left to the craft importer) and detects the
 * format unless one is given. Shared by `detectFormat` and the import functions, so the text is
 * parsed once.
 */
export function sniffText(
  text: string,
  context: ImportContext,
  format?: ImportFormat,
): { format: ImportFormat; parsed?: ParsedJsonText } {
  if (stripByteOrderMark(text).trim() === '') {
    throw importFailed(context, { message: 'the file is empty; it has no tools to import' })
  }
  const extension = extname(context.fileName ?? '').toLowerCase()
  if (format === 'craft') return { format }
  if (format === undefined) {
    if (extension === '.csv') return { format: 'craft' }
    const start = stripByteOrderMark(text).trimStart()[0]
    if (extension !== '.json' && extension !== '.jsonl' && start !== '{' && start !== '[') {
      if (looksLikeCraftCsv(text)) return { format: 'craft' }
      // Not JSON-looking and not named JSON: a parse error would only confuse, so say what it is.
      if (!isJson(text)) {
        throw unknownFormat(context, 'text that is neither JSON, JSON Lines nor a CRAFT CSV')
      }
    }
  }
  const parsed = parseJsonText(text, context, extension === '.jsonl' ? 'lines' : 'auto')
  context.recordLines = parsed.recordLines
  if (format === undefined) return detectJsonFormat(parsed, context)
  const fitsOneRecord = ITEM_RULES.some(
    (rule) => rule.format === format && rule.matches(parsed.value as Item),
  )
  return {
    format,
    parsed: isObject(parsed.value) && fitsOneRecord ? { value: [parsed.value] } : parsed,
  }
}

function detectJsonFormat(
  parsed: ParsedJsonText,
  context: ImportContext,
): { format: ImportFormat; parsed: ParsedJsonText } {
  const { value } = parsed
  if (Array.isArray(value)) {
    const container = parsed.recordLines
      ? 'JSON Lines whose first record'
      : 'a JSON array whose first item'
    return { format: detectItemFormat(value, container, context, IMPORT_FORMAT_NAMES), parsed }
  }
  if (!isObject(value)) throw unknownFormat(context, `a JSON ${jsonType(value)}`)
  if ('jsonrpc' in value || (isObject(value.result) && Array.isArray(value.result.tools))) {
    return { format: 'mcp', parsed }
  }
  if (Array.isArray(value.nodes)) return { format: 'taskbench', parsed }
  if (Array.isArray(value.tools)) {
    const allowed = IMPORT_FORMAT_NAMES.filter((name) => TOOLS_WRAPPER_FORMATS.has(name))
    const container = 'a JSON object whose first "tools" item'
    return { format: detectItemFormat(value.tools, container, context, allowed), parsed }
  }
  const fits = ITEM_RULES.filter((rule) => rule.matches(value)).map((rule) => rule.format)
  if (fits.length === 1) return { format: fits[0], parsed: { value: [value] } }
  throw unknownFormat(context, `a JSON object with ${keyList(value)}`)
}

function detectItemFormat(
  items: unknown[],
  container: string,
  context: ImportContext,
  allowed: readonly ImportFormat[],
): ImportFormat {
  if (items.length === 0) {
    throw importFailed(context, { message: 'the tool list is empty; it has no tools to import' })
  }
  const first = items[0]
  if (!isObject(first)) throw unknownFormat(context, `${container} is a ${jsonType(first)}`)
  const matches = ITEM_RULES.filter(
    (rule) => allowed.includes(rule.format) && rule.matches(first),
  ).map((rule) => rule.format)
  if (matches.length === 1) return matches[0]
  const seen = `${container} has ${keyList(first)}`
  if (matches.length === 0) throw unknownFormat(context, seen)
  throw unknownFormat(context, `${seen}, which fits more than one format (${matches.join(', ')})`)
}

function unknownFormat(context: ImportContext, seen: string): ToolselError {
  const formats = IMPORT_FORMAT_NAMES.map((name) => `${name}: ${IMPORT_FORMATS[name].description}`)
  return new ToolselError(
    'UNKNOWN_FORMAT',
    `${context.file}: cannot tell the tool format; saw ${seen}. Known formats:\n  ` +
      `${formats.join('\n  ')}\nPass the format explicitly (one of ${IMPORT_FORMAT_NAMES.join(', ')}).`,
    { details: { file: context.file, seen, formats: IMPORT_FORMAT_NAMES } },
  )
}

/** A CSV header line naming both columns the craft importer needs. */
function looksLikeCraftCsv(text: string): boolean {
  const header = stripByteOrderMark(text).split('\n', 1)[0]
  const columns = header.split(',').map((column) => column.trim().replace(/^"|"$/g, ''))
  return columns.includes('tool_id') && columns.includes('tool')
}

function isJson(text: string): boolean {
  try {
    JSON.parse(stripByteOrderMark(text))
    return true
  } catch {
    return false
  }
}

function keyList(item: Item): string {
  const keys = Object.keys(item)
  if (keys.length === 0) return 'no keys'
  const shown = keys.slice(0, 8).map((key) => JSON.stringify(key))
  return `keys ${shown.join(', ')}${keys.length > 8 ? ', …' : ''}`
}

function jsonType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
}

function isObject(value: unknown): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isString(value: unknown): value is string {
  return typeof value === 'string'
}
