/**
 * How one benchmark query is answered: the Plan-Retrieve-Select pipeline, or the BM25
 * whole-instruction top-|gold| oracle baseline. Both go through the service (so a case is
 * resolved like an HTTP or MCP request) and return the same outcome shape, so metrics and
 * reports do not care which ran.
 * @module
 */
import type { Fallback, Usage } from '../contracts.ts'
import { errorMessage, isToolselError, ToolselError } from '../errors.ts'
import type { StageTimings, StepResult } from '../pipeline.ts'
import type { PipelineRequest, ToolselService } from '../service/toolsel-service.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'

export interface CaseOutcome {
  /** Predicted tool ids, de-duplicated. */
  predicted: string[]
  steps: StepResult[]
  timings: StageTimings
  fallbacks: Fallback[]
  usage: Usage
  error?: { code: string; message: string }
}

/** Component names for the report. */
export interface CaseComponents {
  planner: string
  retriever: string
  reranker: string
  selector: string
}

export interface CaseRunner {
  components(indexed: IndexedLibrary): CaseComponents
  /** Answers one query against `indexed` (the split's library, or the query's own). */
  run(instruction: string, gold: readonly string[], indexed: IndexedLibrary): Promise<CaseOutcome>
}

/** The names of the components `request` resolves to over `indexed`, for the report. */
export function caseComponents(
  service: ToolselService,
  request: Omit<PipelineRequest, 'library'>,
  indexed: IndexedLibrary,
): CaseComponents {
  const { planner, retriever, reranker, selector } = service.resolve(request, indexed)
  return {
    planner: planner.name,
    retriever: retriever.name,
    reranker: reranker.name,
    selector: selector.name,
  }
}

/**
 * The pipeline under test, with the same request for every case (components by id, k, tau,
 * retriever kind). A thrown error is recorded and the query counts as a miss; so does a query
 * that runs past `queryTimeoutMs` (error code TIMEOUT): its signal aborts the model calls and the
 * runner stops waiting for it.
 */
export function createPipelineRunner(
  service: ToolselService,
  request: Omit<PipelineRequest, 'library'> = {},
  options: {
    /** Time limit per query in ms (`--query-timeout`). Default none. */
    queryTimeoutMs?: number
  } = {},
): CaseRunner {
  const { queryTimeoutMs } = options
  return {
    components: (indexed) => caseComponents(service, request, indexed),
    async run(instruction, _gold, indexed) {
      const started = performance.now()
      const deadline = queryTimeoutMs === undefined ? undefined : startDeadline(queryTimeoutMs)
      try {
        const run = service.select({ ...request, instruction }, deadline?.signal, indexed)
        const result = await (deadline ? Promise.race([run, deadline.expired]) : run)
        return {
          predicted: result.tools.map((tool) => tool.id),
          steps: result.steps,
          timings: result.timings,
          fallbacks: result.components.fallbacks,
          usage: result.usage,
        }
      } catch (error) {
        return failedOutcome(error, performance.now() - started)
      } finally {
        deadline?.clear()
      }
    },
  }
}

/** An AbortSignal that fires TIMEOUT after `ms`, and a promise that rejects with it then. */
function startDeadline(ms: number) {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new ToolselError(
        'TIMEOUT',
        `The query took longer than its ${ms} ms limit (--query-timeout).`,
      )
      controller.abort(error)
      reject(error)
    }, ms)
  })
  // A run that settles first leaves `expired` pending forever; never report it as unhandled.
  expired.catch(() => undefined)
  return { signal: controller.signal, expired, clear: () => clearTimeout(timer) }
}

/**
 * The "BM25 whole-instruction top-|gold|" oracle: no planning, search for the whole instruction
 * and predict the |gold| best tools. It knows the gold-set size (hence "oracle") and ignores the
 * threshold tau, so it always predicts |gold| tools when that many match any query term. The
 * candidate list keeps max(K, |gold|) entries so that recall@K stays comparable.
 */
export function createOracleCountRunner(
  service: ToolselService,
  request: Pick<PipelineRequest, 'k' | 'retriever'> = {},
): CaseRunner {
  const k = request.k ?? service.config.retrieve.k
  return {
    components: (indexed) => ({
      planner: 'none',
      retriever: service.resolveRetrieval(request, indexed).retriever.name,
      reranker: 'none',
      selector: 'oracle-count(top-|gold|)',
    }),
    async run(instruction, gold, indexed) {
      const started = performance.now()
      try {
        const count = new Set(gold).size
        const { results } = await service.search(
          { query: instruction, retriever: request.retriever, k: Math.max(k, count) },
          undefined,
          indexed,
        )
        const retrieveMs = round(performance.now() - started)
        return {
          predicted: results.slice(0, count).map((candidate) => candidate.id),
          steps: [
            {
              text: instruction,
              candidates: results.map(({ id, name, score }) => ({ id, name, score })),
              selected: null,
            },
          ],
          timings: { planMs: 0, retrieveMs, rerankMs: 0, selectMs: 0, totalMs: retrieveMs },
          fallbacks: [],
          usage: { inputTokens: 0, outputTokens: 0 },
        }
      } catch (error) {
        return failedOutcome(error, performance.now() - started)
      }
    },
  }
}

const round = (milliseconds: number) => Math.round(milliseconds * 1000) / 1000

function failedOutcome(error: unknown, elapsed: number): CaseOutcome {
  const code = isToolselError(error) ? error.code : 'INTERNAL'
  const message = errorMessage(error)
  return {
    predicted: [],
    steps: [],
    timings: { planMs: 0, retrieveMs: 0, rerankMs: 0, selectMs: 0, totalMs: round(elapsed) },
    fallbacks: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    error: { code, message },
  }
}
