/**
 * Importing tools from text or a file: detect (or take) the format, run its importer, check
 * that the result is a usable library (not empty, unique ids).
 * @module
 */
import { readFile } from 'node:fs/promises'
import { ToolselError } from '../../errors.ts'
import type { Tool } from '../tool.ts'
import { assertUniqueIds } from './assert-unique-ids.ts'
import { importBeirCorpus } from './beir-corpus-importer.ts'
import { importCanonical } from './canonical-importer.ts'
import { importCraft } from './craft-importer.ts'
import { sniffText } from './detect-format.ts'
import { importGorilla } from './gorilla-importer.ts'
import { createImportContext, importFailed, type ImportContext } from './import-context.ts'
import {
  IMPORT_FORMAT_NAMES,
  type ImportFormat,
  type ImportOptions,
  type ImportResult,
} from './import-formats.ts'
import { importMcp } from './mcp-importer.ts'
import { importOpenai } from './openai-importer.ts'
import { importTaskbench } from './taskbench-importer.ts'
import { importToolbench } from './toolbench-importer.ts'

type JsonImporter = (parsed: unknown, context: ImportContext) => Tool[]

/** The importer of every JSON format; craft reads CSV text instead. */
const JSON_IMPORTERS: Readonly<Record<Exclude<ImportFormat, 'craft'>, JsonImporter>> = {
  canonical: importCanonical,
  openai: importOpenai,
  mcp: importMcp,
  toolbench: importToolbench,
  'beir-corpus': importBeirCorpus,
  gorilla: importGorilla,
  taskbench: importTaskbench,
}

/**
 * Imports tools from text (an HTTP upload, a string in a test). Pass `fileName` when there is
 * one: it is used in messages, for detection and as the default namespace.
 * Throws IMPORT_FAILED, DUPLICATE_TOOL_ID or UNKNOWN_FORMAT; the whole import fails on the first
 * bad record.
 */
export function importToolsFromText(text: string, options: ImportOptions = {}): ImportResult {
  assertKnownFormat(options.format)
  const context = createImportContext(options)
  const { format, parsed } = sniffText(text, context, options.format)
  const tools =
    format === 'craft' ? importCraft(text, context) : JSON_IMPORTERS[format](parsed?.value, context)
  if (tools.length === 0) {
    throw importFailed(context, {
      message: `no tools found in this ${format} file; a library needs at least one`,
    })
  }
  assertUniqueIds(tools, context)
  return {
    tools,
    format,
    warnings: context.warnings,
    files: [{ file: context.file, format, tools: tools.length }],
  }
}

/** Reads a file (UTF-8) and imports it; `fileName` defaults to the path as given. */
export async function importToolsFromFile(
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new ToolselError(
      'IMPORT_FAILED',
      `Cannot read tool file "${path}": ${(error as Error).message}`,
      { cause: error, details: { file: path } },
    )
  }
  return importToolsFromText(text, { ...options, fileName: options.fileName ?? path })
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
