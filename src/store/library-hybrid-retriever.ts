/**
 * The hybrid retriever of a library: `HybridRetriever` over its bm25 and dense retrievers as
 * `retrieve.hybrid` configures, where a call's `minScore` (a request's `tau`) is the BM25
 * input's threshold rather than a threshold on fused scores. Fused scores are at most Σ weights
 * (weighted) or Σ weight / (rrfK + 1) (RRF), so a BM25-scale tau applied after fusion would drop
 * every candidate.
 * @module
 */
import type { Config } from '../config/schema.ts'
import { ToolselError } from '../errors.ts'
import { HybridRetriever, type HybridInput } from '../retrieve/hybrid/hybrid-retriever.ts'
import type { Candidate, Retriever, RetrieveOptions } from '../contracts.ts'

export class LibraryHybridRetriever implements Retriever {
  readonly name: string
  readonly #config: Config['retrieve']
  readonly #retrievers: ReadonlyMap<string, Retriever>
  readonly #default: HybridRetriever

  /** @param retrievers The library's retrievers by kind; every configured input must be there. */
  constructor(config: Config, retrievers: ReadonlyMap<string, Retriever>) {
    this.#config = config.retrieve
    this.#retrievers = retrievers
    this.#default = this.#create(undefined)
    this.name = this.#default.name
  }

  retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]> {
    const hybrid = options.minScore === undefined ? this.#default : this.#create(options.minScore)
    // Creating a HybridRetriever only copies options: cheap enough to do per call.
    return hybrid.retrieve(query, { k: options.k, signal: options.signal })
  }

  /** The fusion over the configured inputs; `bm25Threshold` replaces the BM25 input's own. */
  #create(bm25Threshold: number | undefined): HybridRetriever {
    const { hybrid, bm25, dense } = this.#config
    const inputs: HybridInput[] = hybrid.inputs.map((input) => {
      const retriever = this.#retrievers.get(input.retriever)
      if (!retriever) {
        throw new ToolselError(
          'INVALID_CONFIG',
          `retrieve.hybrid.inputs names "${input.retriever}", which this library was not built with.`,
        )
      }
      const ownThreshold = input.retriever === 'bm25' ? bm25.tau : dense.minScore
      const threshold =
        input.retriever === 'bm25' && bm25Threshold !== undefined
          ? bm25Threshold
          : (input.minScore ?? ownThreshold)
      return { retriever, weight: input.weight, minScore: threshold }
    })
    return new HybridRetriever({
      inputs,
      fusion: hybrid.fusion,
      rrfK: hybrid.rrfK,
      candidatesPerInput: hybrid.candidatesPerInput,
    })
  }
}
