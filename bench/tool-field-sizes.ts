/**
 * The largest value of each bounded field of a tool in real libraries (bench/README "Round 47:
 * tool field limits (hard50)"): the benchmark data's tool files (ToolBench G1/G3 `api_list`s, the
 * COLT corpora, Gorilla's API databases, CRAFT's toolsets, TaskBench's tool lists) and the demo
 * MCP servers, each imported as `toolsel index` imports it, then measured against the limits
 * (src/library/tool-id-limit.ts). Only tools are read, never a query.
 *
 *   node --import tsx bench/tool-field-sizes.ts [--data ../shared/data]
 * @module
 */
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: { data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' } },
})
const { importToolsFromPath } = await import('../src/library/importers/index.ts')
const limits = await import('../src/library/tool-id-limit.ts')

const STABLE = 'toolbench/StableToolBench/solvable_queries/test_instruction'
const FILES = [
  `${STABLE}/G1_instruction.json`,
  `${STABLE}/G1_category.json`,
  `${STABLE}/G1_tool.json`,
  `${STABLE}/G3_instruction.json`,
  'toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl',
  'toollens/COLT/datasets/ToolLens/corpus.jsonl',
  'gorilla/gorilla/data/api/huggingface_api.jsonl',
  'gorilla/gorilla/data/api/tensorflowhub_api.jsonl',
  'gorilla/gorilla/data/api/torchhub_api.jsonl',
  'craft/CRAFT/tab_and_math/MATH/craft/algebra/5_deduplicated_tools.csv',
  'craft/CRAFT/tab_and_math/TabMWP/craft/tabmwp/5_deduplicated_tools.csv',
  'craft/CRAFT/vqa/results/craft_tools/5_deduplicated_tool.csv',
  'taskbench/JARVIS/taskbench/data_huggingface/tool_desc.json',
  'taskbench/JARVIS/taskbench/data_multimedia/tool_desc.json',
].map((file) => join(values.data, file))

interface Largest {
  value: number
  where: string
}
const largest = new Map<string, Largest>()
function note(field: string, value: number, where: string): void {
  const known = largest.get(field)
  if (known === undefined || value > known.value) largest.set(field, { value, where })
}

/** The longest array under each key of `parameters` (`enum`, `required`, others as `[]`). */
function arrays(parameters: unknown, where: string): void {
  const stack: unknown[] = [parameters]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value !== 'object' || value === null) continue
    for (const [key, child] of Object.entries(value)) {
      if (Array.isArray(child)) {
        const field = key === 'enum' || key === 'required' ? key : 'other arrays'
        note(`parameters: ${field} items`, child.length, where)
      }
      stack.push(child)
    }
  }
}

let tools = 0
for (const path of [...FILES, 'src/library/demo/servers']) {
  const result = await importToolsFromPath(path, {})
  for (const tool of result.tools) {
    tools += 1
    const where = `${path.slice(path.lastIndexOf('/') + 1)}: ${tool.id.slice(0, 60)}`
    note('description chars', tool.description.length, where)
    note('tags', tool.tags?.length ?? 0, where)
    note('source chars (JSON)', JSON.stringify(tool.source ?? {}).length, where)
    note('tool chars (JSON)', JSON.stringify(tool).length, where)
    const properties = (tool.parameters as { properties?: object }).properties
    note('top-level parameters', Object.keys(properties ?? {}).length, where)
    arrays(tool.parameters, where)
  }
}

const LIMITS: Record<string, number | undefined> = {
  'description chars': limits.MAX_TOOL_DESCRIPTION_CHARS,
  tags: limits.MAX_TOOL_TAGS,
  'source chars (JSON)': limits.MAX_TOOL_SOURCE_CHARS,
}
console.log(`${tools} tools from ${FILES.length} data files and the demo servers`)
console.log('| field | largest | limit | tool |')
console.log('| --- | ---: | ---: | --- |')
for (const [field, { value, where }] of [...largest].sort()) {
  const limit = LIMITS[field]
  console.log(
    `| ${field} | ${value.toLocaleString('en-US')} | ${limit?.toLocaleString('en-US') ?? ''} | ${where} |`,
  )
}
