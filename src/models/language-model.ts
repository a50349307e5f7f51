/**
 * The language-model contract shared by the planner and the selector. Backends live in
 * `models/onnx/` (a local causal LM through transformers.js) and `models/openai/` (any
 * OpenAI-compatible chat-completions server); `create-language-model.ts` picks one by id.
 * @module
 */
import type { RetryBudget, Usage } from '../contracts.ts'

/** One chat turn. The backend renders the conversation with the model's own chat template. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface GenerateOptions {
  /** Most tokens to generate (the end-of-turn token included). Required: plans are short. */
  maxTokens: number
  /**
   * Strings that end the answer. Checked on the decoded text; the answer is cut before the
   * first one and is returned without it. Default none (the model's end-of-turn token only).
   */
  stop?: string[]
  /** 0 (the default) decodes greedily, so the same prompt always gives the same answer. */
  temperature?: number
  /** Checked between tokens: an abort rejects with its TIMEOUT reason, or with ABORTED. */
  signal?: AbortSignal
  /** The request's shared retries (`CallOptions.retries`), for backends that retry. */
  retries?: RetryBudget
  /**
   * Qwen3's thinking switch (`enable_thinking` in its chat template). Off by default: planning
   * needs no reasoning trace and thinking costs hundreds of tokens. Templates without the switch
   * ignore it.
   */
  thinking?: boolean
}

/** Why generation ended: end-of-turn token or stop string, `maxTokens`, or anything else. */
export type FinishReason = 'stop' | 'length' | 'other'

export interface GenerateResult {
  /** The answer, without the end-of-turn token and without the stop string that ended it. */
  text: string
  usage: Usage
  finishReason: FinishReason
}

export interface ScoreChoicesOptions {
  signal?: AbortSignal
  /** The request's shared retries (`CallOptions.retries`), for backends that retry. */
  retries?: RetryBudget
}

export interface ChoiceScores {
  /**
   * One score per choice, in order: the total log-probability (natural log, <= 0) of the choice
   * as the whole assistant answer, end-of-turn token included. Backends that can only name one
   * choice (guided decoding) give the named one its log-probability (or 0) and the others
   * `-Infinity`.
   */
  scores: number[]
  usage: Usage
  /** What the model answered, for backends that answer in text (guided decoding, logprobs). */
  raw?: string
}

export interface LanguageModel {
  /** Identifies the model in names, logs and benchmark rows: `onnx:qwen3-1.7b`, `openai:qwen3-8b`. */
  readonly modelId: string
  /** Answers the conversation with a new assistant turn. */
  generate(messages: ChatMessage[], options: GenerateOptions): Promise<GenerateResult>
  /**
   * Scores each choice as the complete assistant answer to `messages` (thinking off), so a
   * caller can pick among a closed set and always get a valid answer. `choices` must be
   * non-empty; duplicates get equal scores.
   */
  scoreChoices(
    messages: ChatMessage[],
    choices: string[],
    options?: ScoreChoicesOptions,
  ): Promise<ChoiceScores>
}

/** Index of the highest score; the first one on ties. -1 for an empty list. */
export function argmax(scores: readonly number[]): number {
  let best = -1
  for (let index = 0; index < scores.length; index++) {
    if (best < 0 || scores[index] > scores[best]) best = index
  }
  return best
}
