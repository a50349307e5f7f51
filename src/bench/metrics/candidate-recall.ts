/**
 * Retrieval-side metrics over the candidates the steps retrieved: did the gold tools reach the
 * selector at all?
 * @module
 */

/**
 * Merges per-step ranked lists into one ranked list, round-robin by rank: every step's first
 * candidate (in step order), then every step's second, and so on; repeats keep their first
 * place. Rank, not score, decides because BM25 scores of different step texts are not comparable.
 * With one step (no planner) this is that step's list.
 */
export function mergeRankedCandidates(stepCandidates: readonly (readonly string[])[]): string[] {
  const merged: string[] = []
  const seen = new Set<string>()
  const depth = Math.max(0, ...stepCandidates.map((list) => list.length))
  for (let rank = 0; rank < depth; rank += 1) {
    for (const list of stepCandidates) {
      const id = list[rank]
      if (id === undefined || seen.has(id)) continue
      seen.add(id)
      merged.push(id)
    }
  }
  return merged
}

/**
 * Share of the gold tools that are among `candidates` (the union of every step's candidates,
 * or the first K of the merged list for recall@K). Empty gold: 1.
 */
export function candidateRecall(candidates: Iterable<string>, gold: readonly string[]): number {
  const goldSet = new Set(gold)
  if (goldSet.size === 0) return 1
  const pool = new Set(candidates)
  let found = 0
  for (const id of goldSet) if (pool.has(id)) found += 1
  return found / goldSet.size
}

/** Share of gold tools among the first `k` of the merged ranked list. */
export function recallAtK(merged: readonly string[], gold: readonly string[], k: number): number {
  return candidateRecall(merged.slice(0, k), gold)
}
