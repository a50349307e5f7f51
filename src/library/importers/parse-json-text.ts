/**
 * Parses a tool file as one JSON document or as JSON Lines, with line/column positions in every
 * syntax error.
 * @module
 */
import { importFailed, tooManyTools, type ImportContext } from './import-context.ts'
import { findJsonSyntaxError } from './find-json-syntax-error.ts'

export interface ParsedJsonText {
  /** The document, or for JSON Lines the array of records. */
  value: unknown
  /** JSON Lines only: the 1-based line of each record. */
  recordLines?: number[]
}

/**
 * How to read the text. `lines`: JSON Lines (`.jsonl` files). `auto`: one JSON document, falling
 * back to JSON Lines when that fails but the first line is a complete JSON object or array on its
 * own (several published datasets, e.g. Gorilla's `torchhub_train.json` and ToolPlanner's
 * `*_instruction_5000.json`, are JSON Lines despite the `.json` name).
 */
export type JsonTextMode = 'lines' | 'auto'

export function parseJsonText(
  text: string,
  context: ImportContext,
  mode: JsonTextMode,
): ParsedJsonText {
  const body = stripByteOrderMark(text)
  if (mode === 'lines') return parseJsonLines(body, context)
  try {
    return { value: JSON.parse(body) as unknown }
  } catch (error) {
    if (looksLikeJsonLines(body)) return parseJsonLines(body, context)
    const syntax = findJsonSyntaxError(body)
    const where = syntax ? ` at line ${syntax.line}, column ${syntax.column}` : ''
    const reason = syntax?.reason ?? (error as Error).message
    throw importFailed(context, {
      message: `invalid JSON${where}: ${reason}${markupHint(body)}`,
      cause: error,
    })
  }
}

/**
 * One JSON value per non-blank line; blank lines are skipped (they are not records). A record
 * past `context.maxTools` is refused unparsed, and the lines after it are not looked at.
 */
export function parseJsonLines(text: string, context: ImportContext): ParsedJsonText {
  const records: unknown[] = []
  const recordLines: number[] = []
  const body = stripByteOrderMark(text)
  for (let index = 0, start = 0; start <= body.length; index++) {
    const newline = body.indexOf('\n', start)
    const end = newline === -1 ? body.length : newline
    const rawLine = body.slice(start, end)
    start = end + 1
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine
    if (line.trim() === '') continue
    if (records.length === context.maxTools)
      throw tooManyTools(
        context,
        'records',
        ` (line ${index + 1} is one more; nothing past it was parsed)`,
      )
    try {
      records.push(JSON.parse(line))
    } catch (error) {
      const syntax = findJsonSyntaxError(line)
      const where = syntax ? ` at column ${syntax.column}` : ''
      const reason = syntax?.reason ?? (error as Error).message
      // Label the bad line like a record so the message says `line N`.
      context.recordLines = [...recordLines, index + 1]
      throw importFailed(context, {
        record: records.length,
        message: `invalid JSON${where}: ${reason}`,
        cause: error,
      })
    }
    recordLines.push(index + 1)
  }
  return { value: records, recordLines }
}

/**
 * What a file that starts with `<` is: a web page or an error page saved in place of the tool
 * file (a browser's "Save as" of a GitHub blob, a download behind a login), said as such.
 */
function markupHint(text: string): string {
  if (!text.trimStart().startsWith('<')) return ''
  return /^\s*<(?:!doctype\s+html|html)\b/i.test(text)
    ? '; the file is an HTML page, not JSON (a web page saved in place of the raw file?)'
    : '; the file is markup (XML or HTML), not JSON'
}

function looksLikeJsonLines(text: string): boolean {
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  if (lines.length < 2) return false
  try {
    const first: unknown = JSON.parse(lines[0])
    return typeof first === 'object' && first !== null
  } catch {
    return false
  }
}

/** Drops a leading UTF-8 byte order mark, which JSON.parse rejects. */
export function stripByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}
