/**
 * A model served by any OpenAI-compatible chat-completions server (vLLM, SGLang, llama.cpp,
 * Ollama, TGI, api.openai.com). Choice scoring is constrained decoding where the server has it,
 * so the answer is always one of the choices, or a scored free answer (`logprobs`) where not.
 * @module
 */
import { ToolselError } from '../../errors.ts'
import type { Usage } from '../../contracts.ts'
import type {
  ChatMessage,
  ChoiceScores,
  FinishReason,
  GenerateOptions,
  GenerateResult,
  LanguageModel,
  ScoreChoicesOptions,
} from '../language-model.ts'
import type { ChatCompletion } from './chat-completion-schema.ts'
import {
  ChatCompletionsClient,
  type ChatCompletionsClientOptions,
} from './chat-completions-client.ts'
import { scoreFromLogprobs } from './score-from-logprobs.ts'

/**
 * How `scoreChoices` keeps the answer inside the choices:
 * - `json_schema`: `response_format` with a JSON schema whose `answer` is an enum of the choices
 *   (OpenAI, vLLM, SGLang, llama.cpp, Ollama).
 * - `structured_outputs`: vLLM >= 0.10 `structured_outputs: {choice}`.
 * - `guided_choice`: vLLM before 0.12 (removed there; https://docs.vllm.ai/en/latest/features/structured_outputs/).
 * - `logprobs`: no constraint; a greedy answer with `top_logprobs` scores every choice.
 */
export type ChoiceMode = 'json_schema' | 'structured_outputs' | 'guided_choice' | 'logprobs'

export interface OpenAiLanguageModelOptions extends ChatCompletionsClientOptions {
  /** See `ChoiceMode`. Default `json_schema`, the most widely supported constraint. */
  choiceMode?: ChoiceMode
  /**
   * Send Qwen3's thinking switch as `chat_template_kwargs: {enable_thinking}` (vLLM, SGLang,
   * llama.cpp). Turn off for servers that reject unknown fields (api.openai.com). Default true.
   */
  sendThinkingSwitch?: boolean
  /** `top_logprobs` in `logprobs` mode. Default 20 (OpenAI's maximum; vLLM allows more). */
  topLogprobs?: number
}

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = { stop: 'stop', length: 'length' }

export class OpenAiLanguageModel implements LanguageModel {
  readonly modelId: string
  readonly #model: string
  readonly #client: ChatCompletionsClient
  readonly #choiceMode: ChoiceMode
  readonly #sendThinkingSwitch: boolean
  readonly #topLogprobs: number

  /** `model` is the name the server knows the model by (vLLM: `--served-model-name`). */
  constructor(model: string, options: OpenAiLanguageModelOptions) {
    this.modelId = `openai:${model}`
    this.#model = model
    this.#client = new ChatCompletionsClient(options)
    this.#choiceMode = options.choiceMode ?? 'json_schema'
    this.#sendThinkingSwitch = options.sendThinkingSwitch ?? true
    this.#topLogprobs = options.topLogprobs ?? 20
  }

  async generate(messages: ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const { completion, raw } = await this.#client.create(
      {
        ...this.#base(messages, options.thinking ?? false),
        max_tokens: options.maxTokens,
        temperature: options.temperature ?? 0,
        ...(options.stop && options.stop.length > 0 ? { stop: options.stop } : {}),
      },
      options.signal,
      options.retries,
    )
    const choice = completion.choices[0]
    return {
      text: this.#content(choice.message.content, raw),
      usage: usageOf(completion),
      finishReason: FINISH_REASONS[choice.finish_reason ?? ''] ?? 'other',
    }
  }

  async scoreChoices(
    messages: ChatMessage[],
    choices: string[],
    options: ScoreChoicesOptions = {},
  ): Promise<ChoiceScores> {
    if (choices.length === 0)
      throw new ToolselError('INVALID_INPUT', 'scoreChoices needs at least one choice.')
    const longest = Math.max(...choices.map((choice) => choice.length))
    const body: Record<string, unknown> = {
      ...this.#base(messages, false),
      temperature: 0,
      // Characters bound tokens from above; the margin covers JSON punctuation.
      max_tokens: longest + 32,
      ...constraint(this.#choiceMode, choices, this.#topLogprobs),
    }
    const { completion, raw } = await this.#client.create(body, options.signal, options.retries)
    const choice = completion.choices[0]
    const content = this.#content(choice.message.content, raw)
    const usage = usageOf(completion)
    if (this.#choiceMode === 'logprobs') {
      const tokens = choice.logprobs?.content
      if (!tokens) {
        throw new ToolselError(
          'MODEL_CALL_FAILED',
          `${this.modelId} returned no logprobs. Use a server that supports "logprobs" or another choiceMode.`,
          { details: { raw } },
        )
      }
      return { scores: scoreFromLogprobs(tokens, choices), usage, raw: content }
    }
    const answer = answerOf(content, this.#choiceMode)
    if (!choices.includes(answer)) {
      throw new ToolselError(
        'SELECTION_OUTSIDE_CANDIDATES',
        `${this.modelId} answered "${answer.slice(0, 200)}", which is none of the ${choices.length} choices. Does the server support choiceMode "${this.#choiceMode}"? Try "logprobs", which needs no server support.`,
        { details: { raw: content, answer, choices } },
      )
    }
    return { scores: choices.map((item) => (item === answer ? 0 : -Infinity)), usage, raw: content }
  }

  #base(messages: ChatMessage[], thinking: boolean): Record<string, unknown> {
    return {
      model: this.#model,
      messages,
      ...(this.#sendThinkingSwitch ? { chat_template_kwargs: { enable_thinking: thinking } } : {}),
    }
  }

  #content(content: string | null, raw: string): string {
    if (content === null) {
      throw new ToolselError(
        'MODEL_CALL_FAILED',
        `${this.modelId} answered without text content.`,
        {
          details: { raw },
        },
      )
    }
    return content
  }
}

function constraint(
  mode: ChoiceMode,
  choices: string[],
  topLogprobs: number,
): Record<string, unknown> {
  switch (mode) {
    case 'json_schema':
      return {
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'choice',
            strict: true,
            schema: {
              type: 'object',
              properties: { answer: { type: 'string', enum: choices } },
              required: ['answer'],
              additionalProperties: false,
            },
          },
        },
      }
    case 'structured_outputs':
      return { structured_outputs: { choice: choices } }
    case 'guided_choice':
      return { guided_choice: choices }
    case 'logprobs':
      return { logprobs: true, top_logprobs: topLogprobs }
  }
}

/**
 * The answer in a constrained reply: `{"answer": …}` for `json_schema`, the bare text otherwise.
 * A server that ignored `response_format` may still answer a bare choice, which is accepted as is
 * (it is exact, not a correction).
 */
function answerOf(content: string, mode: ChoiceMode): string {
  if (mode === 'json_schema') {
    try {
      const parsed: unknown = JSON.parse(content)
      if (typeof parsed === 'object' && parsed !== null && 'answer' in parsed) {
        return String(parsed.answer)
      }
    } catch {
      // Not JSON: fall through to the bare text.
    }
  }
  return content.trim()
}

function usageOf(completion: ChatCompletion): Usage {
  return {
    inputTokens: completion.usage?.prompt_tokens ?? 0,
    outputTokens: completion.usage?.completion_tokens ?? 0,
  }
}
