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
  for (const candidate of sorted) {
    if (chosen.length >= cap || candidate.p < rule.threshold) break
    if (!chosen.includes(candidate.id)) chosen.push(candidate.id)
  }
  if (chosen.length === 0 && sorted[0] !== undefined && sorted[0].p >= rule.floor) {
    chosen.push(sorted[0].id)
  }
  return chosen
}
