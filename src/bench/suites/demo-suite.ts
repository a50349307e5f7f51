/**
 * The demo suite: toolsel's own demo library (one MCP `tools/list` file per server, the library
 * `npm start` serves) with the 79 hand-written instructions of `test/fixtures/demo-queries.jsonl`.
 * Its files live in the repository, not under the data root. See src/library/demo/README.md.
 * @module
 */
import { fileURLToPath } from 'node:url'
import { importToolsFromPath } from '../../library/importers/index.ts'
import type { BenchCase } from '../bench-case.ts'
import type { BenchSuite, SuiteLoadOptions, SuiteLoadResult } from './bench-suite.ts'
import { finishSplit, unmappableNote } from './finish-split.ts'
import { missingFiles, readJsonRecords, unique } from './read-data-file.ts'

export const DEMO_QUERIES_FILE = fileURLToPath(
  new URL('../../../test/fixtures/demo-queries.jsonl', import.meta.url),
)
const DEMO_SERVERS_DIR = fileURLToPath(new URL('../../library/demo/servers', import.meta.url))

export function createDemoSuite(): BenchSuite {
  return {
    name: 'demo',
    description: "toolsel's demo library (197 tools) with its 79 hand-written demo queries",
    async load(options: SuiteLoadOptions): Promise<SuiteLoadResult> {
      const toolsPath = options.tools ?? DEMO_SERVERS_DIR
      const queriesFile = options.queries ?? DEMO_QUERIES_FILE
      const name = 'demo/demo-queries'
      const missing = await missingFiles([toolsPath, queriesFile])
      if (missing.length > 0) {
        return { splits: [], skipped: [{ name, reason: `not found: ${missing.join(', ')}` }] }
      }
      const { tools } = await importToolsFromPath(toolsPath, {
        maxFileBytes: options.maxFileBytes,
        maxTools: options.maxTools,
        regularOnly: true,
      })
      const records = (await readJsonRecords(queriesFile)) as Array<Record<string, unknown>>
      const cases: BenchCase[] = []
      for (const [position, record] of records.entries()) {
        const { id, instruction, gold } = record
        if (typeof instruction !== 'string' || !Array.isArray(gold)) continue
        cases.push({
          id: typeof id === 'string' ? id : String(position),
          instruction,
          gold: unique(gold.filter((item): item is string => typeof item === 'string')),
        })
      }
      const ids = new Set(tools.map((tool) => tool.id))
      const { cases: kept, stats } = finishSplit({
        records: records.length,
        cases,
        dropped: records.length - cases.length,
        has: (id) => ids.has(id),
        unmappable: options.unmappable,
      })
      const notes = [`library: ${toolsPath} (${tools.length} tools)`]
      const unmapped = unmappableNote(stats, options.unmappable)
      if (unmapped) notes.push(unmapped)
      return {
        splits: [{ name, files: [queriesFile, toolsPath], tools, cases: kept, stats, notes }],
        skipped: [],
      }
    },
  }
}
