/**
 * How one benchmark query is answered: the Plan-Retrieve-Select pipeline, or the BM25
 * whole-instruction top-|gold| oracle baseline. Both return the same outcome shape, so metrics
 * and reports do not care which ran.
 * @module
 */
import { isToolselError } from '../errors.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import {
  selectTools,
  type SelectToolsOptions,
  type StageTimings,
  type StepResult,
} from '../pipeline.ts'
import type { Fallback, Planner, Usage } from '../plan/planner.ts'
import type { Retriever } from '../retrieve/retriever.ts'
import type { Selector } from '../select/selector.ts'

export interface CaseOutcome {
  /** Predicted tool ids, de-duplicated. */
  predicted: string[]
  steps: StepResult[]
  timings: StageTimings
  fallbacks: Fallback[]
  usage: Usage
  error?: { code: string; message: string }
}

export interface CaseTarget {
  library: ToolLibrary
  retriever: Retriever
  /** The library's nearest-example memory, when it has usage examples (`--examples train`). */
  examples?: SelectToolsOptions['examples']
}

export interface CaseRunner {
  /** Component names for the report: `{planner, retriever, selector}`. */
  components(retriever: Retriever): { planner: string; retriever: string; selector: string }
  run(instruction: string, gold: readonly string[], target: CaseTarget): Promise<CaseOutcome>
}

/** The pipeline under test. A thrown error is recorded and the query counts as a miss. */
export function createPipelineRunner(options: {
  planner: Planner
  selector: Selector
  k: number
}): CaseRunner {
  return {
    components: (retriever) => ({
      planner: options.planner.name,
      retriever: retriever.name,
      selector: options.selector.name,
    }),
    async run(instruction, _gold, { library, retriever, examples }) {
      const started = performance.now()
      try {
        const result = await selectTools(instruction, { library, retriever, examples, ...options })
        return {
          predicted: result.tools.map((tool) => tool.id),
          steps: result.steps,
          timings: result.timings,
          fallbacks: result.components.fallbacks,
          usage: result.usage,
        }
      } catch (error) {
        return failedOutcome(error, performance.now() - started)
      }
    },
  }
}

/**
 * The "BM25 whole-instruction top-|gold|" oracle: no planning, retrieve for the whole
 * instruction and predict the |gold| best tools. It knows the gold-set size (hence "oracle") and
 * ignores the threshold tau, so it always predicts |gold| tools when that many match any query
 * term. The candidate list keeps max(K, |gold|) entries so that recall@K stays comparable.
 */
export function createOracleCountRunner(options: { k: number }): CaseRunner {
  return {
    components: (retriever) => ({
      planner: 'none',
      retriever: retriever.name,
      selector: 'oracle-count(top-|gold|)',
    }),
    async run(instruction, gold, { library, retriever }) {
      const started = performance.now()
      try {
        const count = new Set(gold).size
        const candidates = await retriever.retrieve(instruction, {
          k: Math.max(options.k, count),
          minScore: Number.NEGATIVE_INFINITY,
        })
        const retrieveMs = round(performance.now() - started)
        return {
          predicted: candidates.slice(0, count).map((candidate) => candidate.id),
          steps: [
            {
              text: instruction,
              candidates: candidates.map(({ id, score }) => ({
                id,
                name: library.get(id)?.name ?? id,
                score,
              })),
              selected: null,
            },
          ],
          timings: { planMs: 0, retrieveMs, selectMs: 0, totalMs: retrieveMs },
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
  const message = error instanceof Error ? error.message : String(error)
  return {
    predicted: [],
    steps: [],
    timings: { planMs: 0, retrieveMs: 0, selectMs: 0, totalMs: round(elapsed) },
    fallbacks: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    error: { code, message },
  }
}
