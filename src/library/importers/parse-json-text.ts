/**
 * Parses a tool file as one JSON document or as JSON Lines, with line/column positions in every
 * syntax error.
 * @module
 */
import { importFailed, tooManyTools, type ImportContext } from './import-context.ts'
import { findJsonSyntaxError } from './find-json-syntax-error.ts'
import { MAX_PARAMETER_DEPTH } from '../tool.ts'

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
  if (body.length >= RECORD_COUNT_MIN_CHARS) {
    const scan = scanJsonDocument(body, context.maxTools, MAX_DOCUMENT_DEPTH)
    if (scan.depth > MAX_DOCUMENT_DEPTH)
      throw importFailed(context, {
        message: `the document nests more than ${MAX_DOCUMENT_DEPTH} arrays and objects deep (seen before it was parsed; nothing was parsed): a tool's parameters nest at most ${MAX_PARAMETER_DEPTH} levels`,
      })
    if (scan.records > context.maxTools)
      throw tooManyTools(
        context,
        'records',
        ' (counted before the document was parsed; nothing was parsed)',
      )
  }
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
 * The shortest JSON document whose records are counted (`scanJsonDocument`) before JSON.parse: a
 * shorter one is parsed as it is (1 MiB parses in a few milliseconds). Counting 40 MB takes about
 * 65 ms, JSON.parse of it 370 ms; a 260 MB document of 9,000,000 tiny TaskBench nodes was parsed
 * whole (14 s, over 1 GB) before its record count refused it, and is now refused in 0.15 s.
 */
export const RECORD_COUNT_MIN_CHARS = 1024 * 1024

/**
 * The deepest nesting of arrays and objects a JSON tool document of RECORD_COUNT_MIN_CHARS or
 * more may have (`scanJsonDocument`): a tool's parameters nest at most MAX_PARAMETER_DEPTH (64)
 * schema levels, two or three JSON levels each, under a few levels of a file's own (OpenAPI
 * paths, Postman folders). A 32 MB upload of 16,000,000 nested arrays inside one tool's schema was
 * parsed whole in the import worker (17 s, 1.8 GB peak RSS) before its heap limit stopped it.
 */
export const MAX_DOCUMENT_DEPTH = 1000

/** The object keys whose array holds a document's records (and `result.tools`). */
const RECORD_LIST_KEYS: readonly string[] = ['tools', 'nodes', 'functions']

/**
 * The items of the longest list of records in the JSON document `text` (the array itself, or the
 * `tools`, `nodes`, `functions` or `result.tools` array of an object: the lists `detect-format`
 * counts once parsed), and the deepest nesting of its arrays and objects, found without parsing
 * it and stopping once past `maxRecords` or `maxDepth`. Strings are skipped with `indexOf`, as
 * `countJsonValues` does; keys are compared as written (an escaped key is not recognised), and
 * text that is not JSON is scanned all the same: JSON.parse then says what is wrong with it.
 */
export function scanJsonDocument(
  text: string,
  maxRecords = Infinity,
  maxDepth = Infinity,
): { records: number; depth: number } {
  // The open containers' kinds, `[` or `{` (only the first three levels matter), and keys.
  const kinds: number[] = []
  const keys: string[] = []
  let key = ''
  let longest = 0
  let deepest = 0
  const found = () => ({ records: Math.max(longest, items), depth: deepest })
  // In a list of records: its depth, its items so far, whether an item has begun.
  let listDepth = -1
  let items = 0
  for (let at = 0; at < text.length; at += 1) {
    const code = text.charCodeAt(at)
    if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) continue
    const depth = kinds.length
    if (depth === listDepth && items === 0 && code !== 0x5d) items = 1
    if (code === 0x22) {
      let close = at
      for (;;) {
        close = text.indexOf('"', close + 1)
        if (close === -1) return found()
        let backslashes = 0
        while (text.charCodeAt(close - 1 - backslashes) === 92) backslashes += 1
        if (backslashes % 2 === 0) break
      }
      // A string near the top may be the key of a list (the keys of lists are short).
      if (depth <= 2) key = close - at <= 10 ? text.slice(at + 1, close) : ''
      at = close
    } else if (code === 0x2c) {
      if (depth === listDepth && ++items > maxRecords) return found()
    } else if (code === 0x5b || code === 0x7b) {
      if (code === 0x5b && listDepth === -1 && isRecordList(kinds, keys, key)) {
        listDepth = depth + 1
        items = 0
      }
      if (depth < 3) keys.push(key)
      kinds.push(code)
      if (kinds.length > deepest && (deepest = kinds.length) > maxDepth) return found()
      key = ''
    } else if (code === 0x5d || code === 0x7d) {
      kinds.pop()
      if (kinds.length < 3) keys.pop()
      if (kinds.length + 1 === listDepth) {
        longest = Math.max(longest, items)
        listDepth = -1
      }
    }
  }
  return found()
}

/** Whether an array opened where `kinds` and `keys` say, under `key`, is a list of records. */
function isRecordList(kinds: readonly number[], keys: readonly string[], key: string): boolean {
  if (kinds.length === 0) return true
  if (kinds.length === 1) return kinds[0] === 0x7b && RECORD_LIST_KEYS.includes(key)
  return (
    kinds.length === 2 &&
    kinds[0] === 0x7b &&
    kinds[1] === 0x7b &&
    keys[1] === 'result' &&
    key === 'tools'
  )
}

/**
 * One JSON value per non-blank line; blank lines are skipped (they are not records). A record
 * past `context.maxTools` is refused unparsed, and the lines after it are not looked at.
 */
function parseJsonLines(text: string, context: ImportContext): ParsedJsonText {
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
