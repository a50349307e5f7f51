/**
 * The part of an OpenAI chat-completions response we read, as a zod schema. Loose on purpose:
 * vLLM, SGLang, llama.cpp, Ollama and TGI add fields of their own, and some omit `usage` or
 * `logprobs`. Reference: https://platform.openai.com/docs/api-reference/chat/object
 * @module
 */
import { z } from 'zod'

const TopLogprobSchema = z.object({
  token: z.string(),
  /** Natural log; OpenAI uses -9999 for "not in the top 20". */
  logprob: z.number(),
})

const TokenLogprobSchema = TopLogprobSchema.extend({
  top_logprobs: z.array(TopLogprobSchema).nullish(),
})

export const ChatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          /** Null when the model answered only with tool calls or a refusal. */
          content: z.string().nullable(),
        }),
        finish_reason: z.string().nullish(),
        logprobs: z.object({ content: z.array(TokenLogprobSchema).nullish() }).nullish(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() })
    .nullish(),
})

export type ChatCompletion = z.infer<typeof ChatCompletionSchema>
export type TokenLogprob = z.infer<typeof TokenLogprobSchema>
