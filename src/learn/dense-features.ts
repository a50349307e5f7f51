/**
 * Dense-similarity features of the learned selector's candidates: the cosine between the
 * instruction (and each planner clause) and each BM25 candidate, embedded with static word
 * vectors (`static:glove-100d`, SIF-weighted GloVe; models/static). No ANN index is needed: only
 * the candidates' vectors, derived once per tool and library version (library/tool-memo.ts) and
 * costing tens of microseconds each, so every library has them, old indexes included. They let
 * the selector see a tool that matches the request's meaning while sharing few of its words.
 *
 * They are opt-in (`toolsel train --dense`): measured against the default model on every suite
 * they did not win broadly (bench/README.md, "Dense and hybrid retrieval"), and they cost about
 * 0.3 ms of CPU per request at 10k tools. A model trained with them gets them from the selector;
 * when the word vectors cannot be loaded it uses the model's training means instead (a
 * standardised 0: no influence on the score).
 * @module
 */
import type { Tool } from '../library/tool.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { ToolMemo } from '../library/tool-memo.ts'
import { toolEmbeddingText } from '../retrieve/dense/tool-embedding-text.ts'

/** Embeds a text as a unit vector, synchronously (StaticEmbeddingModel does). */
export interface TextEncoder {
  readonly modelId: string
  embedText(text: string): Float32Array
}

/** Appended to the candidate features, in this order. */
export const DENSE_FEATURE_NAMES = [
  'dense_whole',
  'dense_whole_dev',
  'dense_whole_top1',
  'dense_step',
  'dense_step_dev',
  'dense_step_top1',
] as const

/** The encoder and the way to a candidate's vector. */
export interface DenseInput {
  encoder: TextEncoder
  /** A candidate's unit vector (see DenseToolVectors). */
  toolVector: (id: string) => Float32Array
}

/** Tool vectors of one encoder: per library version when there is a library, else per tool object. */
export class DenseToolVectors {
  /** Embeds the request and its clauses. */
  readonly encoder: TextEncoder
  /** Embeds tool texts: the same encoder, or the tool side of a learned map (learn/dense-map.ts). */
  readonly toolEncoder: TextEncoder
  readonly #memo: ToolMemo<Float32Array>
  readonly #byTool = new WeakMap<Tool, Float32Array>()

  constructor(encoder: TextEncoder, toolEncoder: TextEncoder = encoder) {
    this.encoder = encoder
    this.toolEncoder = toolEncoder
    this.#memo = new ToolMemo((tool) => toolEncoder.embedText(denseToolText(tool)))
  }

  input(tool: (id: string) => Tool, library?: ToolLibrary): DenseInput {
    return {
      encoder: this.encoder,
      toolVector: library
        ? (id) => this.#memo.get(library, id)
        : (id) => {
            const found = tool(id)
            let vector = this.#byTool.get(found)
            if (vector === undefined) {
              vector = this.toolEncoder.embedText(denseToolText(found))
              this.#byTool.set(found, vector)
            }
            return vector
          },
    }
  }
}

/**
 * A tool's text for its vector: namespace, name and description (toolEmbeddingText without the
 * parameters), about half the words to embed; on the suites it did no worse than the full text.
 */
export function denseToolText(tool: Tool): string {
  return toolEmbeddingText({ ...tool, parameters: { type: 'object', properties: {} } })
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0
  for (let index = 0; index < a.length; index += 1) sum += a[index] * b[index]
  return sum
}

/** Cosines of one text to a list of candidates, their mean and the index of the best. */
interface Similarities {
  cosine: Map<string, number>
  mean: number
  best: string | undefined
}

function similarities(
  query: Float32Array,
  ids: readonly string[],
  vector: (id: string) => Float32Array,
): Similarities {
  const cosine = new Map<string, number>()
  let sum = 0
  let best: string | undefined
  let bestValue = Number.NEGATIVE_INFINITY
  for (const id of ids) {
    if (cosine.has(id)) continue
    const value = dot(query, vector(id))
    cosine.set(id, value)
    sum += value
    if (value > bestValue) {
      bestValue = value
      best = id
    }
  }
  return { cosine, mean: cosine.size === 0 ? 0 : sum / cosine.size, best }
}

/**
 * DENSE_FEATURE_NAMES values of every candidate in `ids`: the whole instruction against all
 * candidates, and each clause against its own candidates (best clause per candidate).
 */
export function denseFeatureValues(
  dense: DenseInput,
  instruction: string,
  steps: ReadonlyArray<{ text: string; ids: readonly string[] }>,
  ids: readonly string[],
): Map<string, number[]> {
  const out = new Map<string, number[]>()
  const whole = similarities(dense.encoder.embedText(instruction), ids, dense.toolVector)
  const perStep = steps.map((step) =>
    similarities(dense.encoder.embedText(step.text), step.ids, dense.toolVector),
  )
  for (const id of ids) {
    const cosine = whole.cosine.get(id) ?? 0
    let stepCosine = Number.NEGATIVE_INFINITY
    let stepDev = Number.NEGATIVE_INFINITY
    let stepTop1 = 0
    for (const step of perStep) {
      const value = step.cosine.get(id)
      if (value === undefined) continue
      stepCosine = Math.max(stepCosine, value)
      stepDev = Math.max(stepDev, value - step.mean)
      if (step.best === id) stepTop1 = 1
    }
    if (stepCosine === Number.NEGATIVE_INFINITY) {
      // Only the whole instruction retrieved it: its clause values are the instruction's.
      stepCosine = cosine
      stepDev = cosine - whole.mean
    }
    out.set(id, [
      cosine,
      cosine - whole.mean,
      whole.best === id ? 1 : 0,
      stepCosine,
      stepDev,
      stepTop1,
    ])
  }
  return out
}
