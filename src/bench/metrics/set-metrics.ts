/**
 * Set agreement between a predicted tool set and the gold set. Inputs are lists; duplicates and
 * order are ignored, because the pipeline's answer is a set (the union of the steps' picks).
 * @module
 */

export interface SetScores {
  /** 1 when the two sets are equal, else 0. The primary metric (the paper's exact match). */
  exactMatch: number
  /** |predicted ∩ gold| / |predicted|. */
  precision: number
  /** |predicted ∩ gold| / |gold|. */
  recall: number
  /** Harmonic mean of precision and recall; 0 when both are 0. */
  f1: number
}

/**
 * Scores one prediction. Empty-set conventions, chosen so that predicting nothing is never
 * rewarded unless nothing was asked for:
 * - both empty: every score is 1;
 * - empty prediction, non-empty gold: precision 0, recall 0;
 * - non-empty prediction, empty gold: precision 0, recall 1 (nothing to recall), so F1 is 0.
 */
export function setScores(predicted: readonly string[], gold: readonly string[]): SetScores {
  const predictedSet = new Set(predicted)
  const goldSet = new Set(gold)
  let hits = 0
  for (const id of predictedSet) if (goldSet.has(id)) hits += 1
  const exactMatch = hits === predictedSet.size && hits === goldSet.size ? 1 : 0
  if (predictedSet.size === 0 && goldSet.size === 0) {
    return { exactMatch, precision: 1, recall: 1, f1: 1 }
  }
  const precision = predictedSet.size === 0 ? 0 : hits / predictedSet.size
  const recall = goldSet.size === 0 ? 1 : hits / goldSet.size
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  return { exactMatch, precision, recall, f1 }
}

/** 1 when the sets are equal (order and duplicates ignored), else 0. */
export function exactMatch(predicted: readonly string[], gold: readonly string[]): number {
  return setScores(predicted, gold).exactMatch
}
