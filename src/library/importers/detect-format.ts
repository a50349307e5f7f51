/**
 * Format detection. The rules, in order:
 * 1. A `.csv` file is `craft` (the only CSV format); so is text whose first line is a CSV header
 *    with `tool_id` and `tool` columns.
 * 2. `.yaml` / `.yml`, or text that is not JSON and has a top-level `openapi:` or `swagger:` key,
 *    is an OpenAPI spec in YAML (`openapi`).
 * 3. Everything else must be JSON (`.jsonl`: JSON Lines; otherwise one document, or JSON Lines
 *    when that fails line by line, see `parseJsonText`). Then the shape decides:
 *    - an object with `openapi` or `swagger` → `openapi`; with a `functions` array → `functions`;
 *      with `jsonrpc` or `result.tools` → `mcp`; with a `nodes` array → `taskbench`;
 *      with a `tools` array → its first tool decides between `canonical`, `functions`, `openai`,
 *      `anthropic` and `mcp` (`{tool, toolIds?}`, one tool as the API answers it, is read as
 *      `{tools: [tool], toolIds}`);
 *    - an array or JSON Lines → its first record decides, by the keys in `ITEM_RULES` (leading
 *      OpenAI built-in tools `{type: "web_search_preview"}` are passed over for the first function);
 *    - any other object is read as a list of one record when exactly one item rule fits it (a
 *      one-line JSON Lines file without its `.jsonl` name, a single pasted tool).
 * 4. No rule, or more than one, matches → UNKNOWN_FORMAT listing the formats. An empty file or
 *    an empty list → IMPORT_FAILED (there is nothing to import, whatever the format).
 * @module
 */
import { createRequire } from 'node:module'
import { extname } from 'node:path'
import { ToolselError } from '../../errors.ts'
import {
  createImportContext,
  importFailed,
  tooManyTools,
  type ImportContext,
} from './import-context.ts'
import { IMPORT_FORMATS, IMPORT_FORMAT_NAMES, type ImportFormat } from './import-formats.ts'
import { isOpenApiDocument } from './openapi-importer.ts'
import { isPostmanCollection } from './postman-importer.ts'
import { parseJsonText, stripByteOrderMark, type ParsedJsonText } from './parse-json-text.ts'

// yaml is required when a YAML spec is read, not imported: every CLI command loads this module
// (bench/README.md, "CLI start cost", round 47).
const require = createRequire(import.meta.url)

type Item = Record<string, unknown>

/** What the first record of an array (or the first tool of `{tools}`) looks like, per format. */
const ITEM_RULES: ReadonlyArray<{ format: ImportFormat; matches: (item: Item) => boolean }> = [
  { format: 'canonical', matches: (item) => isString(item.id) && isString(item.name) },
  { format: 'functions', matches: isFunctionDeclaration },
  { format: 'functions', matches: (item) => !isString(item.name) && listsFunctions(item) },
  { format: 'openai', matches: (item) => item.type === 'function' },
  { format: 'anthropic', matches: isAnthropicTool },
  { format: 'mcp', matches: (item) => 'inputSchema' in item },
  { format: 'toolbench', matches: (item) => Array.isArray(item.api_list) },
  { format: 'beir-corpus', matches: (item) => isString(item._id) && isString(item.text) },
  { format: 'gorilla', matches: (item) => 'api_call' in item && 'api_name' in item },
]

/** Formats that may wrap their tools as `{"tools": [...]}`. */
const TOOLS_WRAPPER_FORMATS: ReadonlySet<ImportFormat> = new Set([
  'canonical',
  'functions',
  'openai',
  'anthropic',
  'mcp',
])

/** Keys that hold function declarations in Gemini tool objects and BFCL records. */
const FUNCTION_LIST_KEYS = ['functionDeclarations', 'function_declarations', 'function']

/** `{name, description?, parameters?}` (also a bare `{name}`) and nothing that marks another format. */
function isFunctionDeclaration(item: Item): boolean {
  if (!isString(item.name) || 'id' in item || 'type' in item) return false
  if ('input_schema' in item || 'inputSchema' in item) return false
  if ('parameters' in item || 'description' in item || 'parametersJsonSchema' in item) return true
  // A bare `{name}` (OpenAI and Gemini make description and parameters optional).
  return Object.keys(item).every((key) => key === 'name' || key === 'strict')
}

