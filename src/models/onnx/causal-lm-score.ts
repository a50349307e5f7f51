/**
 * Choice scoring for the ONNX backend: log P(choice + end-of-turn | prompt) for every choice,
 * with one pass over the prompt and one batched pass per `batchSize` choices. The prompt's KV
 * cache is computed once and tiled to every row; each row then feeds its choice tokens
 * (right-padded, pads masked out), and the logits at each position score the next token.
 * Scoring the end-of-turn token too makes "weather" and "weather.get_forecast" distinct answers.
 * @module
 */
import { throwIfAborted } from '../../errors.ts'
import { ones } from './causal-lm-generate.ts'
import { tokenLogProbs } from './causal-lm-log-probs.ts'
import type { CausalLmRuntime } from './causal-lm-runtime.ts'

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
  // One position, many targets: cheaper in JavaScript than a pass through the helper graph.
  const first = runtime.logitsAt(prompt.logits, prompt.positions - 1)
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
    if (output.positions !== width) {
      throw new Error(`expected logits for ${width} positions per row, got ${output.positions}`)
    }
    // Target of each (row, position): the next choice token; pads get 0 and are ignored.
    const targets = batch.flatMap(({ tokens }) => pad(tokens.slice(1), width, 0))
    const logProbs = await tokenLogProbs(output.logits, targets)
    batch.forEach(({ index, feed }, row) => {
      inputTokens += feed.length
      for (let position = 0; position < feed.length; position++) {
        scores[index] += logProbs[row * width + position]
      }
    })
  }
  return { scores, inputTokens }
}

function pad(values: number[], width: number, filler: number): number[] {
  return values.length >= width
    ? values
    : [...values, ...new Array<number>(width - values.length).fill(filler)]
}

/** log(sum(exp(x))), shifted by the maximum so that large logits don't overflow. */
export function logSumExp(values: Float32Array): number {
  let max = -Infinity
  for (let index = 0; index < values.length; index++) if (values[index] > max) max = values[index]
  if (max === -Infinity) return -Infinity
  let sum = 0
  for (let index = 0; index < values.length; index++) sum += Math.exp(values[index] - max)
  return max + Math.log(sum)
}
