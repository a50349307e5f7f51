/**
 * Importing a file or a whole directory of tool files (e.g. one MCP `tools/list` dump per
 * server) into one list of tools.
 * @module
 */
import type { Dirent } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { ToolselError } from '../../errors.ts'
import type { Tool } from '../tool.ts'
import { DEFAULT_MAX_TOOLS, type ImportOptions, type ImportResult } from './import-formats.ts'
import { importToolsFromFile, RENAMED } from './import-tools.ts'
import { resolveDuplicates } from './resolve-duplicates.ts'
import { ON_DUPLICATE_FIX } from './assert-unique-ids.ts'
import { fileProblem } from '../../read-text-file.ts'
import { shownName } from '../name-characters.ts'
import { firstTooLongId, MAX_TOOL_ID_CHARS, toolIdTooLong } from '../tool-id-limit.ts'

/** The file kinds a directory import reads; anything else in the directory is left alone. */
export const TOOL_FILE_EXTENSIONS: readonly string[] = ['.json', '.jsonl', '.csv', '.yaml', '.yml']

/**
 * The names of the tool files a directory import reads among a directory's `entries`, in the
 * order it reads them: files (or links) with a tool file extension (TOOL_FILE_EXTENSIONS), not
 * dotfiles, sorted. demo-fingerprint.ts hashes the same list, so that it covers what the demo's
 * import reads.
 */
export function toolFileNames(entries: readonly Dirent[]): string[] {
  return entries
    .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .filter((name) => TOOL_FILE_EXTENSIONS.includes(extname(name).toLowerCase()))
    .sort()
}

/**
 * Imports a file, or every tool file directly inside a directory (`toolFileNames`: `*.json`,
 * `*.jsonl`, `*.csv`, `*.yaml`, `*.yml`; not its subdirectories; dotfiles skipped), in sorted
 * name order so ids and order are reproducible.
 * Each file is detected on its own, MCP files are namespaced by their file name, and ids must be
 * unique across files (DUPLICATE_TOOL_ID names both files otherwise, unless `onDuplicate` says
 * to rename or drop). The `namespace` option is
 * for single files only: one namespace for several MCP servers would make their ids collide.
 */
export async function importToolsFromPath(
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  let isDirectory: boolean
  try {
    isDirectory = (await stat(path)).isDirectory()
  } catch (error) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot read tool path "${path}": ${fileProblem(error)}`,
      {
        cause: error,
        details: { file: path },
      },
    )
  }
  if (!isDirectory) return importToolsFromFile(path, options)
  if (options.namespace !== undefined) {
    throw new ToolselError(
      'INVALID_INPUT',
      `The namespace option applies to one file, but "${path}" is a directory; its MCP files are namespaced by file name. Import the files one by one to choose namespaces.`,
      { details: { file: path, namespace: options.namespace } },
    )
  }
  let entries
  try {
    entries = await readdir(path, { withFileTypes: true })
  } catch (error) {
    // Like an unreadable tool file: the input is refused (exit 2), not a failed import.
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot read tool directory "${path}": ${fileProblem(error)}`,
      { cause: error, details: { file: path } },
    )
  }
  const names = toolFileNames(entries)
  if (names.length === 0) {
    throw new ToolselError(
      'IMPORT_FAILED',
      `${path}: the directory has no tool files (${TOOL_FILE_EXTENSIONS.join(', ')}).`,
      { details: { file: path } },
    )
  }
  const results: ImportResult[] = []
  for (const name of names) {
    results.push(
      await importToolsFromFile(join(path, name), {
        format: options.format,
        onDuplicate: options.onDuplicate,
        providerNames: options.providerNames,
        maxFileBytes: options.maxFileBytes,
        maxTools: options.maxTools,
        regularOnly: options.regularOnly,
      }),
    )
    const total = results.reduce((sum, result) => sum + result.tools.length, 0)
    const maxTools = options.maxTools ?? DEFAULT_MAX_TOOLS
    if (total > maxTools) {
      throw new ToolselError(
        'IMPORT_FAILED',
        `${path}: the directory's files hold more than ${maxTools} tools (${total} up to ${name}): refused (library.maxTools, env TOOLSEL_MAX_TOOLS, raises the limit).`,
        { details: { file: path, maxTools } },
      )
    }
  }
  return mergeResults(results, options)
}

function mergeResults(results: readonly ImportResult[], options: ImportOptions): ImportResult {
  const fileOfTool = new Map<Tool, string>()
  for (const result of results) {
    for (const tool of result.tools) fileOfTool.set(tool, result.files[0].file)
  }
  const where = (tool: Tool) => ({ file: fileOfTool.get(tool)!, tool })
  const { tools, duplicates } = resolveDuplicates(
    results.flatMap((result) => result.tools),
    options.onDuplicate ?? 'error',
    (tool) => fileOfTool.get(tool)!,
    (id, first, second) => duplicateAcrossFiles(id, where(first), where(second)),
  )
  // Each file's ids were checked; a rename across files (`<id>_2`) can make one longer.
  const long = firstTooLongId(tools)
  if (long !== undefined) {
    throw new ToolselError(
      'IMPORT_FAILED',
      `${long.source?.file ?? 'a tool file'}: ${toolIdTooLong(long.id)}${RENAMED}: shorten the name or id it is made from`,
      { details: { file: long.source?.file, maxToolIdChars: MAX_TOOL_ID_CHARS } },
    )
  }
  const warnings = results.flatMap((result) => result.warnings)
  const summarized = results.flatMap((result) => result.summarized)
  if (duplicates.length > 0) {
    warnings.push(
      `${duplicates.length} tool(s) share an id with a tool of another file (--on-duplicate ${options.onDuplicate}): see the import summary`,
    )
    summarized.push(warnings.at(-1)!)
  }
  return {
    tools,
    format: results[0].format,
    warnings,
    summarized,
    files: results.flatMap((result) => result.files),
    duplicates: [...results.flatMap((result) => result.duplicates), ...duplicates],
    schemaChanges: results.flatMap((result) => result.schemaChanges),
    invalidSchemas: results.flatMap((result) => result.invalidSchemas),
  }
}

function duplicateAcrossFiles(
  id: string,
  first: { file: string; tool: Tool },
  second: { file: string; tool: Tool },
): ToolselError {
  const where = ({ file, tool }: { file: string; tool: Tool }) => `${file} ${positionOf(tool)}`
  return new ToolselError(
    'DUPLICATE_TOOL_ID',
    `Tool id ${shownName(id)} appears twice: ${where(first)} and ${where(second)}; ${ON_DUPLICATE_FIX}.`,
    { details: { id, files: [first.file, second.file] } },
  )
}

function positionOf(tool: Tool): string {
  const line = tool.source?.line
  if (typeof line === 'number') return `line ${line}`
  return `record ${String(tool.source?.record)}`
}
