/**
 * The known name closest to a mistyped one, for "did you mean" hints in config and environment
 * errors.
 * @module
 */

/**
 * The known name fewest edits (insert, delete, substitute, swap two neighbours) away from `name`:
 * at most 2, and at most a third of its length (`prot` → `port`, but `x` suggests nothing).
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.min(2, Math.floor(name.length / 3)) + 1
  for (const candidate of known) {
    // The distance is at least the difference in length: a long name (a request body's key can be
    // as long as the body) is never compared, so the hint costs nothing whatever its size.
    if (Math.abs(name.length - candidate.length) >= bestDistance) continue
    const distance = editDistance(name, candidate)
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance]
  }
  return best
}

/** Optimal-string-alignment distance (Levenshtein plus adjacent transpositions). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[a.length][b.length]
}