/** A Gemini tool object `{functionDeclarations: [...]}` or a BFCL record `{id, question, function: [...]}`. */
function listsFunctions(item: Item): boolean {
  return FUNCTION_LIST_KEYS.some((key) => Array.isArray(item[key]))
}

/** `{name, input_schema}` (client tool) or an Anthropic server tool such as `{type: "web_search_20250305"}`. */
function isAnthropicTool(item: Item): boolean {
  return 'input_schema' in item || (isString(item.type) && /_\d{8}$/.test(item.type))
}

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
  const start = stripByteOrderMark(text).trimStart()[0]
  const startsLikeJson = start === '{' || start === '['
  const isYaml =
    YAML_EXTENSIONS.has(extension) ||
    (!startsLikeJson && (format === 'openapi' || looksLikeOpenApiYaml(text)) && !isJson(text))
  if (isYaml && (format === undefined || format === 'openapi')) {
    return { format: 'openapi', parsed: { value: parseOpenApiYaml(text, context) } }
  }
  if (format === undefined) {
    if (extension === '.csv') return { format: 'craft' }
    if (extension !== '.json' && extension !== '.jsonl' && !startsLikeJson) {
      if (looksLikeCraftCsv(text)) return { format: 'craft' }
      // Not JSON-looking and not named JSON: a parse error would only confuse, so say what it is.
      if (!isJson(text)) {
        throw unknownFormat(
          context,
          'text that is neither JSON, JSON Lines, an OpenAPI YAML spec nor a CRAFT CSV',
        )
      }
    }
  }
  const parsed = oneToolAnswer(
    parseJsonText(text, context, extension === '.jsonl' ? 'lines' : 'auto'),
  )
  context.recordLines = parsed.recordLines
  assertRecordCount(parsed.value, context)
  if (format === undefined) return detectJsonFormat(parsed, context)
  const fitsOneRecord = ITEM_RULES.some(
    (rule) => rule.format === format && rule.matches(parsed.value as Item),
  )
  return {
    format,
    parsed: isObject(parsed.value) && fitsOneRecord ? { value: [parsed.value] } : parsed,
  }
}

/**
 * IMPORT_FAILED when a parsed JSON document's list of records (the array, or the `tools`,
 * `nodes`, `functions` or `result.tools` array of an object) is longer than `context.maxTools`:
 * refused before its records are imported (9,000,000 tiny TaskBench nodes imported for over a
 * minute). Lists elsewhere (OpenAPI paths, Postman folders) are counted as tools, after import.
 */
function assertRecordCount(value: unknown, context: ImportContext): void {
  const lists = Array.isArray(value)
    ? [value]
    : isObject(value)
      ? [value.tools, value.nodes, value.functions, isObject(value.result) && value.result.tools]
      : []
  const longest = Math.max(0, ...lists.map((list) => (Array.isArray(list) ? list.length : 0)))
  if (longest > context.maxTools) throw tooManyTools(context, 'records', ` (${longest})`)
}

/**
 * `{tool, toolIds?}`, the answer of `GET /v1/libraries/:library/tools/:id` (in any `toolFormat`),
 * read as `{tools: [tool], toolIds}`: one tool saved from the API imports like a list of one.
 */
