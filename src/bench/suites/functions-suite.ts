/**
 * A user's own function-calling set: `toolsel bench --suite file:<path>`. Each record is one query
 * with its own small tool list (the shape of the Berkeley Function-Calling Leaderboard, API-Bank,
 * NexusRaven…) and its gold tool names; an empty gold means no tool fits (the query must be
 * answered with no tool). One split per `category` (in first-seen order), so the report gives the
 * exact match per category. JSON Lines or a JSON array of:
 *
 * ```jsonc
 * {
 *   "id": "q1",                              // optional (default: the record's position)
 *   "category": "simple",                    // optional: the split the query is reported in
 *   "instruction": "…",                      // or "question": a string, or BFCL's chat turns
 *   "tools": [ … ],                          // the query's tools, any format toolsel imports
 *                                            // (also "functions" / "function"), or
 *   "library": "tools.json",                 // a tool file or folder (relative to this file)
 *                                            // shared by records (a folder: as `toolsel index`
 *                                            // reads one, e.g. the demo's MCP servers)
 *   "gold": ["get_weather"]                  // tool names or ids; [] = no tool fits. BFCL's
 *                                            // "ground_truth" ([{name: {args}}]) is read too
 * }
 * ```
 *
 * `--tools <file>` gives records without `tools`/`library` a shared library. What importing a
 * record's tools warned about (BFCL's `"type": "dict"` rewritten, a duplicate merged…) is counted
 * in its split's notes, with the first warning, so a normalised record is not silent.
 * @module
 */
import { basename, dirname, extname, resolve } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { importToolsFromPath, importToolsFromText } from '../../library/importers/index.ts'
import type { Tool } from '../../library/tool.ts'
import type { BenchCase } from '../bench-case.ts'
import type { BenchSplit, BenchSuite, SuiteLoadOptions, SuiteLoadResult } from './bench-suite.ts'
import { finishSplit, unmappableNote } from './finish-split.ts'
import { badRecord, missingFiles, readJsonRecords, unique } from './read-data-file.ts'

/** `--suite file:<path>`: the prefix that names a user's own query file instead of a suite. */
export const FILE_SUITE_PREFIX = 'file:'

/** Records read from one file, at most (every query indexes its own library). */
export const MAX_FILE_SUITE_RECORDS = 100_000

/** Tools one record may list inline. */
export const MAX_RECORD_TOOLS = 1_000

const TOOL_KEYS = ['tools', 'functions', 'function'] as const

