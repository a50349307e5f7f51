/**
 * The count decision: which of an instruction's scored candidates to select. A candidate is
 * taken when its probability reaches `threshold`; when none does, the best one is taken if it
 * reaches `floor` (a request usually needs some tool); never more than the planner's clauses plus
 * `extra` (one clause can ask for two tools, but rarely for more). With `stepFloor`, an explicit
 * request clause that got no tool gets its most probable first candidate above that floor (by the
 * candidate's acceptance probability `a` when it has one).
 * @module
 */
import { startsWithAction } from '../plan/request-cues.ts'

export interface DecisionRule {
  threshold: number
  floor: number
  extra: number
  /** Also take candidates within this share of the best probability (0: off). */
  relative?: number
  /** Take round(sum of probabilities × countScale) candidates instead of thresholding (0: off). */
  countScale?: number
  /**
   * A clause none of whose first candidates was taken gets its most probable one of them when
   * that reaches this (0 or absent: off): in an explicit request each clause usually asks for one
   * tool, and its best match is then right far more often than the whole-instruction features
   * suggest.
   */
  stepFloor?: number
}

export interface ScoredCandidate {
  id: string
  /** The model's probability that the tool is needed. */
  p: number
  /**
   * The acceptance probability `stepFloor` tests a clause's pick with (LearnedModel
   * `acceptance`; absent: `p`).
   */
  a?: number
}

/** How many of a clause's first BM25 candidates `stepFloor` looks at. */
export const STEP_FLOOR_DEPTH = 3

/**
 * The candidates `stepFloor` may pick for a clause: its first BM25 ones when the clause opens
 * with an action or a request ("email the forecast to Ann"), none for a question or a statement
 * of need, whose best match is less often the tool.
 */
export function stepFloorCandidates(
  clause: string,
  candidates: ReadonlyArray<{ id: string }>,
): string[] {
  if (!startsWithAction(clause.trim())) return []
  return candidates.slice(0, STEP_FLOOR_DEPTH).map((candidate) => candidate.id)
}

/**
 * The candidates' order wherever they are ranked: most probable first, ties by id (a total
 * order, so every sort of the same candidates agrees; LearnedSelector sorts once in it, so each
 * later sort finds one run).
 */
export function mostProbableFirst(
  a: { readonly id: string; readonly p: number },
  b: { readonly id: string; readonly p: number },
): number {
  return b.p - a.p || (a.id < b.id ? -1 : 1)
}

/**
 * Selected ids, most probable first (clause picks of `stepFloor` after them). `steps` is the
 * number of planner clauses, `stepTops` each clause's `stepFloorCandidates`.
 */
export function decideSet(
  candidates: readonly ScoredCandidate[],
  steps: number,
  rule: DecisionRule,
  stepTops: ReadonlyArray<readonly string[]> = [],
): string[] {
  const sorted = [...candidates].sort(mostProbableFirst)
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
  if (rule.stepFloor && stepTops.length > 1) {
    const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]))
    for (const tops of stepTops) {
      if (chosen.length >= cap) break
      const first = tops.slice(0, STEP_FLOOR_DEPTH)
      if (first.length === 0 || first.some((id) => chosen.includes(id))) continue
      let best = first[0]
      for (const id of first) if ((byId.get(id)?.p ?? 0) > (byId.get(best)?.p ?? 0)) best = id
      // Which candidate a clause gets is `p`'s call, whether it gets one the acceptance's.
      const pick = byId.get(best)
      if ((pick?.a ?? pick?.p ?? 0) >= rule.stepFloor) chosen.push(best)
    }
  }
  if (chosen.length === 0 && sorted[0] !== undefined && sorted[0].p >= rule.floor) {
    chosen.push(sorted[0].id)
  }
  return chosen
}

/**
 * Gives each chosen tool to one request that retrieved it, one tool per request: (tool, request)
 * pairs are taken best rank first, clauses before the whole instruction (`wholeIndex`, -1 when
 * there is none). Returns each request's tool (null: none); a chosen tool no free request
 * retrieved is left out.
 */
export function placeTools(
  chosen: readonly string[],
  lists: ReadonlyArray<readonly string[]>,
  wholeIndex: number,
): Array<string | null> {
  const pairs: Array<{ id: string; index: number; key: number }> = []
  for (const id of chosen) {
    lists.forEach((list, index) => {
      const rank = list.indexOf(id)
      if (rank >= 0) pairs.push({ id, index, key: rank + (index === wholeIndex ? 1000 : 0) })
    })
  }
  pairs.sort((a, b) => a.key - b.key || a.index - b.index)
  const placed = new Set<string>()
  const out: Array<string | null> = lists.map(() => null)
  for (const { id, index } of pairs) {
    if (placed.has(id) || out[index] !== null) continue
    out[index] = id
    placed.add(id)
  }
  return out
}
