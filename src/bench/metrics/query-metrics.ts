/**
 * Every quality metric of one benchmark query, computed from match keys (tool ids, or the
 * equivalence class a suite matches by, e.g. Gorilla's api_call).
 * @module
 */
import { candidateRecall, mergeRankedCandidates, recallAtK } from './candidate-recall.ts'
import { plannerReward } from '../../rewards/planner-reward.ts'
import { setScores, type SetScores } from './set-metrics.ts'

/** The cut-offs of recall@K; 15 is the paper's K (candidates per step). */
export const RECALL_KS = [1, 3, 5, 10, 15] as const

export interface QueryMetricsInput {
  /** The predicted set (the union of the selected tools). */
  predicted: readonly string[]
  gold: readonly string[]
  /** Each step's ranked candidates. */
  stepCandidates: readonly (readonly string[])[]
  /**
   * The planner's steps' candidates, when they differ from `stepCandidates` (the learned
   * selector's extra whole-instruction step is not a planner step): the planner reward and the
   * planning loss use these. Default: `stepCandidates`.
   */
  plannedCandidates?: readonly (readonly string[])[]
  /** The gold tools that survive the lexical filter (see lexical-filter.ts). */
  filteredGold: readonly string[]
}

/**
 * The first stage that made a query miss exact match, with one tool per step:
 * - `planning`: fewer steps than gold tools, so too few tools were predicted;
 * - `retrieval`: some gold tool is in no step's candidates;
 * - `selection`: every gold tool was among the candidates and there were enough steps, yet the
 *   picks were wrong, repeated or extra.
 */
export type LossStage = 'planning' | 'retrieval' | 'selection'

export interface QueryMetrics extends SetScores {
  /** Share of gold tools among the union of all steps' candidates. */
  poolRecall: number
  /** 1 when every gold tool is among the candidates: an upper bound on what selection can reach. */
  poolComplete: number
  /** Share of gold tools among the first K of the merged ranked list, for each K of RECALL_KS. */
  recallAtK: Record<string, number>
  /** The paper's planner reward (precision, rank-discounted recall, F1). */
  plannerReward: { precision: number; recall: number; f1: number }
  /**
   * Set scores against the filtered gold, or null when the filter removed every gold tool (the
   * query then leaves the filtered averages). Filtered-out gold tools are also removed from the
   * prediction: predicting one is neither required nor counted as a false positive.
   */
  filtered: SetScores | null
  /** Where exact match was lost; null for an exact match. */
  loss: LossStage | null
}

export function queryMetrics(input: QueryMetricsInput): QueryMetrics {
  const { predicted, gold, stepCandidates, filteredGold } = input
  const merged = mergeRankedCandidates(stepCandidates)
  const poolRecall = candidateRecall(merged, gold)
  const reward = plannerReward(input.plannedCandidates ?? stepCandidates, gold)
  const kept = new Set(filteredGold)
  const removed = new Set(gold.filter((key) => !kept.has(key)))
  const scores = setScores(predicted, gold)
  const filtered =
    kept.size === 0 && gold.length > 0
      ? null
      : setScores(
          predicted.filter((key) => !removed.has(key)),
          [...kept],
        )
  return {
    ...scores,
    poolRecall,
    poolComplete: poolRecall === 1 ? 1 : 0,
    recallAtK: Object.fromEntries(RECALL_KS.map((k) => [k, recallAtK(merged, gold, k)])),
    plannerReward: { precision: reward.precision, recall: reward.recall, f1: reward.f1 },
    filtered,
    loss: lossStage(scores.exactMatch, input, poolRecall),
  }
}

function lossStage(
  exactMatch: number,
  input: QueryMetricsInput,
  poolRecall: number,
): LossStage | null {
  if (exactMatch === 1) return null
  const goldSize = new Set(input.gold).size
  const steps = (input.plannedCandidates ?? input.stepCandidates).length
  if (steps < goldSize && new Set(input.predicted).size < goldSize) {
    return 'planning'
  }
  return poolRecall < 1 ? 'retrieval' : 'selection'
}
