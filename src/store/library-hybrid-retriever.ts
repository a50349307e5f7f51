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
import { splitPartName } from './kinds/part-name.ts'

export class LibraryHybridRetriever implements Retriever {
  readonly name: string
  readonly #config: Config['retrieve']
  readonly #retrievers: ReadonlyMap<string, Retriever>
  readonly #inputs: readonly string[]
  readonly #default: HybridRetriever

  /**
   * @param retrievers The library's retriever parts by name; every input must be there.
   * @param inputs The parts fused (default the configured `retrieve.hybrid.inputs`). Each takes
   *   its weight and threshold from the configured input of the same name, else of the same kind
   *   (`dense:static:glove-100d` weighs what `dense` does), else weight 1 and its own threshold.
   */
  constructor(
    config: Config,
    retrievers: ReadonlyMap<string, Retriever>,
    inputs: readonly string[] = config.retrieve.hybrid.inputs.map((input) => input.retriever),
  ) {
    this.#config = config.retrieve
    this.#retrievers = retrievers
    this.#inputs = inputs
    this.#default = this.#create(undefined)
    this.name = this.#default.name
  }

  retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]> {
    const hybrid = options.minScore === undefined ? this.#default : this.#create(options.minScore)
    // Creating a HybridRetriever only copies options: cheap enough to do per call.
    return hybrid.retrieve(query, { k: options.k, signal: options.signal })
  }

  /** The fusion over the inputs; `bm25Threshold` replaces the BM25 input's own. */
  #create(bm25Threshold: number | undefined): HybridRetriever {
    const { hybrid, bm25, dense } = this.#config
    if (this.#inputs.length < 2) {
      throw new ToolselError(
        'INVALID_INPUT',
        `A hybrid retriever fuses at least two parts; got ${this.#inputs.length} (${this.#inputs.join(', ') || 'none'}). Name them like hybrid:bm25+dense.`,
      )
    }
    const inputs: HybridInput[] = this.#inputs.map((name) => {
      const retriever = this.#retrievers.get(name)
      if (!retriever) {
        const available = [...this.#retrievers.keys()].join(', ')
        throw new ToolselError(
          'UNKNOWN_COMPONENT',
          `The hybrid retriever fuses "${name}", which this library was not built with (it has: ${available}). Build it with that part (e.g. --retriever bm25,${name}) or fuse parts it has.`,
          { details: { retriever: name, available } },
        )
      }
      const kind = splitPartName(name).kind
      const configured =
        hybrid.inputs.find((input) => input.retriever === name) ??
        hybrid.inputs.find((input) => splitPartName(input.retriever).kind === kind)
      const ownThreshold =
        kind === 'bm25' ? bm25.tau : kind === 'dense' ? dense.minScore : undefined
      const threshold =
        kind === 'bm25' && bm25Threshold !== undefined
          ? bm25Threshold
          : (configured?.minScore ?? ownThreshold)
      return { retriever, weight: configured?.weight ?? 1, minScore: threshold }
    })
    return new HybridRetriever({
      inputs,
      fusion: hybrid.fusion,
      rrfK: hybrid.rrfK,
      candidatesPerInput: hybrid.candidatesPerInput,
    })
  }
}
