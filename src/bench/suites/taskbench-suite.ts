/**
 * TaskBench suites (huggingface, multimedia, dailylifeapis): `tool_desc.json` is the library,
 * `data.head.jsonl` (a prefix of the published `data.json`) gives queries and gold. Gold = the
 * distinct `task` names of `task_nodes` (or `tool_nodes`, the field's newer name). See the data
 * README section "TaskBench gold (partial copies)".
 * @module
 */
import { basename, extname, join } from 'node:path'
import { importToolsFromFile } from '../../library/importers/index.ts'
import type { BenchCase } from '../bench-case.ts'
import type { BenchSuite, SuiteLoadOptions, SuiteLoadResult } from './bench-suite.ts'
import { finishSplit, unmappableNote } from './finish-split.ts'
import { missingFiles, readJsonRecords, unique } from './read-data-file.ts'

export interface TaskbenchSuiteSpec {
  name: string
  description: string
  /** `tool_desc.json` under the data root. */
  tools: string
  /** The query file under the data root. */
  queries: string
}

export function createTaskbenchSuite(spec: TaskbenchSuiteSpec): BenchSuite {
  return {
    name: spec.name,
    description: spec.description,
    async load(options: SuiteLoadOptions): Promise<SuiteLoadResult> {
      const toolsFile = options.tools ?? join(options.dataDir, spec.tools)
      const queriesFile = options.queries ?? join(options.dataDir, spec.queries)
      const name = `${spec.name}/${basename(queriesFile, extname(queriesFile))}`
      const missing = await missingFiles([toolsFile, queriesFile])
      if (missing.length > 0) {
        return { splits: [], skipped: [{ name, reason: `not found: ${missing.join(', ')}` }] }
      }
      const tools = (
        await importToolsFromFile(toolsFile, {
          format: 'taskbench',
          maxFileBytes: options.maxFileBytes,
          maxTools: options.maxTools,
          regularOnly: true,
        })
      ).tools
      const records = await readJsonRecords(queriesFile)
      const cases: BenchCase[] = []
      for (const [position, record] of records.entries()) {
        const parsed = parseTaskbenchRecord(record)
        if (parsed) cases.push({ ...parsed, id: parsed.id ?? String(position) })
      }
      const ids = new Set(tools.map((tool) => tool.id))
      const { cases: kept, stats } = finishSplit({
        records: records.length,
        cases,
        dropped: records.length - cases.length,
        has: (id) => ids.has(id),
        unmappable: options.unmappable,
      })
      const subset =
        options.unmappable === 'drop'
          ? 'subset: records whose gold ⊆ tool ids (the data README suggestion; --unmappable keep for all)'
          : 'subset: all records, raw gold (--unmappable keep)'
      const notes = [`library: ${toolsFile} (${tools.length} tools)`, subset]
      const unmapped = unmappableNote(stats, options.unmappable)
      if (unmapped) notes.push(unmapped)
      return {
        splits: [{ name, files: [queriesFile, toolsFile], tools, cases: kept, stats, notes }],
        skipped: [],
      }
    },
  }
}

/**
 * Reads one record: query = `instruction` (the 2023 release: `user_request`); nodes =
 * `task_nodes` or `tool_nodes`, which may be a JSON-encoded string, and in one record an object
 * `{"step_1": {...}}` whose values are the nodes. Undefined when there is no text or no node.
 */
export function parseTaskbenchRecord(
  record: unknown,
): (Omit<BenchCase, 'id'> & { id?: string }) | undefined {
  if (record === null || typeof record !== 'object') return undefined
  const fields = record as Record<string, unknown>
  const instruction = fields.instruction ?? fields.user_request
  if (typeof instruction !== 'string' || instruction.trim() === '') return undefined
  const nodes = nodeList(fields.task_nodes ?? fields.tool_nodes)
  const gold = unique(
    nodes.flatMap((node) => {
      const task =
        node !== null && typeof node === 'object' ? (node as { task?: unknown }).task : undefined
      return typeof task === 'string' && task !== '' ? [task] : []
    }),
  )
  if (gold.length === 0) return undefined
  const id =
    typeof fields.id === 'string' || typeof fields.id === 'number' ? String(fields.id) : undefined
  return { id, instruction, gold }
}

function nodeList(value: unknown): unknown[] {
  let nodes = value
  if (typeof nodes === 'string') {
    try {
      nodes = JSON.parse(nodes) as unknown
    } catch {
      return []
    }
  }
  if (Array.isArray(nodes)) return nodes
  if (nodes !== null && typeof nodes === 'object') return Object.values(nodes)
  return []
}
