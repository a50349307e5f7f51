/**
 * Helpers shared by the fusion functions.
 * @module
 */
import type { Candidate } from '../../contracts.ts'

/** Score descending, then id ascending: the order of every retriever's output. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

/** id → best score in the list; NaN scores are dropped (they can't be ranked). */
export function bestScores(list: readonly Candidate[]): Map<string, number> {
  const scores = new Map<string, number>()
  for (const { id, score } of list) {
    if (Number.isNaN(score)) continue
    const previous = scores.get(id)
    if (previous === undefined || score > previous) scores.set(id, score)
  }
  return scores
}
