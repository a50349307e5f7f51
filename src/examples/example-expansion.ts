/**
 * doc2query-style document expansion from usage examples: each tool's BM25 document gets an
 * `examples` field holding the instructions that used it (the words people use to ask for it).
 * @module
 */
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'
import type { UsageExample } from './usage-example.ts'

/**
 * Instructions per tool in its expansion field, the newest kept. A tool asked for in thousands
 * of examples would otherwise get a document so long that BM25's length normalisation drowns its
 * name and description.
 */
export const DEFAULT_EXPANSION_EXAMPLES_PER_TOOL = 32

/**
 * Examples a tool needs before it gets an expansion document. One example is an anecdote: when
 * most tools have one example each and the tool being asked for has none (a new tool), single
 * examples of other tools would outscore it on their wording alone.
 */
export const DEFAULT_EXPANSION_MIN_EXAMPLES = 2

/**
 * Tool id → the text of its `examples` field: its newest examples' instructions, newest first;
 * tools with fewer than `minExamples` examples get none.
 */
export function exampleExpansions(
  examples: readonly UsageExample[],
  perTool = DEFAULT_EXPANSION_EXAMPLES_PER_TOOL,
  minExamples = DEFAULT_EXPANSION_MIN_EXAMPLES,
): Map<string, string> {
  return runSteps(expand(examples, perTool, minExamples))
}

/** `exampleExpansions`, yielding to the event loop every few milliseconds; the same texts. */
export function exampleExpansionsSliced(
  examples: readonly UsageExample[],
  perTool = DEFAULT_EXPANSION_EXAMPLES_PER_TOOL,
  minExamples = DEFAULT_EXPANSION_MIN_EXAMPLES,
  signal?: AbortSignal,
): Promise<Map<string, string>> {
  return runStepsSliced(expand(examples, perTool, minExamples), signal)
}

function* expand(
  examples: readonly UsageExample[],
  perTool: number,
  minExamples: number,
): Steps<Map<string, string>> {
  const texts = new Map<string, string[]>()
  const counts = new Map<string, number>()
  for (let position = examples.length - 1; position >= 0; position -= 1) {
    const example = examples[position]
    for (const id of example.tools) {
      counts.set(id, (counts.get(id) ?? 0) + 1)
      const list = texts.get(id) ?? []
      if (list.length >= perTool) continue
      list.push(example.instruction)
      texts.set(id, list)
    }
    yield
  }
  const expansions = new Map<string, string>()
  for (const [id, list] of texts) {
    if (counts.get(id)! >= minExamples) expansions.set(id, list.join('\n'))
    yield
  }
  return expansions
}
