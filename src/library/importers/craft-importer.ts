/**
 * CRAFT toolsets (`5_deduplicated_tools.csv` for MATH and TabMWP, `5_deduplicated_tool.csv` for
 * VQA; shared/data/README.md section 4). Each row is a tool plus the training problem it was
 * made from; only the tool is imported (the question is the benchmark's query, not tool text).
 * @module
 */
import { createRequire } from 'node:module'
import type { Info } from 'csv-parse/sync'
import { z } from 'zod'
import type { Tool } from '../tool.ts'
import { craftParameters } from './craft-parameters.ts'
import { addWarning, importFailed, sourceOf, type ImportContext } from './import-context.ts'
import { describeValue, nonEmptyString, parseRecord } from './parse-record.ts'
import { parsePythonFunctions, type PythonFunction } from './parse-python-functions.ts'

const RowSchema = z.looseObject({ tool_id: nonEmptyString(), tool: nonEmptyString() })

/** Columns that show how a row's tool was called, most specific first (VQA: call; MATH/TabMWP: tool_call). */
const CALL_COLUMNS = ['call', 'tool_call', 'api_call'] as const

/**
 * Imports a toolset: id = `tool_id`; name = the tool's function name; description = its
 * docstring (the whole docstring, whose Returns section helps selection), else the name;
 * parameters from the signature, typed and described from annotations and the docstring's
 * Args/Parameters section; the full source in `source.code`. Messages use 1-based CSV lines
 * (a row can span many lines).
 */
export function importCraft(text: string, context: ImportContext): Tool[] {
  const rows = parseCsv(text, context)
  return rows.map((row, record) => {
    const { tool_id: id, tool: code } = parseRecord(RowSchema, row, context, record)
    const main = mainFunction(code, row, record, context)
    const source = sourceOf(context, 'craft', record)
    source.code = code
    const tool: Tool = {
      id,
      name: main.name,
      description: main.docstring ?? main.name,
      parameters: craftParameters(main),
      source,
    }
    if (context.namespace !== undefined) tool.namespace = context.namespace
    return tool
  })
}

// csv-parse is required when a CSV is read, not imported: every CLI command loads this module
// (bench/README.md, "CLI start cost", round 47).
const require = createRequire(import.meta.url)

function parseCsv(text: string, context: ImportContext): Record<string, string>[] {
  const { parse } = require('csv-parse/sync') as typeof import('csv-parse/sync')
  let parsed: Array<{ record: Record<string, string>; info: Info; raw: string }>
  try {
    parsed = parse(text, {
      columns: true,
      bom: true,
      info: true,
      raw: true,
      skip_empty_lines: true,
    })
  } catch (error) {
    const line = (error as { lines?: number }).lines
    const where = line === undefined ? '' : ` at line ${line}`
    throw importFailed(context, {
      message: `invalid CSV${where}: ${(error as Error).message}`,
      cause: error,
    })
  }
  const header = parsed[0] ? Object.keys(parsed[0].record) : []
  const missing = ['tool_id', 'tool'].find(
    (column) => parsed.length > 0 && !header.includes(column),
  )
  if (missing !== undefined) {
    throw importFailed(context, {
      field: missing,
      message: `expected a "${missing}" column (CRAFT toolsets have tool_id and tool), got columns ${header.map((name) => `"${name}"`).join(', ')}`,
    })
  }
  // info.lines is the line a record ends on; count back over the newlines inside it.
  context.recordLines = parsed.map(({ info, raw }) => {
    const body = raw.replace(/^[\r\n]+/, '').replace(/\r?\n$/, '')
    return info.lines - (body.match(/\n/g)?.length ?? 0)
  })
  return parsed.map(({ record }) => record)
}

/**
 * The function the row is about. A few tools define helpers next to it (6 of 987); the one the
 * row's call column calls is the tool, else the first.
 */
function mainFunction(
  code: string,
  row: Record<string, string>,
  record: number,
  context: ImportContext,
): PythonFunction {
  const functions = parsePythonFunctions(code)
  if (functions.length === 0) {
    throw importFailed(context, {
      record,
      field: 'tool',
      message: `expected Python source defining a function ("def name(...):"), got ${describeValue(code)}`,
    })
  }
  if (functions.length === 1) return functions[0]
  for (const column of CALL_COLUMNS) {
    const calls = (row[column] ?? '').replace(/\bdef\s+\w+\s*\(/g, '')
    const called = functions.filter((candidate) =>
      new RegExp(`\\b${candidate.name}\\s*\\(`).test(calls),
    )
    if (called.length === 1) return called[0]
  }
  addWarning(
    context,
    record,
    `the tool defines ${functions.map((candidate) => candidate.name).join(', ')} and no call column picks one; using the first`,
  )
  return functions[0]
}