function oneToolAnswer(parsed: ParsedJsonText): ParsedJsonText {
  const { value } = parsed
  if (!isObject(value) || !isObject(value.tool)) return parsed
  if (!Object.keys(value).every((key) => key === 'tool' || key === 'toolIds')) return parsed
  return {
    value: { tools: [value.tool], ...(value.toolIds !== undefined && { toolIds: value.toolIds }) },
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
  if (isOpenApiDocument(value)) return { format: 'openapi', parsed }
  if (isPostmanCollection(value)) return { format: 'postman', parsed }
  if (Array.isArray(value.functions)) return { format: 'functions', parsed }
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
  const fitting = (item: Item) =>
    ITEM_RULES.filter((rule) => allowed.includes(rule.format) && rule.matches(item)).map(
      (rule) => rule.format,
    )
  const matches = fitting(first)
  if (matches.length === 1) return matches[0]
  // OpenAI requests often list built-in tools ({type: "web_search_preview"}, {type: "mcp", …})
  // before their functions: the first function decides (the importer skips the built-ins).
  const builtIns = matches.length === 0 ? items.findIndex((item) => !isBuiltInTool(item)) : 0
  if (builtIns > 0) {
    const after = fitting(items[builtIns] as Item)
    if (after.length === 1 && after[0] === 'openai') return 'openai'
  }
  const seen = `${container} has ${keyList(first)}`
  if (matches.length === 0) {
    // The likeliest slip: a tool whose name is not a string (every format names tools by strings).
    const name = 'name' in first && !isString(first.name) ? first.name : undefined
    const hint = name === undefined ? '' : `; its "name" is a ${jsonType(name)}, not a string`
    throw unknownFormat(context, `${seen}${hint}`)
  }
  throw unknownFormat(context, `${seen}, which fits more than one format (${matches.join(', ')})`)
}

/** `{type: "<not function>", …}` without a name: a provider's built-in tool, not a function. */
function isBuiltInTool(item: unknown): boolean {
  return isObject(item) && isString(item.type) && item.type !== 'function' && !isString(item.name)
}

function unknownFormat(context: ImportContext, seen: string): ToolselError {
  const formats = IMPORT_FORMAT_NAMES.map((name) => `${name}: ${IMPORT_FORMATS[name].description}`)
  return new ToolselError(
    'UNKNOWN_FORMAT',
    `${context.file}: cannot tell the tool format; saw ${seen}. Known formats:\n  ` +
      `${formats.join('\n  ')}\nPass the format explicitly, one of ${IMPORT_FORMAT_NAMES.join(', ')}: toolsel index --format <format>, or ?format=<format> on an upload (PUT /v1/libraries/<name>).`,
    { details: { file: context.file, seen, formats: IMPORT_FORMAT_NAMES } },
  )
}

const YAML_EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml'])

/**
 * The file name an upload of the library `name` is given in messages (and for detection):
 * `<name>.yaml` for text that is not JSON but an OpenAPI YAML spec, `<name>.csv` for a CRAFT
 * CSV, else `<name>.json`.
 */
export function uploadFileName(name: string, text: string): string {
  const start = stripByteOrderMark(text).trimStart()[0]
  if (start === '{' || start === '[') return `${name}.json`
  if (looksLikeCraftCsv(text)) return `${name}.csv`
  if (looksLikeOpenApiYaml(text) && !isJson(text)) return `${name}.yaml`
  return `${name}.json`
}

/** A top-level `openapi:` or `swagger:` key: an OpenAPI spec in YAML. */
function looksLikeOpenApiYaml(text: string): boolean {
  return /^(?:openapi|swagger)\s*:/m.test(stripByteOrderMark(text))
}

/**
 * Parses YAML (the usual spelling of OpenAPI specs); the only YAML format is openapi, so a YAML
 * document that is not a spec is UNKNOWN_FORMAT. Aliases are expanded up to a bound, so a
 * "billion laughs" document fails instead of exhausting memory.
 */
function parseOpenApiYaml(text: string, context: ImportContext): unknown {
  const { parseDocument } = require('yaml') as typeof import('yaml')
  const document = parseDocument(stripByteOrderMark(text), { uniqueKeys: false })
  const [error] = document.errors
  if (error !== undefined) {
    const position = error.linePos?.[0]
    const where = position ? ` at line ${position.line}, column ${position.col}` : ''
    // The parser's message ends with the same position and a code frame: said once, on one line.
    const what = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')
    throw importFailed(context, {
      message: `invalid YAML${where}: ${what}`,
      cause: error,
    })
  }
  let value: unknown
  try {
    value = document.toJS({ maxAliasCount: 1000 })
  } catch (cause) {
    throw importFailed(context, { message: `invalid YAML: ${(cause as Error).message}`, cause })
  }
  if (!isOpenApiDocument(value)) {
    const seen = isObject(value)
      ? `a YAML document with ${keyList(value)}`
      : `a YAML ${jsonType(value)}`
    throw unknownFormat(context, `${seen}; YAML files are read as OpenAPI 3 or Swagger 2 specs`)
  }
  return value
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
