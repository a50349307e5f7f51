import type { Selection, SelectionRequest, Selector } from '../contracts.ts'

export interface Top1SelectorOptions {
  /**
   * A candidate must score strictly above this to be picked. Default `-Infinity`: the retriever's
   * threshold (tau for BM25) already removed weak candidates, so the best remaining one is taken.
   */
  minScore?: number
}

/** The baseline selector: the best-scored candidate of each step, or none when there is none. */
export class Top1Selector implements Selector {
  readonly name = 'top1'
  readonly #minScore: number

  constructor(options: Top1SelectorOptions = {}) {
    this.#minScore = options.minScore ?? Number.NEGATIVE_INFINITY
  }

  async select(requests: SelectionRequest[]): Promise<Selection[]> {
    return requests.map(({ candidates }) => {
      const best = candidates[0]
      return best !== undefined && best.score > this.#minScore
        ? { toolId: best.id, score: best.score }
        : { toolId: null }
    })
  }
}
