/**
 * The decoding loop of the ONNX backend: one prompt pass, then one token per pass on the KV
 * cache, greedy unless a temperature is given. Ours rather than transformers.js `generate()`
 * because we need stop strings on decoded text, a signal check between tokens, and the finish
 * reason, and because Qwen3's generation_config.json asks for sampling (temperature 0.6) where
 * the planner wants reproducible plans.
 * @module
 */
import { throwIfAborted } from '../../errors.ts'
import type { FinishReason } from '../language-model.ts'
import type { CausalLmRuntime } from './causal-lm-runtime.ts'

export interface DecodeOptions {
  /** Most tokens to sample, the end-of-turn token included. At least 1. */
  maxTokens: number
  /** Strings that end the answer; the text is cut before the first one. */
  stop: readonly string[]
  /** 0 decodes greedily; above 0 samples from softmax(logits / temperature). */
  temperature: number
  signal?: AbortSignal
}

export interface DecodeResult {
  text: string
  /** Tokens sampled, the end-of-turn token included (what usage reports as output tokens). */
  sampled: number
  finishReason: FinishReason
}

export async function decodeTokens(
  runtime: CausalLmRuntime,
  promptIds: number[],
  options: DecodeOptions,
): Promise<DecodeResult> {
  throwIfAborted(options.signal)
  let output = await runtime.forward({
    inputIds: [promptIds],
    attentionMask: [ones(promptIds.length)],
    keepLast: 1,
  })
  const generated: number[] = []
  while (true) {
    throwIfAborted(options.signal)
    const token = pickToken(
      runtime.logitsAt(output.logits, output.positions - 1),
      options.temperature,
    )
    if (runtime.eosTokenIds.has(token)) {
      return {
        text: runtime.decode(generated),
        sampled: generated.length + 1,
        finishReason: 'stop',
      }
    }
    generated.push(token)
    // Decoding the whole answer each step keeps multi-byte characters and stop strings that
    // span tokens right; answers are a few hundred tokens, so this costs microseconds.
    const text = runtime.decode(generated)
    const cut = firstStop(text, options.stop)
    if (cut >= 0)
      return { text: text.slice(0, cut), sampled: generated.length, finishReason: 'stop' }
    if (generated.length >= options.maxTokens) {
      return { text, sampled: generated.length, finishReason: 'length' }
    }
    output = await runtime.forward({
      inputIds: [[token]],
      attentionMask: [ones(promptIds.length + generated.length)],
      past: output.past,
      keepLast: 1,
    })
  }
}

/** Where the earliest stop string starts in `text`, or -1. */
export function firstStop(text: string, stop: readonly string[]): number {
  let cut = -1
  for (const candidate of stop) {
    if (candidate === '') continue
    const at = text.indexOf(candidate)
    if (at >= 0 && (cut < 0 || at < cut)) cut = at
  }
  return cut
}

function pickToken(logits: Float32Array, temperature: number): number {
  if (!(temperature > 0)) {
    let best = 0
    for (let index = 1; index < logits.length; index++)
      if (logits[index] > logits[best]) best = index
    return best
  }
  let max = -Infinity
  for (const value of logits) if (value > max) max = value
  const weights = new Float64Array(logits.length)
  let sum = 0
  for (let index = 0; index < logits.length; index++) {
    weights[index] = Math.exp((logits[index] - max) / temperature)
    sum += weights[index]
  }
  let threshold = Math.random() * sum
  for (let index = 0; index < weights.length; index++) {
    threshold -= weights[index]
    if (threshold <= 0) return index
  }
  return weights.length - 1
}

export function ones(length: number): number[] {
  return new Array<number>(length).fill(1)
}
