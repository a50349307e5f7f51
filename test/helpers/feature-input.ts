/** A learned-selector feature input built the way the selector's pipeline builds it, for tests. */
import type { Tool } from '../../src/library/tool.ts'
import type { FeatureInput } from '../../src/learn/candidate-features.ts'
import { searchFunction } from '../../src/learn/training-rows.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { Bm25Retriever } from '../../src/retrieve/bm25/bm25-retriever.ts'

/** BM25 settings of the tests (the defaults' values). */
export const BM25_SETTINGS = {
  k1: 1.2,
  b: 0.75,
  fieldWeights: { name: 3, description: 1, parameters: 1, namespace: 1 },
}

/** BM25 over `tools` for the instruction and each rule-planner clause (k 15, no threshold). */
export function featureInputFor(instruction: string, tools: readonly Tool[]): FeatureInput {
  const search = searchFunction(Bm25Retriever.build(tools, BM25_SETTINGS), 15)
  const byId = new Map(tools.map((tool) => [tool.id, tool]))
  return {
    instruction,
    whole: search(instruction),
    steps: new RulePlanner().split(instruction).map((text) => ({ text, candidates: search(text) })),
    tool: (id) => byId.get(id)!,
  }
}
