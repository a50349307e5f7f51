/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009,
 * https://plg.uwaterloo.ca/~gvcormac/cormacksigir09-rrf.pdf): score(d) = Σ_i w_i / (k + rank_i(d)),
 * with 1-based ranks. It uses ranks only, so lists on incomparable scales (BM25, cosine) mix
 * without calibration.
 * @module
 */
import type { Candidate } from '../../contracts.ts'
import { bestScores, compareCandidates } from './fusion-utils.ts'

/** RRF damping constant when none is given (Cormack et al.'s 60). */
export const DEFAULT_RRF_K = 60

export interface ReciprocalRankFusionOptions {
  /** Damping constant: larger values flatten the gap between top and lower ranks. Default 60 (the paper's). */
  k?: number
  /** One weight per list, non-negative. Default 1 each. */
  weights?: readonly number[]
}

/**
 * Fuses ranked lists into one, best first (ties by id). Each list is ranked by its own scores
 * (descending, ties by id), not by its array order, and a duplicated id counts once with its
 * best score.
 */
export function reciprocalRankFusion(
  lists: readonly (readonly Candidate[])[],
  options: ReciprocalRankFusionOptions = {},
): Candidate[] {
  const k = options.k ?? DEFAULT_RRF_K
  const fused = new Map<string, number>()
  for (const [listIndex, list] of lists.entries()) {
    const weight = options.weights?.[listIndex] ?? 1
    const ranked = [...bestScores(list)]
      .map(([id, score]) => ({ id, score }))
      .sort(compareCandidates)
    for (const [rank, candidate] of ranked.entries()) {
      fused.set(candidate.id, (fused.get(candidate.id) ?? 0) + weight / (k + rank + 1))
    }
  }
  return [...fused].map(([id, score]) => ({ id, score })).sort(compareCandidates)
}
