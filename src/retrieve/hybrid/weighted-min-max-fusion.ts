/**
 * Score fusion as in orama's hybrid search (`packages/orama/src/methods/search-hybrid.ts`): scale
 * each list's scores to [0, 1] by its own minimum and maximum, then add them with weights.
 * Unlike rank fusion it keeps how far apart scores are within a list.
 * @module
 */
import type { Candidate } from '../../contracts.ts'
import { bestScores, compareCandidates } from './fusion-utils.ts'

export interface WeightedMinMaxFusionOptions {
  /** One weight per list, non-negative. Default `1 / lists.length` each, so fused scores lie in [0, 1]. */
  weights?: readonly number[]
}

/**
 * Fuses scored lists into one, best first (ties by id). A list whose scores are all equal
 * scales them to 1 (each of its candidates is as good as its best); a duplicated id counts once
 * with its best score.
 */
export function weightedMinMaxFusion(
  lists: readonly (readonly Candidate[])[],
  options: WeightedMinMaxFusionOptions = {},
): Candidate[] {
  const fused = new Map<string, number>()
  for (const [listIndex, list] of lists.entries()) {
    const weight = options.weights?.[listIndex] ?? 1 / lists.length
    const scores = bestScores(list)
    let min = Infinity
    let max = -Infinity
    for (const score of scores.values()) {
      min = Math.min(min, score)
      max = Math.max(max, score)
    }
    for (const [id, score] of scores) {
      fused.set(id, (fused.get(id) ?? 0) + weight * minMaxScale(score, min, max))
    }
  }
  return [...fused].map(([id, score]) => ({ id, score })).sort(compareCandidates)
}

/** `score` scaled to [0, 1] within [min, max]; 1 when the list has one distinct score. */
function minMaxScale(score: number, min: number, max: number): number {
  if (max === min) return 1
  // Halve before subtracting: max - min overflows to Infinity for scores near ±1.8e308.
  const scaled = (score / 2 - min / 2) / (max / 2 - min / 2)
  // NaN only with infinite scores: the infinite end is 0 or 1, everything else in between.
  if (Number.isNaN(scaled)) return score === max ? 1 : score === min ? 0 : 0.5
  return Math.min(1, Math.max(0, scaled))
}
