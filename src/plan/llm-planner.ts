/**
 * The planner of Plan-Retrieve-Select: a small language model splits the instruction into short
 * one-capability sub-steps (prompt in `prompts.ts`, parsing in `parse-plan.ts`). When its answer
 * can't be used or the model fails, an optional fallback planner stands in and the response says
 * so; an abort or a timeout is never papered over.
 * @module
 */
import { DEFAULT_PLAN_OPTIONS } from './plan-options.ts'
import { errorMessage, isToolselError, throwIfAborted, ToolselError } from '../errors.ts'
import { llmComponentName } from '../component-id.ts'
import { SILENT_LOGGER, type Logger } from '../log.ts'
import type { LanguageModel } from '../models/language-model.ts'
import { parsePlan } from './parse-plan.ts'
import {
  fallbackFailure,
  type CallOptions,
  type Planner,
  type PlanResult,
  type Usage,
} from '../contracts.ts'
import { buildPlanMessages } from './prompts.ts'
import { RepeatedWarning } from '../repeated-warning.ts'
import { failsForTheRequest, skippedCall } from '../models/request-retries.ts'

export interface LlmPlannerOptions {
  model: LanguageModel
  /** Most steps a plan keeps; later ones are dropped. Default 8. */
  maxSteps?: number
  /** Token budget of the answer. Default 256 (a plan of 8 steps is about 120 tokens), 1,024 with thinking. */
  maxTokens?: number
  /** Let Qwen3 think before answering. Slower (hundreds of tokens); default false. */
  thinking?: boolean
  /** Stands in when the answer is unparsable or the model fails (not on abort or timeout). Default none. */
  fallback?: Planner
  logger?: Logger
}

/** The LLM planner's defaults; `plan.*` in the config schema defaults to these. */
export const DEFAULT_LLM_PLANNER_OPTIONS = Object.freeze({
  maxSteps: DEFAULT_PLAN_OPTIONS.maxSteps,
  thinking: false,
  /** Answer token budget without thinking… */
  maxTokens: 256,
  /** …and with thinking. */
  thinkingMaxTokens: 1024,
})

export class LlmPlanner implements Planner {
  readonly name: string
  readonly #model: LanguageModel
  readonly #maxSteps: number
  readonly #maxTokens: number
  readonly #thinking: boolean
  readonly #fallback: Planner | undefined
  readonly #logger: Logger
  /** The fallback warning, once a minute per kind while it repeats (repeated-warning.ts). */
  readonly #warnings: RepeatedWarning

  constructor(options: LlmPlannerOptions) {
    this.name = llmComponentName(options.model.modelId)
    this.#model = options.model
    const defaults = DEFAULT_LLM_PLANNER_OPTIONS
    this.#maxSteps = options.maxSteps ?? defaults.maxSteps
    this.#thinking = options.thinking ?? defaults.thinking
    this.#maxTokens =
      options.maxTokens ?? (this.#thinking ? defaults.thinkingMaxTokens : defaults.maxTokens)
    this.#fallback = options.fallback
    this.#logger = options.logger ?? SILENT_LOGGER
    this.#warnings = new RepeatedWarning(this.#logger)
  }

  async plan(instruction: string, options: CallOptions = {}): Promise<PlanResult> {
    let raw: string | undefined
    let usage: Usage | undefined
    const modelId = this.#model.modelId
    try {
      // Its model failed unavailable earlier in this request: the fallback stands in at once.
      const earlier = this.#fallback && options.retries?.failureOf?.(modelId)
      if (earlier) throw skippedCall(this.name, earlier)
      const answer = await this.#model.generate(buildPlanMessages(instruction, this.#maxSteps), {
        maxTokens: this.#maxTokens,
        thinking: this.#thinking,
        signal: options.signal,
        retries: options.retries,
      })
      raw = answer.text
      usage = answer.usage
      const steps = parseOrExplain(
        answer.text,
        this.#maxSteps,
        answer.finishReason === 'length',
        this.#maxTokens,
      )
      // An explicit empty plan still yields one step: the Planner contract never returns none.
      return { steps: steps.length > 0 ? steps : [instruction.trim()], planner: this.name, usage }
    } catch (caught) {
      const error = asToolselError(caught, this.name)
      if (failsForTheRequest(error)) options.retries?.markFailed?.(modelId, error)
      if (!this.#fallback || error.code === 'ABORTED' || error.code === 'TIMEOUT') throw error
      throwIfAborted(options.signal)
      this.#warnings.fallback(
        'Planner failed; using the fallback planner',
        error,
        this.name,
        this.#fallback.name,
      )
      const { fallback, chained, ...result } = await this.#fallback.plan(instruction, options)
      // What the model answered that could not be used: its text, or, when the call itself failed
      // (an HTTP 401 or 500, a body that is no chat completion), the endpoint's answer, which the
      // error keeps (`details.raw`, its key hidden as it was read) and the selector's fallback has
      // reported all along (before round 43 a planner's had no `raw` then).
      const rawAnswer =
        raw ?? (typeof error.details.raw === 'string' ? error.details.raw : undefined)
      return {
        ...result,
        usage: addUsage(usage, result.usage),
        // The planner that stood in fell back too (a fallback list): its fallbacks follow.
        ...(fallback && { chained: [fallback, ...(chained ?? [])] }),
        fallback: {
          stage: 'planner',
          from: this.name,
          to: this.#fallback.name,
          ...fallbackFailure(error),
          ...(rawAnswer === undefined ? {} : { raw: rawAnswer }),
        },
      }
    }
  }
}

/** parsePlan, with a hint when the answer was cut by the token budget. */
function parseOrExplain(
  text: string,
  maxSteps: number,
  truncated: boolean,
  maxTokens: number,
): string[] {
  try {
    return parsePlan(text, { maxSteps })
  } catch (error) {
    if (!truncated || !isToolselError(error)) throw error
    throw new ToolselError(
      error.code,
      `${error.message} The answer was cut at ${maxTokens} tokens; raise the planner's maxTokens.`,
      { cause: error, details: error.details },
    )
  }
}

function asToolselError(error: unknown, planner: string): ToolselError {
  if (error instanceof ToolselError) return error
  const reason = errorMessage(error)
  return new ToolselError('MODEL_CALL_FAILED', `${planner} failed: ${reason}`, { cause: error })
}

function addUsage(first: Usage | undefined, second: Usage | undefined): Usage | undefined {
  if (!first || !second) return first ?? second
  return {
    inputTokens: first.inputTokens + second.inputTokens,
    outputTokens: first.outputTokens + second.outputTokens,
  }
}
