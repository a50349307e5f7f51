/**
 * The one place a request becomes pipeline options. HTTP bodies, MCP tool calls, CLI flags and
 * benchmark cases all arrive here as a `PipelineRequest`; what a request leaves out comes from
 * the configuration. A new request option is one field in the front end's schema and one line
 * here.
 * @module
 */
import type { Components } from '../components.ts'
import type { Config } from '../config/schema.ts'
import type { Planner, Reranker, Retriever, Selector } from '../contracts.ts'
import { exampleMemoryFor } from '../examples/memory-selection.ts'
import type { SelectToolsOptions } from '../pipeline.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'
import { resolveRetriever } from '../store/indexed-library.ts'

/** What a caller may choose per request. Every field is optional. */
export interface PipelineRequest {
  /** Library name; default `library.default` (the library itself is resolved by the service). */
  library?: string
  /** Candidates per step (the paper's K); default `retrieve.k`. */
  k?: number
  /** Retrieval threshold (tau for BM25); default the retriever's own. */
  tau?: number
  /** Planner id; default `plan.planner`. */
  planner?: string
  /** Retriever part of the library (`bm25`, `dense:static:glove-100d`, `hybrid:bm25+dense`…); default `retrieve.retriever` when the library has it, else the library's own. */
  retriever?: string
  /** Reranker id; default `rerank.reranker`. */
  reranker?: string
  /** Selector id; default `select.selector`. */
  selector?: string
}

/** What a search needs: the library version, its retriever, k and the threshold. */
export interface ResolvedRetrieval {
  /** The library version the request uses from start to end (a concurrent swap can't mix in). */
  indexed: IndexedLibrary
  retriever: Retriever
  k: number
  /** `undefined`: the retriever's own threshold. */
  minScore: number | undefined
}

/** Everything the pipeline needs, fixed for the whole request. */
export interface ResolvedRequest extends ResolvedRetrieval {
  planner: Planner
  reranker: Reranker
  selector: Selector
  /**
   * The library's nearest-example memory (`examples` settings), when the library has usage
   * examples and `examples.memory` is on. An MCP scoped view has none: it could name tools
   * outside the scope.
   */
  examples: SelectToolsOptions['examples']
}

export interface ResolveDefaults {
  config: Config
  components: Components
}

export function resolveRequest(
  request: PipelineRequest,
  indexed: IndexedLibrary,
  defaults: ResolveDefaults,
): ResolvedRequest {
  const { components, config } = defaults
  return {
    ...resolveRetrieval(request, indexed, defaults),
    planner: components.planner(request.planner),
    reranker: components.reranker(request.reranker),
    selector: components.selector(request.selector),
    examples: exampleMemoryFor(indexed.examples, config.examples),
  }
}

/** The retrieval half of `resolveRequest`: no planner, reranker or selector is created. */
export function resolveRetrieval(
  request: PipelineRequest,
  indexed: IndexedLibrary,
  { config }: Pick<ResolveDefaults, 'config'>,
): ResolvedRetrieval {
  return {
    indexed,
    retriever: resolveRetriever(indexed, request.retriever, config),
    k: request.k ?? config.retrieve.k,
    minScore: request.tau,
  }
}
