/**
 * Why a step of a selection got no candidate, in the words `toolsel select` prints and the
 * playground shows (one source): no tool of the library matches the step, or a threshold cut
 * the matches (which one, the best tool and its score, as a search without a threshold finds it).
 * The playground fills the same sentences from templates (`emptyStepTemplates`), since the page
 * cannot run this module.
 * @module
 */

export interface EmptyStepFacts {
  /** The best match without a threshold (`POST /v1/search-tools`, k 1); absent when none. */
  best?: { id: string; score: string }
  /** The selection's `components.selector` and `components.retriever`. */
  selector: string
  retriever: string
  /** retrieve.bm25.tau as the selection used it. */
  tau: string
  /** What lowers tau where the reader is (`--tau`), when there is such a thing. */
  tauHint?: string
  /**
   * The selection's own threshold (a request's `tau`, `toolsel select --tau`), when it set one:
   * it cut the candidates whatever the selector and retriever (`minScore`).
   */
  requestTau?: string
}

export function emptyStepReason(facts: EmptyStepFacts): string {
  const { best } = facts
  if (best === undefined) return 'no candidate: no tool of the library matches this step'
  const hint = facts.tauHint ? `: ${facts.tauHint} lowers it` : ''
  const [threshold, tail] =
    facts.requestTau !== undefined
      ? [`the threshold tau = ${facts.requestTau}`, hint]
      : facts.selector.startsWith('learned')
        ? ["the learned selector's retrieval floor, 0", '']
        : facts.retriever === 'bm25'
          ? [`the threshold retrieve.bm25.tau = ${facts.tau}`, hint]
          : [`the ${facts.retriever} retriever's threshold`, '']
  return `no candidate above ${threshold}; the best, ${best.id}, scored ${best.score}${tail}`
}

/**
 * The playground's sentences, with `{id}`, `{score}` and `{retriever}` for the page to fill in
 * (as text): `none` when nothing matches, `learned`, `bm25` (tau = `tau`) and `other` retrievers.
 */
export function emptyStepTemplates(tau: number): Record<string, string> {
  const best = { id: '{id}', score: '{score}' }
  return {
    none: emptyStepReason({ selector: '', retriever: '', tau: '' }),
    learned: emptyStepReason({ best, selector: 'learned', retriever: '{retriever}', tau: '' }),
    bm25: emptyStepReason({ best, selector: 'top1', retriever: 'bm25', tau: String(tau) }),
    other: emptyStepReason({ best, selector: 'top1', retriever: '{retriever}', tau: '' }),
  }
}
