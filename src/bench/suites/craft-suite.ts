/**
 * CRAFT suites (MATH algebra, TabMWP, VQA): the toolset CSV is the library, and each row's
 * training problem is a query whose single gold tool is that row's `tool_id` (data README
 * section 4). TabMWP queries include the row's table, which the problem cannot be read without.
 * @module
 */
import { basename, extname, join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { importToolsFromFile } from '../../library/importers/index.ts'
import type { BenchCase } from '../bench-case.ts'
import type { BenchSuite, SuiteLoadOptions, SuiteLoadResult } from './bench-suite.ts'
import { finishSplit, unmappableNote } from './finish-split.ts'
import { badRecord, missingFiles, readDataText } from './read-data-file.ts'

export interface CraftSuiteSpec {
  name: string
  description: string
  /** The toolset CSV under the data root. */
  toolset: string
}

/** `--tools` replaces the library; `--queries` the CSV the questions are read from. */
export function createCraftSuite(spec: CraftSuiteSpec): BenchSuite {
  return {
    name: spec.name,
    description: spec.description,
    async load(options: SuiteLoadOptions): Promise<SuiteLoadResult> {
      const toolsFile = options.tools ?? join(options.dataDir, spec.toolset)
      const queriesFile = options.queries ?? options.tools ?? join(options.dataDir, spec.toolset)
      const name = `${spec.name}/${basename(queriesFile, extname(queriesFile))}`
      const missing = await missingFiles([...new Set([toolsFile, queriesFile])])
      if (missing.length > 0) {
        return { splits: [], skipped: [{ name, reason: `not found: ${missing.join(', ')}` }] }
      }
      const tools = (
        await importToolsFromFile(toolsFile, {
          format: 'craft',
          maxFileBytes: options.maxFileBytes,
          maxTools: options.maxTools,
          regularOnly: true,
        })
      ).tools
      const cases = parseCraftQueries(await readDataText(queriesFile), queriesFile)
      const ids = new Set(tools.map((tool) => tool.id))
      const { cases: kept, stats } = finishSplit({
        records: cases.length,
        cases,
        has: (id) => ids.has(id),
        unmappable: options.unmappable,
      })
      const notes = [`library: ${toolsFile} (${tools.length} tools); query = question (+ table)`]
      const unmapped = unmappableNote(stats, options.unmappable)
      if (unmapped) notes.push(unmapped)
      const files = [...new Set([queriesFile, toolsFile])]
      return { splits: [{ name, files, tools, cases: kept, stats, notes }], skipped: [] }
    },
  }
}

/** One case per CSV row: id and gold = `tool_id`; instruction = question, then the table if any. */
export function parseCraftQueries(text: string, file: string): BenchCase[] {
  const rows = parse(text, { columns: true, bom: true, skip_empty_lines: true }) as Array<
    Record<string, string | undefined>
  >
  return rows.map((row, position) => {
    const question = row.question ?? row.query
    const toolId = row.tool_id
    if (!question || !toolId)
      throw badRecord(file, position, 'expected "question" and "tool_id" columns')
    const table = row.table?.trim()
    const instruction = table ? `${question.trim()}\n\n${table}` : question.trim()
    return { id: toolId, instruction, gold: [toolId] }
  })
}