export function createFunctionsSuite(path: string): BenchSuite {
  const stem = basename(path, extname(path)) || 'queries'
  const name = `${FILE_SUITE_PREFIX}${stem}`
  return {
    name,
    description: `function-calling set ${path}: each query with its own tools, gold = tool names ([] = none)`,
    async load(options: SuiteLoadOptions): Promise<SuiteLoadResult> {
      if (options.queries !== undefined) {
        throw new ToolselError(
          'INVALID_INPUT',
          `--queries does not apply to --suite ${FILE_SUITE_PREFIX}<path>: the file is the queries.`,
        )
      }
      if ((await missingFiles([path])).length > 0) {
        return { splits: [], skipped: [{ name, reason: `not found: ${path}` }] }
      }
      // Read once, a pipe too (`--suite file:<(…)`): the user named this file, not a data
      // directory that a FIFO could hang.
      const records = await readJsonRecords(path, 'Benchmark file', { regularOnly: false })
      if (records.length === 0) {
        throw new ToolselError(
          'INVALID_INPUT',
          `Benchmark file "${path}" holds no queries: write JSON Lines (or a JSON array) of {"instruction", "tools" | "library", "gold"} (bench/README.md, "Your own set").`,
          { details: { file: path } },
        )
      }
      if (records.length > MAX_FILE_SUITE_RECORDS) {
        throw new ToolselError(
          'INVALID_INPUT',
          `Benchmark file "${path}" has ${records.length} records; at most ${MAX_FILE_SUITE_RECORDS} are read.`,
          { details: { file: path } },
        )
      }
      const libraries = new Map<string, Promise<ImportedTools>>()
      const libraryFile = (file: string): Promise<ImportedTools> => {
        let imported = libraries.get(file)
        if (imported === undefined) {
          imported = importToolsFromPath(file, {
            maxFileBytes: options.maxFileBytes,
            maxTools: options.maxTools,
            regularOnly: true,
          }).then(({ tools, warnings }) => ({ tools, warnings }))
          libraries.set(file, imported)
        }
        return imported
      }
      const shared = options.tools === undefined ? undefined : resolve(options.tools)
      const groups = new Map<
        string,
        Array<{ record: number; benchCase: BenchCase; warnings: readonly string[] }>
      >()
      for (const [position, record] of records.entries()) {
        const parsed = await parseRecord(record, position, path, libraryFile, shared)
        let group = groups.get(parsed.category)
        if (group === undefined) groups.set(parsed.category, (group = []))
        group.push({ record: position, benchCase: parsed.benchCase, warnings: parsed.warnings })
      }
      const splits: BenchSplit[] = []
      for (const [category, group] of groups) {
        const cases = group.map((item) => item.benchCase)
        const { cases: kept, stats } = finishSplit({
          records: cases.length,
          cases,
          has: (id, benchCase) => (benchCase.library ?? []).some((tool) => tool.id === id),
          unmappable: options.unmappable,
        })
        const tools = unionById(cases.flatMap((benchCase) => benchCase.library ?? []))
        const sizes = cases.map((benchCase) => benchCase.library?.length ?? 0)
        const empty = cases.filter((benchCase) => benchCase.gold.length === 0).length
        const notes = [
          `library: each query's own tools (mean ${(sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length)).toFixed(1)}, at most ${Math.max(0, ...sizes)}; ${tools.length} distinct ids)`,
          `${empty} of ${cases.length} queries have an empty gold (no tool fits: right only when nothing is selected)`,
        ]
        const warned = group.filter((item) => item.warnings.length > 0)
        if (warned.length > 0) {
          const count = warned.reduce((sum, item) => sum + item.warnings.length, 0)
          notes.push(
            `import warnings: ${count} for the tools of ${warned.length} of ${cases.length} queries (first: ${clip(warned[0].warnings[0])})`,
          )
        }
        const unmapped = unmappableNote(stats, options.unmappable)
        if (unmapped) notes.push(`${unmapped}; ${firstUnmapped(group, path)}`)
        splits.push({
          name: `${name}/${category}`,
          files: shared ? [path, shared] : [path],
          tools,
          cases: kept,
          stats,
          notes,
        })
      }
      // Every query dropped (each names a gold tool it was not given): a table of "0 queries, EM
      // 0.0" that exits 0 reads as a run that measured something.
      if (splits.every((split) => split.cases.length === 0)) {
        const all = [...groups.values()].flat()
        throw new ToolselError(
          'INVALID_INPUT',
          `Benchmark file "${path}": all ${records.length} queries are dropped, since each names a gold tool that is not among its tools (${firstUnmapped(all, path)}). Fix the gold names (tool names or ids of the query's tools), or score them as they are with --unmappable keep.`,
          { details: { file: path } },
        )
      }
      return { splits, skipped: [] }
    },
  }
}

/** A record's tools and what importing them warned about (a rewritten type, a merged duplicate…). */
interface ImportedTools {
  tools: Tool[]
  warnings: readonly string[]
}

async function parseRecord(
  value: unknown,
  position: number,
  file: string,
  libraryFile: (file: string) => Promise<ImportedTools>,
  shared: string | undefined,
): Promise<{ category: string; benchCase: BenchCase; warnings: readonly string[] }> {
  const record = position + 1
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRecord(file, record, 'expected an object {instruction, tools | library, gold}')
  }
  const fields = value as Record<string, unknown>
  const id =
    typeof fields.id === 'string' || typeof fields.id === 'number'
      ? String(fields.id)
      : String(position)
  const category =
    typeof fields.category === 'string' && fields.category.trim() !== ''
      ? fields.category.trim()
      : 'all'
  const instruction = instructionOf(fields.instruction ?? fields.question)
  if (instruction === undefined) {
    throw badRecord(
      file,
      record,
      'needs "instruction" (a string) or "question" (a string or chat messages with user content)',
    )
  }
  const { tools: library, warnings } = await libraryOf(fields, file, record, libraryFile, shared)
  const gold = goldOf(fields, file, record)
  return {
    category,
    benchCase: { id, instruction, gold: gold.map((name) => resolveGold(name, library)), library },
    warnings,
  }
}

/** The query text: a string, or the user turns of BFCL's `[[{role, content}]]` / `[{role, content}]`. */
function instructionOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value
  if (!Array.isArray(value)) return undefined
  const turns = value
    .flat(2)
    .filter(
      (turn): turn is { role?: unknown; content: string } =>
        turn !== null &&
        typeof turn === 'object' &&
        typeof (turn as { content?: unknown }).content === 'string' &&
        ((turn as { role?: unknown }).role ?? 'user') === 'user',
    )
  const text = turns
    .map((turn) => turn.content.trim())
    .filter(Boolean)
    .join('\n')
  return text === '' ? undefined : text
}

