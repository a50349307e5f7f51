/**
 * The ToolBench G3 training split: ToolPlanner's 5,000 coarse-instruction G3 queries (data README
 * section 1.4), gold from the aligned `Tool:` / `API:` tag lines of `tool_` and `api_`
 * `instruction_5000.json` (joined on `path`), mapped onto the COLT 1,419-API G3 corpus by
 * ToolBench-standardized names. Every query of the `toolbench-g3` benchmark suite (ToolPlanner
 * `G3_clear/test.json`, StableToolBench `G3_instruction.json`, ToolBench `data_example`) is
 * excluded by id and by text: the 5,000 contain all 218 G3_clear test queries.
 * @module
 */
import { join } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { importToolsFromFile } from '../../library/importers/index.ts'
import { readJsonRecords, unique } from '../../bench/suites/read-data-file.ts'
import { resolveSuites } from '../../bench/suites/suite-registry.ts'
import { createToolbenchCorpusMap } from '../../bench/suites/toolbench-corpus.ts'
import { excludeTestQueries, type TrainExample, type TrainSplit } from '../train-split.ts'

const COARSE = 'toolbench/toolplanner/data/category/coarse_instruction'
export const G3_TRAIN_FILES = {
  api: `${COARSE}/api_instruction_5000.json`,
  tool: `${COARSE}/tool_instruction_5000.json`,
  corpus: 'toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl',
}

interface CoarseRecord {
  query: string
  original_query?: string
  path: string
}

export async function loadToolbenchG3Train(dataDir: string): Promise<TrainSplit> {
  const files = {
    api: join(dataDir, G3_TRAIN_FILES.api),
    tool: join(dataDir, G3_TRAIN_FILES.tool),
    corpus: join(dataDir, G3_TRAIN_FILES.corpus),
  }
  const tools = (await importToolsFromFile(files.corpus, { regularOnly: true })).tools
  const corpus = createToolbenchCorpusMap(tools)
  const ids = new Set(tools.map((tool) => tool.id))
  const apiRecords = (await readJsonRecords(files.api)) as CoarseRecord[]
  const toolByPath = new Map(
    ((await readJsonRecords(files.tool)) as CoarseRecord[]).map((record) => [record.path, record]),
  )
  let unmappable = 0
  let empty = 0
  const examples: TrainExample[] = []
  for (const [position, record] of apiRecords.entries()) {
    const toolRecord = toolByPath.get(record.path)
    const apis = tagList(record.query, '\nAPI: ')
    const toolNames = toolRecord ? tagList(toolRecord.query, '\nTool: ') : []
    const instruction = record.original_query?.trim() ?? ''
    if (!toolRecord || apis.length === 0 || instruction === '') {
      empty += 1
      continue
    }
    if (apis.length !== toolNames.length) {
      throw new ToolselError(
        'INVALID_INPUT',
        `${files.api} record ${position} (${record.path}): ${apis.length} APIs but ${toolNames.length} tools in ${files.tool}; the tag lines must align.`,
      )
    }
    const gold = unique(apis.map((api, index) => corpus.resolve(toolNames[index], api)))
    if (gold.some((id) => !ids.has(id))) {
      unmappable += 1
      continue
    }
    examples.push({ id: queryIdOf(record.path), instruction, gold })
  }
  const test = await loadSuiteQueries('toolbench-g3', dataDir, files.corpus)
  const { kept, byId, byText } = excludeTestQueries(examples, test.queries)
  return {
    name: 'toolbench-g3/train',
    files: [files.api, files.tool, files.corpus],
    tools,
    examples: kept,
    records: apiRecords.length,
    exclusions: { testFiles: test.files, byId, byText, unmappable, empty },
    notes: [
      'instruction = original_query; gold = zip(Tool:, API:) tag lines of tool_/api_instruction_5000.json joined on path',
      `gold mapped onto ${files.corpus} (${tools.length} APIs) by ToolBench-standardized names; queries with any unmapped gold dropped`,
      'query id = the ToolBench query id that starts path',
    ],
  }
}

/** `"<sentence>\nAPI: a, b, c."` → `['a', 'b', 'c']`. */
function tagList(query: string, tag: string): string[] {
  const start = query.lastIndexOf(tag)
  if (start < 0) return []
  return query
    .slice(start + tag.length)
    .trim()
    .replace(/\.$/, '')
    .split(', ')
    .map((name) => name.trim())
    .filter((name) => name !== '')
}

function queryIdOf(path: string): string {
  return /^(\d+)_/.exec(path)?.[1] ?? path
}

/**
 * Every query (id and text) the benchmark evaluates a suite on, with the files they came from:
 * what a training split must never contain.
 */
export async function loadSuiteQueries(
  suiteName: string,
  dataDir: string,
  corpusFile?: string,
): Promise<{ files: string[]; queries: Array<{ id: string; instruction: string }> }> {
  const [suite] = resolveSuites(suiteName)
  const { splits, skipped } = await suite.load({
    dataDir,
    tools: corpusFile,
    libraryMode: corpusFile ? 'corpus' : 'union',
    unmappable: 'keep',
  })
  if (skipped.length > 0) {
    // A test file that can't be read can't be excluded: refuse rather than risk a leak.
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot read the ${suiteName} test files to exclude them from training: ${skipped.map((item) => `${item.name} (${item.reason})`).join('; ')}.`,
    )
  }
  return {
    files: unique(splits.flatMap((split) => split.files.filter((file) => file !== corpusFile))),
    queries: splits.flatMap((split) =>
      split.cases.map((item) => ({ id: item.id, instruction: item.instruction })),
    ),
  }
}
