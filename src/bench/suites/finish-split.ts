/**
 * The last step of every adapter: count gold tools the library lacks and apply the
 * `unmappable` policy, so each split reports the same counts in the same way.
 * @module
 */
import type { BenchCase } from '../bench-case.ts'
import type { SplitStats, UnmappableGold } from './bench-suite.ts'

export interface FinishSplitInput {
  /** Records in the query file. */
  records: number
  /** One case per usable record; gold ids the library lacks are left as they are. */
  cases: BenchCase[]
  /** Records left out before this step (e.g. no query text). */
  dropped?: number
  /** Whether the library (of this case, in closed mode) has a tool of this id. */
  has: (id: string, benchCase: BenchCase) => boolean
  unmappable: UnmappableGold
}

export function finishSplit(input: FinishSplitInput): { cases: BenchCase[]; stats: SplitStats } {
  let unmappedGold = 0
  let queriesWithUnmappedGold = 0
  const cases: BenchCase[] = []
  for (const benchCase of input.cases) {
    const missing = benchCase.gold.filter((id) => !input.has(id, benchCase)).length
    unmappedGold += missing
    if (missing > 0) queriesWithUnmappedGold += 1
    if (missing === 0 || input.unmappable === 'keep') cases.push(benchCase)
  }
  const dropped = (input.dropped ?? 0) + (input.cases.length - cases.length)
  return {
    cases,
    stats: {
      records: input.records,
      queries: cases.length,
      unmappedGold,
      queriesWithUnmappedGold,
      droppedQueries: dropped,
    },
  }
}

/** The note every split prints about unmappable gold. */
export function unmappableNote(stats: SplitStats, unmappable: UnmappableGold): string | undefined {
  if (stats.unmappedGold === 0) return undefined
  const what = `${stats.unmappedGold} gold tools in ${stats.queriesWithUnmappedGold} queries are not in the library`
  return unmappable === 'drop'
    ? `${what}; those queries are dropped (--unmappable keep scores them against the raw gold)`
    : `${what}; kept and scored against the raw gold (they can never be an exact match)`
}
