/**
 * Every benchmark suite by name, with its default files under the data root (shared/data; see
 * its README for what each file is). `all` runs them in this order.
 * @module
 */
import { ToolselError } from '../../errors.ts'
import { createBeirSuite } from './beir-suite.ts'
import type { BenchSuite } from './bench-suite.ts'
import { createCraftSuite } from './craft-suite.ts'
import { createDemoSuite } from './demo-suite.ts'
import { createFunctionsSuite, FILE_SUITE_PREFIX } from './functions-suite.ts'
import { createGorillaSuite } from './gorilla-suite.ts'
import { createTaskbenchSuite } from './taskbench-suite.ts'
import { createToolbenchSuite } from './toolbench-suite.ts'

const STABLE = 'toolbench/StableToolBench/solvable_queries/test_instruction'
const EXAMPLE = 'toolbench/ToolBench/data_example/instruction'
const GORILLA = 'gorilla/gorilla/data'
const CRAFT = 'craft/CRAFT'
const COARSE = 'toolbench/toolplanner/data/category/coarse_instruction'
const TASKBENCH = 'taskbench/JARVIS/taskbench'

const taskbench = (domain: string) =>
  createTaskbenchSuite({
    name: `taskbench-${domain}`,
    description: `TaskBench ${domain}: tool_desc.json library, gold = task_nodes names`,
    tools: `${TASKBENCH}/data_${domain}/tool_desc.json`,
    queries: `taskbench/partial/${domain}/data.head.jsonl`,
  })

const gorilla = (name: string, hub: string, label: string) =>
  createGorillaSuite({
    name,
    description: `Gorilla APIBench ${label}: API database library, one gold api_call per question`,
    apis: `${GORILLA}/api/${hub}_api.jsonl`,
    questions: `${GORILLA}/apibench/${hub}_train.json`,
  })

export const SUITES: readonly BenchSuite[] = [
  createToolbenchSuite({
    name: 'toolbench-g1',
    description:
      'ToolBench G1 (StableToolBench solvable test sets + data_example), gold = relevant APIs',
    parts: [
      { name: 'G1_instruction', file: `${STABLE}/G1_instruction.json` },
      { name: 'G1_category', file: `${STABLE}/G1_category.json` },
      { name: 'G1_tool', file: `${STABLE}/G1_tool.json` },
      { name: 'data_example', file: `${EXAMPLE}/G1_query.json` },
    ],
  }),
  createToolbenchSuite({
    name: 'toolbench-g2',
    description: 'ToolBench G2 (StableToolBench solvable test sets), gold = relevant APIs',
    parts: [
      { name: 'G2_instruction', file: `${STABLE}/G2_instruction.json` },
      { name: 'G2_category', file: `${STABLE}/G2_category.json` },
    ],
  }),
  createToolbenchSuite({
    name: 'toolbench-g3',
    description:
      'ToolBench G3 (StableToolBench, ToolPlanner G3_clear, data_example), corpus: COLT G3',
    parts: [
      { name: 'G3_instruction', file: `${STABLE}/G3_instruction.json` },
      { name: 'G3_clear', file: 'toolbench/toolplanner/data/retrieval/G3_clear/test.json' },
      { name: 'data_example', file: `${EXAMPLE}/G3_query.json` },
    ],
    corpus: 'toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl',
    training: {
      api: `${COARSE}/api_instruction_5000.json`,
      tool: `${COARSE}/tool_instruction_5000.json`,
      exclude: [
        'toolbench/toolplanner/data/retrieval/G3_clear/test.json',
        `${STABLE}/G3_instruction.json`,
        `${EXAMPLE}/G3_query.json`,
      ],
    },
  }),
  createBeirSuite({
    name: 'toollens',
    description: 'ToolLens (COLT BEIR split over 464 ToolBench APIs), gold = qrels',
    dir: 'toollens/COLT/datasets/ToolLens',
    trainSplit: 'train',
  }),
  createBeirSuite({
    name: 'toolbench-g3-colt',
    description:
      'COLT ToolBench-G3 BEIR split (1,419 APIs); its queries.jsonl is not published here',
    dir: 'toolbench/COLT/datasets/ToolBenchG3',
  }),
  gorilla('gorilla-torchhub', 'torchhub', 'TorchHub'),
  gorilla('gorilla-huggingface', 'huggingface', 'HuggingFace'),
  gorilla('gorilla-tensorflow', 'tensorflowhub', 'TensorFlow Hub'),
  createCraftSuite({
    name: 'craft-math',
    description: 'CRAFT MATH-algebra toolset: query = training problem, gold = its tool_id',
    toolset: `${CRAFT}/tab_and_math/MATH/craft/algebra/5_deduplicated_tools.csv`,
  }),
  createCraftSuite({
    name: 'craft-tabmwp',
    description: 'CRAFT TabMWP toolset: query = problem + table, gold = its tool_id',
    toolset: `${CRAFT}/tab_and_math/TabMWP/craft/tabmwp/5_deduplicated_tools.csv`,
  }),
  createCraftSuite({
    name: 'craft-vqa',
    description: 'CRAFT VQA toolset: query = question, gold = its tool_id',
    toolset: `${CRAFT}/vqa/results/craft_tools/5_deduplicated_tool.csv`,
  }),
  taskbench('huggingface'),
  taskbench('multimedia'),
  taskbench('dailylifeapis'),
  createDemoSuite(),
]

/**
 * The suites a `--suite` value names: one suite, every suite for `all`, or a user's own query
 * file for `file:<path>` (see functions-suite.ts).
 */
export function resolveSuites(name: string): BenchSuite[] {
  if (name === 'all') return [...SUITES]
  if (name.startsWith(FILE_SUITE_PREFIX) && name.length > FILE_SUITE_PREFIX.length) {
    return [createFunctionsSuite(name.slice(FILE_SUITE_PREFIX.length))]
  }
  const suite = SUITES.find((candidate) => candidate.name === name)
  if (!suite) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Unknown benchmark suite "${name}" (available: all, ${SUITES.map((item) => item.name).join(', ')}, or file:<path> for your own queries).`,
      { details: { suite: name } },
    )
  }
  return [suite]
}
