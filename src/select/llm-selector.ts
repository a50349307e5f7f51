/**
 * The selector of Plan-Retrieve-Select: per step, a small language model picks one tool among
 * the retrieved candidates, or none. The answer is constrained, not parsed: every candidate id
 * and `none` is scored with `scoreChoices` and the best wins, so it is always a valid choice.
 * Backends that answer in text (guided decoding) reject an answer outside the list with
 * SELECTION_OUTSIDE_CANDIDATES; it is never mapped to a near match.
 * @module
 */
import { ToolselError, throwIfAborted } from '../errors.ts'
import { llmComponentName } from '../component-id.ts'
import { SILENT_LOGGER, type Logger } from '../log.ts'
import { argmax, type ChatMessage, type LanguageModel } from '../models/language-model.ts'
import {
  fallbackFailure,
  type CallOptions,
  type CandidateTool,
  type ModelFailure,
  type Selection,
  type SelectionRequest,
  type Selector,
} from '../contracts.ts'
import { buildSelectMessages } from './prompts.ts'
import { RepeatedWarning } from '../repeated-warning.ts'
import { failsForTheRequest, skippedCall } from '../models/request-retries.ts'

export interface LlmSelectorOptions {
  model: LanguageModel
  /**
   * Log-probability margin (nats) the best tool must have over `none`; weaker picks become none.
   * Default 0 (plain argmax). Sensible 0-5: 1 means the tool must be e (2.7) times likelier.
   * Has no effect with guided-decoding backends, which score unchosen answers -Infinity.
   */
  margin?: number
  /** Stands in for a step whose model call fails (not on abort or timeout). Default none. */
  fallback?: Selector
  logger?: Logger
}

/** The LLM selector's defaults; `select.margin` in the config schema defaults to these. */
export const DEFAULT_LLM_SELECTOR_OPTIONS = Object.freeze({ margin: 0 })

export class LlmSelector implements Selector {
  readonly name: string
  readonly #model: LanguageModel
  readonly #margin: number
  readonly #fallback: Selector | undefined
  readonly #logger: Logger
  /** The fallback warning, once a minute per kind while it repeats (repeated-warning.ts). */
  readonly #warnings: RepeatedWarning

  constructor(options: LlmSelectorOptions) {
    this.name = llmComponentName(options.model.modelId)
    this.#model = options.model
    this.#margin = options.margin ?? DEFAULT_LLM_SELECTOR_OPTIONS.margin
    this.#fallback = options.fallback
    this.#logger = options.logger ?? SILENT_LOGGER
    this.#warnings = new RepeatedWarning(this.#logger)
  }

  /**
   * All steps are sent at once: an HTTP backend serves them concurrently (vLLM batches them);
   * the ONNX backend queues them and runs each step's candidates in one batched pass.
   */
  select(requests: SelectionRequest[], options: CallOptions = {}): Promise<Selection[]> {
    return Promise.all(requests.map((request) => this.#selectOrFallBack(request, options)))
  }

  async #selectOrFallBack(request: SelectionRequest, options: CallOptions): Promise<Selection> {
    const modelId = this.#model.modelId
    try {
      // Its model failed unavailable earlier in this request (the planner's call, another step's):
      // the fallback stands in at once.
      const earlier = this.#fallback ? options.retries?.failureOf?.(modelId) : undefined
      return await this.#selectOne(request, options, earlier)
    } catch (caught) {
      const error =
        caught instanceof ToolselError
          ? caught
          : new ToolselError('MODEL_CALL_FAILED', `${this.name} failed: ${String(caught)}`, {
              cause: caught,
            })
      if (failsForTheRequest(error)) options.retries?.markFailed?.(modelId, error)
      if (!this.#fallback || error.code === 'ABORTED' || error.code === 'TIMEOUT') throw error
      throwIfAborted(options.signal)
      this.#warnings.fallback(
        'Selector failed; using the fallback selector',
        error,
        this.name,
        this.#fallback.name,
      )
      const [{ fallback, chained, ...selection }] = await this.#fallback.select([request], options)
      const raw = error.details.raw
      return {
        ...selection,
        // The selector that stood in fell back too (a fallback list): its fallbacks follow.
        ...(fallback && { chained: [fallback, ...(chained ?? [])] }),
        fallback: {
          stage: 'selector',
          from: this.name,
          to: this.#fallback.name,
          ...fallbackFailure(error),
          ...(typeof raw === 'string' ? { raw } : {}),
        },
      }
    }
  }

  async #selectOne(
    request: SelectionRequest,
    options: CallOptions,
    earlier: ModelFailure | undefined,
  ): Promise<Selection> {
    const { candidates, choices, messages } = selectionPrompt(request)
    if (candidates.length === 0) return { toolId: null }
    if (earlier) throw skippedCall(this.name, earlier)
    const ids = candidates.map((candidate) => candidate.id)
    const { scores, usage } = await this.#model.scoreChoices(messages, choices, {
      signal: options.signal,
      retries: options.retries,
    })
    if (scores.length !== choices.length) {
      throw new ToolselError(
        'MODEL_CALL_FAILED',
        `${this.name} returned ${scores.length} scores for ${choices.length} choices.`,
        { details: { choices, scores } },
      )
    }
    const best = argmax(scores)
    const noneScore = scores[choices.length - 1]
    const isTool = best < ids.length && scores[best] > -Infinity
    if (isTool && scores[best] - noneScore >= this.#margin) {
      return { toolId: ids[best], score: scores[best], usage }
    }
    return { toolId: null, score: noneScore, usage }
  }
}

/**
 * What the selector model sees for one step and the answers it may give: the candidates
 * (de-duplicated by id), the conversation, and the closed set of choices (the ids, then the
 * no-tool answer). Training data (`toolsel train-data selector`) uses it, so the fine-tuned
 * model is trained on exactly these bytes.
 */
export function selectionPrompt(request: SelectionRequest): {
  candidates: CandidateTool[]
  none: string
  choices: string[]
  messages: ChatMessage[]
} {
  const candidates = uniqueById(request.candidates)
  const ids = candidates.map((candidate) => candidate.id)
  const none = noneLabel(ids)
  return {
    candidates,
    none,
    choices: [...ids, none],
    messages: buildSelectMessages(request.step, candidates, none),
  }
}

/**
 * The answer meaning "no candidate fits": `none`, or `none of these` when a candidate is itself
 * called `none`.
 */
export function noneLabel(candidateIds: readonly string[]): string {
  return candidateIds.includes('none') ? 'none of these' : 'none'
}

function uniqueById(candidates: readonly CandidateTool[]): CandidateTool[] {
  const seen = new Set<string>()
  return candidates.filter((candidate) => !seen.has(candidate.id) && seen.add(candidate.id))
}