async function libraryOf(
  fields: Record<string, unknown>,
  file: string,
  record: number,
  libraryFile: (file: string) => Promise<ImportedTools>,
  shared: string | undefined,
): Promise<ImportedTools> {
  const key = TOOL_KEYS.find((name) => fields[name] !== undefined)
  if (key !== undefined) {
    const list = fields[key]
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_RECORD_TOOLS) {
      throw badRecord(file, record, `"${key}" must be a list of 1 to ${MAX_RECORD_TOOLS} tools`)
    }
    if (list.every((item) => typeof item === 'string')) {
      // A usage-examples or training file ({instruction, tools: [ids]}) given as a benchmark file:
      // the importer's "cannot tell the tool format" and its list of formats did not say so.
      throw badRecord(
        file,
        record,
        `"${key}" is a list of strings, as the tool ids of a usage-examples file are; here "${key}" holds the query's tool definitions. Write the ids the query should select as "gold" and give the tools as "library": "<tool file>" (relative to this file) or --tools <tool file>`,
      )
    }
    try {
      const { tools, warnings } = importToolsFromText(JSON.stringify(list), {
        fileName: `${file}#${record}`,
      })
      return { tools, warnings }
    } catch (error) {
      throw badRecord(file, record, `its ${key} do not import: ${(error as Error).message}`)
    }
  }
  if (typeof fields.library === 'string' && fields.library !== '') {
    const library = fields.library
    // Said for the record that names it (the shared import's own error names only the tool file).
    return libraryFile(resolve(dirname(file), library)).catch((error: unknown) => {
      throw badRecord(
        file,
        record,
        `its library "${library}" does not import: ${(error as Error).message}`,
      )
    })
  }
  if (shared !== undefined) return libraryFile(shared)
  throw badRecord(file, record, 'needs its tools: "tools" (a list), "library" (a file) or --tools')
}

/** Gold names: `gold` (strings), else BFCL's `ground_truth` (`[{name: {args}}]` or strings). */
function goldOf(fields: Record<string, unknown>, file: string, record: number): string[] {
  const value = fields.gold ?? fields.ground_truth
  if (!Array.isArray(value)) {
    throw badRecord(file, record, 'needs "gold": a list of tool names ([] when no tool fits)')
  }
  const names = value.flatMap((item): string[] | undefined[] => {
    if (typeof item === 'string' && item !== '') return [item]
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) return Object.keys(item)
    return [undefined]
  })
  if (names.some((name) => name === undefined)) {
    throw badRecord(file, record, '"gold" must list tool names (non-empty strings)')
  }
  return unique(names as string[])
}

/**
 * A gold name is the tool's id, else the name of exactly one of its tools, else the name one had
 * in the file before the import read it back as an id (`sms--send_sms` of tools toolsel wrote).
 */
function resolveGold(name: string, library: readonly Tool[]): string {
  if (library.some((tool) => tool.id === name)) return name
  for (const nameOf of [(tool: Tool) => tool.name, (tool: Tool) => tool.source?.providerName]) {
    const named = library.filter((tool) => nameOf(tool) === name)
    if (named.length === 1) return named[0].id
  }
  return name
}

/**
 * Where the first gold name that is none of its query's tools is (a typo in a self-written set
 * drops the query otherwise unnamed): `first: record 3 (id "q3") gold "refund_paymnt", its tools:
 * refund_payment, create_invoice`.
 */
function firstUnmapped(
  group: ReadonlyArray<{ record: number; benchCase: BenchCase }>,
  file: string,
): string {
  for (const { record, benchCase } of group) {
    const tools = benchCase.library ?? []
    const missing = benchCase.gold.find((id) => !tools.some((tool) => tool.id === id))
    if (missing === undefined) continue
    const shown = tools.slice(0, 5).map((tool) => tool.id)
    const more = tools.length > shown.length ? `, … (${tools.length})` : ''
    return `first: ${file} record ${record + 1} (id "${benchCase.id}"): gold "${missing}", its tools: ${shown.join(', ')}${more}`
  }
  return ''
}

/** A warning shortened for a one-line split note. */
function clip(text: string, max = 160): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

function unionById(tools: readonly Tool[]): Tool[] {
  const byId = new Map<string, Tool>()
  for (const tool of tools) if (!byId.has(tool.id)) byId.set(tool.id, tool)
  return [...byId.values()]
}
