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
import { readDataText, readJsonRecords } from '../bench/suites/read-data-file.ts'
import { parseTaskbenchRecord } from '../bench/suites/taskbench-suite.ts'
import { createToolbenchCorpusMap } from '../bench/suites/toolbench-corpus.ts'
import { normalizeQueryText } from '../train/train-split.ts'

export interface TrainingCase {
  id: string
  instruction: string
  /** The gold tool ids; empty for a count-only case (`shape`). */
  gold: string[]
  /**
   * A count-only label (TaskBench's tool-graph shape): `single` needs exactly one tool, `multi`
   * two or more, which tools is unknown. Such a case trains only the count, never the candidate
   * model.
   */
  shape?: 'single' | 'multi'
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
  const tools = (await importToolsFromFile(join(dataDir, G3_CORPUS), { regularOnly: true })).tools
  const corpusMap = createToolbenchCorpusMap(tools)
  const ids = new Set(tools.map((tool) => tool.id))
  const testIds = new Set<string>()
  const testTexts = new Set<string>()
  for (const file of G3_TEST_FILES) {
    for (const record of (await readJsonRecords(join(dataDir, file))) as Array<
      Record<string, unknown>
    >) {
      testIds.add(String(record.query_id))
      if (typeof record.query === 'string') testTexts.add(normalizeQueryText(record.query))
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
    if (testIds.has(id) || testTexts.has(normalizeQueryText(instruction))) {
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

/** TaskBench domains whose requests' shapes are a training source (dailylifeapis stays hidden). */
export const TASKBENCH_SHAPE_DOMAINS = ['huggingface', 'multimedia'] as const
export const taskbenchShapeFiles = (domain: string) => ({
  requests: `taskbench/JARVIS/taskbench/data_${domain}/user_requests.json`,
  shapes: `taskbench/JARVIS/taskbench/data_${domain}/alignment_ids.json`,
  tools: `taskbench/JARVIS/taskbench/data_${domain}/tool_desc.json`,
  /** The evaluated records (the bench's taskbench-<domain> suite): excluded by id and text. */
  evaluated: `taskbench/partial/${domain}/data.head.jsonl`,
})

/**
 * The shape of every request in TaskBench's `alignment_ids.json` (`{check: {single|chain|dag:
 * [ids]}}`), as the union over its checks: `single` (one tool) or `multi` (chain or dag, two or
 * more). An id given both shapes by different checks is left out.
 */
export function taskbenchShapes(alignment: unknown): Map<string, 'single' | 'multi'> {
  const seen = new Map<string, Set<'single' | 'multi'>>()
  if (alignment !== null && typeof alignment === 'object') {
    for (const check of Object.values(alignment as Record<string, unknown>)) {
      if (check === null || typeof check !== 'object') continue
      for (const [shape, ids] of Object.entries(check as Record<string, unknown>)) {
        if (!Array.isArray(ids) || !['single', 'chain', 'dag'].includes(shape)) continue
        const kind = shape === 'single' ? 'single' : 'multi'
        for (const id of ids) {
          const set = seen.get(String(id)) ?? new Set()
          set.add(kind)
          seen.set(String(id), set)
        }
      }
    }
  }
  const out = new Map<string, 'single' | 'multi'>()
  for (const [id, kinds] of seen) if (kinds.size === 1) out.set(id, [...kinds][0])
  return out
}

/**
 * Count-only cases from TaskBench's full request files (a domain's `user_requests.json` with the
 * shapes of `alignment_ids.json`): every request outside the evaluated records, by id and by
 * normalised text. The evaluated file is read only for its ids and texts, to leave them out.
 */
export async function loadTaskbenchShapes(
  dataDir: string,
  domain: string,
): Promise<TrainingSet & { excluded: number; conflicting: number }> {
  const files = taskbenchShapeFiles(domain)
  const tools = (
    await importToolsFromFile(join(dataDir, files.tools), {
      format: 'taskbench',
      regularOnly: true,
    })
  ).tools
  const evaluatedIds = new Set<string>()
  const evaluatedTexts = new Set<string>()
  for (const [position, record] of (
    await readJsonRecords(join(dataDir, files.evaluated))
  ).entries()) {
    const parsed = parseTaskbenchRecord(record)
    const fields = (record ?? {}) as Record<string, unknown>
    const text = fields.instruction ?? fields.user_request
    evaluatedIds.add(parsed?.id ?? String(fields.id ?? position))
    if (typeof text === 'string') evaluatedTexts.add(normalizeQueryText(text))
  }
  const shapes = taskbenchShapes(JSON.parse(await readDataText(join(dataDir, files.shapes))))
  const cases: TrainingCase[] = []
  const seen = new Set<string>()
  let excluded = 0
  let conflicting = 0
  for (const record of await readJsonRecords(join(dataDir, files.requests))) {
    const fields = (record ?? {}) as Record<string, unknown>
    const id = String(fields.id ?? '')
    const instruction = fields.user_request ?? fields.instruction
    if (id === '' || typeof instruction !== 'string' || instruction.trim() === '') continue
    if (evaluatedIds.has(id) || evaluatedTexts.has(normalizeQueryText(instruction))) {
      excluded += 1
      continue
    }
    const shape = shapes.get(id)
    if (shape === undefined) {
      conflicting += 1
      continue
    }
    if (seen.has(id)) continue
    seen.add(id)
    cases.push({ id: `tb-${domain}:${id}`, instruction, gold: [], shape })
  }
  cases.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const single = cases.filter((trainingCase) => trainingCase.shape === 'single').length
  return {
    name: `taskbench-${domain}-shapes`,
    tools,
    cases,
    excluded,
    conflicting,
    notes: [
      `${files.requests} with the tool-graph shapes of ${files.shapes} (count-only labels: ` +
        `${single} one-tool, ${cases.length - single} with two or more tools; they train the ` +
        `count, not the candidate model) on ${files.tools}: ${cases.length} requests; ${excluded} ` +
        `left out because their id or text is an evaluated record of ${files.evaluated}` +
        `${conflicting > 0 ? `; ${conflicting} without a single shape` : ''}; the bench's ` +
        `taskbench-${domain} suite is in-domain for a model trained on them`,
    ],
  }
}
