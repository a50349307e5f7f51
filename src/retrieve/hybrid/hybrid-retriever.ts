/**
 * A retriever built from other retrievers: each is asked for a generous candidate list, the lists
 * are fused, and the best k are kept. Like hono's SmartRouter, the composite is itself a
 * `Retriever`.
 * @module
 */
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../../contracts.ts'
import { DEFAULT_RRF_K, reciprocalRankFusion } from './reciprocal-rank-fusion.ts'
import { weightedMinMaxFusion } from './weighted-min-max-fusion.ts'

/** `rrf`: reciprocal rank fusion; `weighted`: min-max scaled scores added with weights. */
export type FusionMethod = 'rrf' | 'weighted'

export interface HybridInput {
  retriever: Retriever
  /** Weight of this retriever's list in the fusion. Default 1 (rrf) or 1/n (weighted). */
  weight?: number
  /** Threshold passed to this retriever as its `minScore`. Default: the retriever's own. */
  minScore?: number
}

export interface HybridRetrieverOptions {
  /** At least two inputs. */
  inputs: readonly HybridInput[]
  /** Default `rrf`: it needs no score calibration between BM25 and cosine. */
  fusion?: FusionMethod
  /** RRF damping constant. Default 60. */
  rrfK?: number
  /**
   * Candidates asked of each input: `max(k, candidatesPerInput)`. A tool ranked low by one
   * retriever but high by another only survives fusion if both lists reach it. Default 50.
   */
  candidatesPerInput?: number
}

/** The hybrid retriever's defaults; `retrieve.hybrid.*` in the config schema defaults to these. */
export const DEFAULT_HYBRID_OPTIONS = Object.freeze({
  /** `rrf` needs no score calibration; the config chooses `weighted` (see its doc). */
  fusion: 'rrf' as FusionMethod,
  rrfK: DEFAULT_RRF_K,
  candidatesPerInput: 50,
})

export class HybridRetriever implements Retriever {
  readonly name: string
  readonly fusion: FusionMethod
  readonly #inputs: readonly HybridInput[]
  readonly #rrfK: number
  readonly #candidatesPerInput: number

  constructor(options: HybridRetrieverOptions) {
    if (options.inputs.length < 2) {
      throw new ToolselError(
        'INVALID_CONFIG',
        `A hybrid retriever needs at least two inputs, got ${options.inputs.length}.`,
      )
    }
    this.#inputs = options.inputs
    this.fusion = options.fusion ?? DEFAULT_HYBRID_OPTIONS.fusion
    this.#rrfK = options.rrfK ?? DEFAULT_HYBRID_OPTIONS.rrfK
    this.#candidatesPerInput =
      options.candidatesPerInput ?? DEFAULT_HYBRID_OPTIONS.candidatesPerInput
    this.name = `hybrid(${options.inputs.map((input) => input.retriever.name).join('+')})`
  }

  /** `minScore` applies to the fused score (RRF scores are small: at most Σw/(rrfK+1)). */
  async retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]> {
    throwIfAborted(options.signal)
    const k = Math.floor(options.k)
    if (k <= 0) return []
    const perInput = Math.max(k, this.#candidatesPerInput)
    const lists = await Promise.all(
      this.#inputs.map((input) =>
        input.retriever.retrieve(query, {
          k: perInput,
          minScore: input.minScore,
          signal: options.signal,
        }),
      ),
    )
    throwIfAborted(options.signal)
    // Inputs without a weight get the fusion's default (1 for rrf, 1/n for weighted).
    const defaultWeight = this.fusion === 'rrf' ? 1 : 1 / this.#inputs.length
    const weights = this.#inputs.map((input) => input.weight ?? defaultWeight)
    const fused =
      this.fusion === 'rrf'
        ? reciprocalRankFusion(lists, { k: this.#rrfK, weights })
        : weightedMinMaxFusion(lists, { weights })
    const minScore = options.minScore ?? -Infinity
    return fused.filter((candidate) => candidate.score >= minScore).slice(0, k)
  }
}
