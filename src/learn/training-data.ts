/**
 * The training splits the shipped default model learns from (data README sections 1.4 and 2):
 * ToolPlanner's coarse-instruction G3 queries mapped onto COLT's 1,419-API G3 corpus, minus every
 * query id and text of the G3 test files, and ToolLens' train qrels. Test queries are read only
 * to exclude them.
 * @module
 */
import { join } from 'node:path'
import { importToolsFromFile } from '../library/importers/index.ts'
import type { Tool } from '../library/tool.ts'
import { createBeirSuite } from '../bench/suites/beir-suite.ts'
import { readJsonRecords } from '../bench/suites/read-data-file.ts'
import { createToolbenchCorpusMap } from '../bench/suites/toolbench-corpus.ts'

export interface TrainingCase {
  id: string
  instruction: string
  gold: string[]
}

export interface TrainingSet {
  /** `toolplanner-g3`, `toollens`. */
  name: string
  tools: Tool[]
  cases: TrainingCase[]
  /** What was read and what was left out, for the data card. */
  notes: string[]
}

export const TOOLPLANNER_DIR = 'toolbench/toolplanner/data/category/coarse_instruction'
export const G3_CORPUS = 'toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl'
/** Test files whose query ids and texts must never be trained on. */
export const G3_TEST_FILES = [
  'toolbench/toolplanner/data/retrieval/G3_clear/test.json',
  'toolbench/StableToolBench/solvable_queries/test_instruction/G3_instruction.json',
]
export const TOOLLENS_DIR = 'toollens/COLT/datasets/ToolLens'

const normalizeText = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim()

function tagList(query: string, tag: string): string[] {
  const at = query.lastIndexOf(`\n${tag}: `)
  if (at < 0) return []
  return query
    .slice(at + tag.length + 3)
    .replace(/\.\s*$/, '')
    .split(', ')
    .map((item) => item.trim())
}

/** ToolPlanner coarse-instruction G3 train substitute on the G3 corpus, test queries removed. */
export async function loadToolPlannerG3(dataDir: string): Promise<TrainingSet> {
  const tools = (await importToolsFromFile(join(dataDir, G3_CORPUS))).tools
  const corpusMap = createToolbenchCorpusMap(tools)
  const ids = new Set(tools.map((tool) => tool.id))
  const testIds = new Set<string>()
  const testTexts = new Set<string>()
  for (const file of G3_TEST_FILES) {
    for (const record of (await readJsonRecords(join(dataDir, file))) as Array<
      Record<string, unknown>
    >) {
      testIds.add(String(record.query_id))
      if (typeof record.query === 'string') testTexts.add(normalizeText(record.query))
    }
  }
  const byPath = new Map<string, { tools?: string[]; apis?: string[]; query?: string }>()
  for (const [kind, file] of [
    ['tools', 'tool_instruction_5000.json'],
    ['apis', 'api_instruction_5000.json'],
  ] as const) {
    const records = (await readJsonRecords(join(dataDir, TOOLPLANNER_DIR, file))) as Array<
      Record<string, string>
    >
    for (const record of records) {
      const entry = byPath.get(record.path) ?? {}
      entry[kind] = tagList(record.query, kind === 'tools' ? 'Tool' : 'API')
      entry.query = record.original_query
      byPath.set(record.path, entry)
    }
  }
  const cases: TrainingCase[] = []
  let excluded = 0
  let unmapped = 0
  for (const [path, entry] of byPath) {
    const id = /^(\d+)/.exec(path)?.[1] ?? path
    const instruction = entry.query ?? ''
    if (testIds.has(id) || testTexts.has(normalizeText(instruction))) {
      excluded += 1
      continue
    }
    const toolNames = entry.tools ?? []
    const apiNames = entry.apis ?? []
    if (toolNames.length === 0 || toolNames.length !== apiNames.length) {
      unmapped += 1
      continue
    }
    const gold = [
      ...new Set(toolNames.map((tool, index) => corpusMap.resolve(tool, apiNames[index]))),
    ]
    if (!gold.every((goldId) => ids.has(goldId)) || instruction.length === 0) {
      unmapped += 1
      continue
    }
    cases.push({ id, instruction, gold })
  }
  cases.sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id))
  return {
    name: 'toolplanner-g3',
    tools,
    cases,
    notes: [
      `${TOOLPLANNER_DIR}/{tool,api}_instruction_5000.json on ${G3_CORPUS}: ${cases.length} queries; ` +
        `${excluded} left out because their id or text is in ${G3_TEST_FILES.join(' or ')}; ` +
        `${unmapped} left out because a gold API is not in the corpus`,
    ],
  }
}

/** ToolLens train qrels (COLT), on its 464-API corpus. */
export async function loadToolLensTrain(dataDir: string): Promise<TrainingSet> {
  const suite = createBeirSuite({
    name: 'toollens',
    description: 'ToolLens train',
    dir: TOOLLENS_DIR,
    split: 'train',
  })
  const { splits } = await suite.load({ dataDir, libraryMode: 'union', unmappable: 'drop' })
  const [split] = splits
  if (split === undefined)
    throw new Error(`ToolLens train split not found under ${join(dataDir, TOOLLENS_DIR)}`)
  return {
    name: 'toollens',
    tools: split.tools,
    cases: split.cases.map(({ id, instruction, gold }) => ({ id, instruction, gold })),
    notes: [`${TOOLLENS_DIR} qrels/train.tsv: ${split.cases.length} queries`],
  }
}
