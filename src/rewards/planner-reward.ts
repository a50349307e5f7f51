/**
 * The planner reward of the reference paper ("Training Small Language Models for Transferable
 * Tool Selection", 2026): a plan is good when each of its steps retrieves a distinct gold tool,
 * high in its ranked list. It scores a plan through the retriever, independently of the selector.
 * One function for the benchmark's metric and the reward service (`/v1/rewards/planner`), so a
 * model trained on the reward is scored by the same code it was trained on.
 * @module
 */

export interface PlannerReward {
  /** Steps that claimed a gold tool / steps. 0 for a plan without steps. */
  precision: number
  /** Rank-discounted share of gold tools claimed (see `plannerReward`). */
  recall: number
  /** Harmonic mean of the two; 0 when both are 0. */
  f1: number
  /** Per step: the gold id it claimed and the 1-based rank it was found at, or null. */
  claims: Array<{ id: string; rank: number } | null>
}

/** DCG-style discount of a hit at a 1-based rank: 1 at rank 1, 0.63 at 2, 0.5 at 3, 0.25 at 15. */
export function rankDiscount(rank: number): number {
  return 1 / Math.log2(rank + 1)
}

/**
 * Steps are processed in order; each walks its ranked candidate list and claims the first gold
 * tool no earlier step has claimed. precision = claiming steps / steps. recall = the sum of
 * `rankDiscount(rank)` over claimed gold tools, divided by |gold| (so an unclaimed gold tool adds
 * 0, and a perfect plan retrieving every gold tool at rank 1 scores 1). Empty gold: recall 1.
 */
export function plannerReward(
  stepCandidates: readonly (readonly string[])[],
  gold: readonly string[],
): PlannerReward {
  const goldSet = new Set(gold)
  const claimed = new Set<string>()
  let discounted = 0
  const claims = stepCandidates.map((candidates) => {
    const rank = candidates.findIndex((id) => goldSet.has(id) && !claimed.has(id))
    if (rank < 0) return null
    claimed.add(candidates[rank])
    discounted += rankDiscount(rank + 1)
    return { id: candidates[rank], rank: rank + 1 }
  })
  const claiming = claims.filter((claim) => claim !== null).length
  const precision = stepCandidates.length === 0 ? 0 : claiming / stepCandidates.length
  const recall = goldSet.size === 0 ? 1 : discounted / goldSet.size
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  return { precision, recall, f1, claims }
}
