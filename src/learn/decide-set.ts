/**
 * The count decision: which of an instruction's scored candidates to select. A candidate is
 * taken when its probability reaches `threshold`; when none does, the best one is taken if it
 * reaches `floor` (a request usually needs some tool); never more than the planner's clauses plus
 * `extra` (one clause can ask for two tools, but rarely for more).
 * @module
 */

export interface DecisionRule {
  threshold: number
  floor: number
  extra: number
  /** Also take candidates within this share of the best probability (0: off). */
  relative?: number
  /** Take round(sum of probabilities × countScale) candidates instead of thresholding (0: off). */
  countScale?: number
}

export interface ScoredCandidate {
  id: string
  /** The model's probability that the tool is needed. */
  p: number
}

/** Selected ids, most probable first. `steps` is the number of planner clauses. */
export function decideSet(
  candidates: readonly ScoredCandidate[],
  steps: number,
  rule: DecisionRule,
): string[] {
  const sorted = [...candidates].sort((a, b) => b.p - a.p || (a.id < b.id ? -1 : 1))
  const cap = Math.max(1, steps) + rule.extra
  const chosen: string[] = []
  const best = sorted[0]?.p ?? 0
  if (rule.countScale) {
    const sum = sorted.reduce((total, candidate) => total + candidate.p, 0)
    const count = Math.min(cap, Math.round(sum * rule.countScale))
    for (const candidate of sorted.slice(0, count)) chosen.push(candidate.id)
  } else {
    for (const candidate of sorted) {
      if (chosen.length >= cap) break
      const relative = rule.relative ? candidate.p >= best * rule.relative : false
      if (candidate.p < rule.threshold && !relative) break
      if (!chosen.includes(candidate.id)) chosen.push(candidate.id)
    }
  }
  if (chosen.length === 0 && sorted[0] !== undefined && sorted[0].p >= rule.floor) {
    chosen.push(sorted[0].id)
  }
  return chosen
}
