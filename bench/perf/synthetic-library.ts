/**
 * Builds the large libraries the performance benchmark runs on, from real ToolBench data:
 *
 * - names: the 46,984 (tool, API) names ToolBench's environment exposes (ToolGen's
 *   `virtual_tokens.txt`), those with a known description first, then in file order;
 * - descriptions and parameters: the real ones wherever an API occurs in a ToolBench file here
 *   (the COLT G3 corpus, the StableToolBench and ToolPlanner query files' `api_list`s);
 * - the rest: a description written from the names ("<api words>: an endpoint of the <tool>
 *   API."), because ToolBench's per-API metadata is not published in any reachable snapshot;
 * - beyond 46,984 tools: copies of the first names with a ` v2` suffix on the tool name.
 * @module
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { importToolsFromFile } from '../../src/library/importers/index.ts'
import { EMPTY_PARAMETERS, type Tool } from '../../src/library/tool.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { expandHeadVerb } from '../../src/retrieve/bm25/query-expansion.ts'

export interface SyntheticLibraryStats {
  tools: number
  withRealDescription: number
  duplicatedNames: number
}

async function realTools(dataDir: string): Promise<Map<string, Tool>> {
  const byId = new Map<string, Tool>()
  const toolbench = join(dataDir, 'toolbench')
  const files = [
    join(toolbench, 'COLT/datasets/ToolBenchG3/corpus.jsonl'),
    join(toolbench, 'toolplanner/data/retrieval/G3_clear/test.json'),
    ...(await readdir(join(toolbench, 'StableToolBench/solvable_queries/test_instruction'))).map(
      (file) => join(toolbench, 'StableToolBench/solvable_queries/test_instruction', file),
    ),
  ]
  for (const file of files) {
    for (const tool of (await importToolsFromFile(file)).tools) {
      if (tool.description.trim() && !byId.has(tool.id)) byId.set(tool.id, tool)
    }
  }
  return byId
}

function words(name: string): string {
  return name
    .replace(/[_\-./]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
}

export async function buildSyntheticLibrary(
  dataDir: string,
  size: number,
): Promise<{ tools: Tool[]; stats: SyntheticLibraryStats }> {
  const text = await readFile(
    join(dataDir, 'toolbench/ToolGen/training/src/configs/virtual_tokens.txt'),
    'utf8',
  )
  const real = await realTools(dataDir)
  // Names with a real description first, so the smaller library is as real as it can be.
  const names = [...text.matchAll(/^<<(.+?)&&(.+)>>$/gm)]
    .map(([, tool, api]) => ({ tool, api }))
    .sort(
      (a, b) => Number(real.has(`${b.tool}::${b.api}`)) - Number(real.has(`${a.tool}::${a.api}`)),
    )
  const tools: Tool[] = []
  const seen = new Set<string>()
  let withRealDescription = 0
  let duplicatedNames = 0
  for (let index = 0; tools.length < size; index += 1) {
    const round = Math.floor(index / names.length)
    const { tool: baseTool, api } = names[index % names.length]
    const toolName = round === 0 ? baseTool : `${baseTool} v${round + 1}`
    const id = `${toolName}::${api}`
    if (seen.has(id)) continue
    seen.add(id)
    if (round > 0) duplicatedNames += 1
    const known = real.get(`${baseTool}::${api}`)
    if (known) withRealDescription += 1
    tools.push({
      id,
      name: api,
      namespace: toolName,
      description: known?.description ?? `${words(api)}: an endpoint of the ${baseTool} API.`,
      parameters: known?.parameters ?? EMPTY_PARAMETERS,
      tags: known?.tags,
    })
  }
  return { tools, stats: { tools: tools.length, withRealDescription, duplicatedNames } }
}

/** Realistic instructions to query with: ToolBench G1/G3 test queries. */
export async function loadBenchmarkQueries(dataDir: string): Promise<string[]> {
  const base = join(dataDir, 'toolbench/StableToolBench/solvable_queries/test_instruction')
  const queries: string[] = []
  for (const file of [
    'G1_instruction.json',
    'G1_category.json',
    'G1_tool.json',
    'G3_instruction.json',
  ]) {
    const records = JSON.parse(await readFile(join(base, file), 'utf8')) as Array<{ query: string }>
    queries.push(...records.map((record) => record.query))
  }
  return queries
}

/**
 * The BM25 queries a request of the default pipeline sends for each instruction: its rule-planned
 * steps, and the whole instruction where the plan is not just that (head verbs expanded, as the
 * retriever does).
 */
export async function bm25RequestQueries(
  instructions: readonly string[],
): Promise<{ steps: string[]; wholes: string[] }> {
  const planner = new RulePlanner()
  const steps: string[] = []
  const wholes: string[] = []
  for (const instruction of instructions) {
    const plan = await planner.plan(instruction)
    const whole = instruction.trim()
    for (const step of plan.steps) steps.push(expandHeadVerb(step))
    if (!(plan.steps.length === 1 && plan.steps[0] === whole)) wholes.push(expandHeadVerb(whole))
  }
  return { steps, wholes }
}
