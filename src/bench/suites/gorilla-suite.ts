/**
 * Gorilla APIBench suites (TorchHub, HuggingFace, TensorFlow Hub). The library is the API
 * database; each question has one gold API, and a prediction is right when its api_call equals
 * the gold api_call, as in Gorilla's own evaluation. This matters for TF Hub, where 696 records
 * share only 80 api_calls: exact match is on the api_call class (`matchKey`), not the record.
 * @module
 */
import { basename, extname, join } from 'node:path'
import { importToolsFromFile } from '../../library/importers/index.ts'
import type { Tool } from '../../library/tool.ts'
import type { BenchCase } from '../bench-case.ts'
import type { BenchSuite, SuiteLoadOptions, SuiteLoadResult } from './bench-suite.ts'
import { finishSplit, unmappableNote } from './finish-split.ts'
import {
  normalizeApiCall,
  parseGorillaQuestion,
  type GorillaQuestion,
} from './gorilla-questions.ts'
import { missingFiles, readJsonRecords } from './read-data-file.ts'

export interface GorillaSuiteSpec {
  name: string
  description: string
  /** The API database under the data root. */
  apis: string
  /** The default question file under the data root. */
  questions: string
}

export const gorillaMatchKey = (tool: Tool): string =>
  normalizeApiCall(typeof tool.source?.apiCall === 'string' ? tool.source.apiCall : tool.id)

export function createGorillaSuite(spec: GorillaSuiteSpec): BenchSuite {
  return {
    name: spec.name,
    description: spec.description,
    async load(options: SuiteLoadOptions): Promise<SuiteLoadResult> {
      const apisFile = options.tools ?? join(options.dataDir, spec.apis)
      const questionsFile = options.queries ?? join(options.dataDir, spec.questions)
      const name = `${spec.name}/${basename(questionsFile, extname(questionsFile))}`
      const [missingApis] = await missingFiles([apisFile])
      if (missingApis !== undefined) {
        return { splits: [], skipped: [{ name, reason: `API database not found: ${missingApis}` }] }
      }
      const [missingQuestions] = await missingFiles([questionsFile])
      if (missingQuestions !== undefined) {
        const reason = `no queries available (not found: ${missingQuestions}); pass --queries <file>`
        return { splits: [], skipped: [{ name, reason }] }
      }
      const tools = (
        await importToolsFromFile(apisFile, {
          format: 'gorilla',
          maxFileBytes: options.maxFileBytes,
          maxTools: options.maxTools,
          regularOnly: true,
        })
      ).tools
      const findGold = createGoldFinder(tools)
      const records = await readJsonRecords(questionsFile)
      const cases: BenchCase[] = []
      let unreadable = 0
      for (const [position, record] of records.entries()) {
        const question = parseGorillaQuestion(record)
        if (question === undefined) {
          unreadable += 1
          continue
        }
        cases.push({
          id: String(position),
          instruction: question.instruction,
          gold: [findGold(question)],
        })
      }
      const ids = new Set(tools.map((tool) => tool.id))
      const { cases: kept, stats } = finishSplit({
        records: records.length,
        cases,
        dropped: unreadable,
        has: (id) => ids.has(id),
        unmappable: options.unmappable,
      })
      const classes = new Set(tools.map(gorillaMatchKey)).size
      const notes = [
        `library: ${apisFile} (${tools.length} APIs, ${classes} distinct api_calls); matched by api_call`,
      ]
      if (unreadable > 0)
        notes.push(`${unreadable} records have no readable instruction and are dropped`)
      const unmapped = unmappableNote(stats, options.unmappable)
      if (unmapped) notes.push(unmapped)
      return {
        splits: [
          {
            name,
            files: [questionsFile, apisFile],
            tools,
            cases: kept,
            stats,
            notes,
            matchKey: gorillaMatchKey,
          },
        ],
        skipped: [],
      }
    },
  }
}

/**
 * The gold tool of a question: the database record equal to `api_data` (same api_call, name and
 * description), else the first record with the same api_call (interchangeable under the
 * api_call match), else `api_call:<call>`, which no tool has, so it counts as unmappable.
 */
function createGoldFinder(tools: readonly Tool[]): (question: GorillaQuestion) => string {
  const byCall = new Map<string, Tool[]>()
  for (const tool of tools) {
    const key = gorillaMatchKey(tool)
    byCall.set(key, [...(byCall.get(key) ?? []), tool])
  }
  return (question) => {
    if (question.apiCall === undefined) return 'api_call:'
    const call = normalizeApiCall(question.apiCall)
    const same = byCall.get(call) ?? []
    const data = question.apiData
    const exact = same.find(
      (tool) => tool.name === data?.api_name && tool.description === (data?.description ?? ''),
    )
    return (exact ?? same[0])?.id ?? `api_call:${call}`
  }
}
