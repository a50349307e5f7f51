/**
 * Choice scoring for the ONNX backend: log P(choice + end-of-turn | prompt) for every choice,
 * with one pass over the prompt and one batched pass per `batchSize` choices. The prompt's KV
 * cache is computed once and tiled to every row; each row then feeds its choice tokens
 * (right-padded, pads masked out), and the logits at each position score the next token.
 * Scoring the end-of-turn token too makes "weather" and "weather.get_forecast" distinct answers.
 * @module
 */
import { throwIfAborted } from '../../errors.ts'
import type { CausalLmRuntime } from './causal-lm-runtime.ts'
import { ones } from './causal-lm-generate.ts'

export interface ScoreOptions {
  /** Choices per batched pass. Memory grows with rows × prompt length (tiled cache). */
  batchSize: number
  signal?: AbortSignal
}

export interface ScoreResult {
  /** Total natural-log probability per choice. */
  scores: number[]
  /** Tokens fed to the model: the prompt once, plus each choice's tokens. */
  inputTokens: number
}

export async function scoreContinuations(
  runtime: CausalLmRuntime,
  promptIds: number[],
  choices: readonly string[],
  options: ScoreOptions,
): Promise<ScoreResult> {
  const continuations = choices.map((choice) => [...runtime.encode(choice), runtime.endOfTurnId])
  throwIfAborted(options.signal)
  const prompt = await runtime.forward({
    inputIds: [promptIds],
    attentionMask: [ones(promptIds.length)],
    keepLast: 1,
  })
  const first = prompt.logits.subarray((prompt.positions - 1) * prompt.vocab, prompt.positions * prompt.vocab)
  const firstNorm = logSumExp(first)
  const scores = continuations.map((tokens) => first[tokens[0]] - firstNorm)
  let inputTokens = promptIds.length

  for (let start = 0; start < continuations.length; start += options.batchSize) {
    // Only tokens after the first need a pass; the last token is scored but never fed.
    const batch = continuations
      .slice(start, start + options.batchSize)
      .map((tokens, offset) => ({ index: start + offset, feed: tokens.slice(0, -1), tokens }))
      .filter(({ feed }) => feed.length > 0)
    if (batch.length === 0) continue
    throwIfAborted(options.signal)
    const width = Math.max(...batch.map(({ feed }) => feed.length))
    const output = await runtime.forward({
      inputIds: batch.map(({ feed }) => pad(feed, width, runtime.padTokenId)),
      attentionMask: batch.map(({ feed }) => [
        ...ones(promptIds.length),
        ...pad(ones(feed.length), width, 0),
      ]),
      past: runtime.tileCache(prompt.past, batch.length),
      keepLast: width,
    })
    // An export without num_logits_to_keep still returns exactly the `width` new positions.
    const skip = output.positions - width
    batch.forEach(({ index, feed, tokens }, row) => {
      inputTokens += feed.length
      for (let position = 0; position < feed.length; position++) {
        const offset = (row * output.positions + skip + position) * output.vocab
        const logits = output.logits.subarray(offset, offset + output.vocab)
        scores[index] += logits[tokens[position + 1]] - logSumExp(logits)
      }
    })
  }
  return { scores, inputTokens }
}

function pad(values: number[], width: number, filler: number): number[] {
  return values.length >= width ? values : [...values, ...new Array<number>(width - values.length).fill(filler)]
}

/** log(sum(exp(x))), shifted by the maximum so that large logits don't overflow. */
export function logSumExp(values: Float32Array): number {
  let max = -Infinity
  for (const value of values) if (value > max) max = value
  if (max === -Infinity) return -Infinity
  let sum = 0
  for (const value of values) sum += Math.exp(value - max)
  return max + Math.log(sum)
}
