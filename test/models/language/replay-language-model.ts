/**
 * A LanguageModel that replays scripted answers and records every call, for planner and
 * selector tests that don't need a real model (compare vercel/ai's mock-embedding-model-v3).
 * @module
 */
import { throwIfAborted } from '../../../src/errors.ts'
import type {
  ChatMessage,
  ChoiceScores,
  GenerateOptions,
  GenerateResult,
  LanguageModel,
  ScoreChoicesOptions,
} from '../../../src/models/language-model.ts'

type Scripted<T> = T | Error | ((messages: ChatMessage[]) => T | Promise<T>)

export interface ReplayScript {
  /** Answers of successive `generate` calls; the last one repeats. */
  answers?: Array<Scripted<string | GenerateResult>>
  /** Scores for `scoreChoices`, from the choices. */
  scores?: (choices: string[], messages: ChatMessage[]) => number[] | Promise<number[]>
}

export class ReplayLanguageModel implements LanguageModel {
  readonly modelId: string
  readonly generateCalls: Array<{ messages: ChatMessage[]; options: GenerateOptions }> = []
  readonly scoreCalls: Array<{ messages: ChatMessage[]; choices: string[] }> = []
  readonly #script: ReplayScript

  constructor(modelId: string, script: ReplayScript) {
    this.modelId = modelId
    this.#script = script
  }

  async generate(messages: ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    throwIfAborted(options.signal)
    this.generateCalls.push({ messages, options })
    const answers = this.#script.answers ?? ['']
    const next = answers[Math.min(this.generateCalls.length - 1, answers.length - 1)]
    if (next instanceof Error) throw next
    const value = typeof next === 'function' ? await next(messages) : next
    throwIfAborted(options.signal)
    return typeof value === 'string'
      ? { text: value, usage: { inputTokens: 100, outputTokens: 10 }, finishReason: 'stop' }
      : value
  }

  async scoreChoices(
    messages: ChatMessage[],
    choices: string[],
    options: ScoreChoicesOptions = {},
  ): Promise<ChoiceScores> {
    throwIfAborted(options.signal)
    this.scoreCalls.push({ messages, choices })
    const scores = await (this.#script.scores ?? (() => choices.map(() => 0)))(choices, messages)
    throwIfAborted(options.signal)
    return { scores, usage: { inputTokens: 50, outputTokens: 0 } }
  }
}
