/**
 * Dense-similarity features of the learned selector's candidates: the cosine between the
 * instruction (and each planner clause) and each BM25 candidate, embedded with static word
 * vectors (`static:glove-100d`, SIF-weighted GloVe; models/static). No ANN index is needed: only
 * the candidates' vectors, derived once per tool and library version (library/tool-memo.ts) and
 * costing tens of microseconds each, so every library has them, old indexes included. They let
 * the selector see a tool that matches the request's meaning while sharing few of its words.
 *
 * They are opt-in (`toolsel train --dense`): measured against the default model on every suite
 * they did not win broadly (bench/README.md, "Dense and hybrid retrieval"). Per request they
 * embed the instruction and each clause (most of their cost) and take one cosine per text and
 * candidate: a `--learned-dense` model's call costs about 0.12 ms more than the default model's
 * at 10k tools (0.22 ms before round 10 made them cheaper with the same bits; bench/README.md,
 * "Learned dense space"). A model trained with them gets them from the selector;
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
  /**
   * A candidate's unit vector (see DenseToolVectors). `position`: where the library holds it,
   * as BM25 candidates say (a hint: the memo then finds it by position, not by id).
   */
  toolVector: (id: string, position?: number) => Float32Array
  /**
   * `instruction`: a one-clause plan's clause features use the whole instruction's vector (over
   * the clause's candidates). The clause is then the instruction without its context, and the
   * features of a fragment outvote the instruction's (bench/README.md, "Learned dense space",
   * round 17). Absent: the clause's own vector, as models trained before it compute.
   */
  oneClause?: 'instruction'
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

  /** The features' input for one request (`oneClause`: see DenseInput; absent: none). */
  input(
    tool: (id: string) => Tool,
    library?: ToolLibrary,
    oneClause?: DenseInput['oneClause'],
  ): DenseInput {
    const input: DenseInput = {
      encoder: this.encoder,
      toolVector: library
        ? (id, position) => this.#memo.get(library, id, position)
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
    if (oneClause) input.oneClause = oneClause
    return input
  }
}

/**
 * A tool's text for its vector: namespace, name and description (toolEmbeddingText without the
 * parameters), about half the words to embed; on the suites it did no worse than the full text.
 */
export function denseToolText(tool: Tool): string {
  return toolEmbeddingText({ ...tool, parameters: { type: 'object', properties: {} } })
}

/**
 * Cosines of `query` to the vectors at `slots` (unit vectors: dot products), into `out[slot]`.
 * Four candidates at a time: each sum runs over the dimensions in order (the same additions as
 * one at a time, so the same bits), and the four are independent, so they overlap.
 */
function cosines(
  query: Float32Array,
  vectors: readonly Float32Array[],
  slots: readonly number[],
  out: Float64Array,
): void {
  const size = query.length
  let at = 0
  for (; at + 4 <= slots.length; at += 4) {
    const a = vectors[slots[at]]
    const b = vectors[slots[at + 1]]
    const c = vectors[slots[at + 2]]
    const d = vectors[slots[at + 3]]
    let sa = 0
    let sb = 0
    let sc = 0
    let sd = 0
    for (let index = 0; index < size; index++) {
      const q = query[index]
      sa += q * a[index]
      sb += q * b[index]
      sc += q * c[index]
      sd += q * d[index]
    }
    out[slots[at]] = sa
    out[slots[at + 1]] = sb
    out[slots[at + 2]] = sc
    out[slots[at + 3]] = sd
  }
  for (; at < slots.length; at++) {
    const vector = vectors[slots[at]]
    let sum = 0
    for (let index = 0; index < size; index++) sum += query[index] * vector[index]
    out[slots[at]] = sum
  }
}

/** One text's cosines to its candidates (by slot), their mean and its best. */
interface Similarities {
  /** The text's vector. */
  query: Float32Array
  /** Cosine of each slot; only the text's own slots are set. */
  cosine: Float64Array
  /** For each slot, whether it is one of the text's candidates. */
  member: Uint8Array
  mean: number
  /** The slot of the first candidate with the highest cosine (-1: none). */
  best: number
}

function similarities(
  query: Float32Array,
  vectors: readonly Float32Array[],
  slots: readonly number[],
  cosine: Float64Array,
  member: Uint8Array,
): Similarities {
  cosines(query, vectors, slots, cosine)
  let sum = 0
  let best = -1
  let bestValue = Number.NEGATIVE_INFINITY
  for (const slot of slots) {
    const value = cosine[slot]
    member[slot] = 1
    sum += value
    if (value > bestValue) {
      bestValue = value
      best = slot
    }
  }
  return { query, cosine, member, mean: slots.length === 0 ? 0 : sum / slots.length, best }
}

/** A list's distinct slots, in the order of first appearance (`seen`: scratch, -1 or other marks). */
function distinctSlots(list: ArrayLike<number>, seen: Int32Array, mark: number): number[] {
  const out: number[] = []
  for (let at = 0; at < list.length; at++) {
    const slot = list[at]
    if (seen[slot] !== mark) {
      seen[slot] = mark
      out.push(slot)
    }
  }
  return out
}

/**
 * DENSE_FEATURE_NAMES values of every candidate in `ids`, in that order: the whole instruction
 * against all candidates, and each clause against its own candidates (best clause per
 * candidate). `positions[i]`: where the library holds `ids[i]` (optional, see DenseInput).
 */
export function denseFeatureValues(
  dense: DenseInput,
  instruction: string,
  steps: ReadonlyArray<{ text: string; ids: readonly string[] }>,
  ids: readonly string[],
  positions: ReadonlyArray<number | undefined> = [],
): number[][] {
  // Slots: the distinct candidates, ids' first, then those only a clause lists.
  const slotOf = new Map<string, number>()
  const tools: string[] = []
  const toolPositions: Array<number | undefined> = []
  const slotsOf = (list: readonly string[], at: ReadonlyArray<number | undefined>) =>
    list.map((id, index) => {
      let slot = slotOf.get(id)
      if (slot === undefined) {
        slot = tools.length
        slotOf.set(id, slot)
        tools.push(id)
        toolPositions.push(at[index])
      }
      return slot
    })
  const idSlots = slotsOf(ids, positions)
  const clauses = steps.map((step) => ({ text: step.text, slots: slotsOf(step.ids, []) }))
  return denseSlotValues(dense, instruction, clauses, tools, toolPositions, idSlots)
}

/**
 * denseFeatureValues on candidates numbered by slot: `tools[slot]` (distinct ids, at
 * `positions[slot]`), the clauses' candidate lists as slots, and the candidates to give values
 * for (`wanted`, slots, in the order of the result; the instruction's candidates). Each
 * candidate's vector is read once and each distinct text embedded once.
 */
export function denseSlotValues(
  dense: DenseInput,
  instruction: string,
  steps: ReadonlyArray<{ text: string; slots: ArrayLike<number> }>,
  tools: readonly string[],
  positions: ReadonlyArray<number | undefined>,
  wanted: readonly number[],
): number[][] {
  const count = tools.length
  const vectors: Float32Array[] = new Array(count)
  for (let slot = 0; slot < count; slot++)
    vectors[slot] = dense.toolVector(tools[slot], positions[slot])
  // One block of cosines and membership flags for the instruction and every clause.
  const cosineBlock = new Float64Array(count * (steps.length + 1))
  const memberBlock = new Uint8Array(count * (steps.length + 1))
  const seen = new Int32Array(count).fill(-1)
  const query = dense.encoder.embedText(instruction)
  const whole = similarities(
    query,
    vectors,
    distinctSlots(wanted, seen, 0),
    cosineBlock.subarray(0, count),
    memberBlock.subarray(0, count),
  )
  const perStep: Similarities[] = new Array(steps.length)
  for (let index = 0; index < steps.length; index++) {
    const { text, slots } = steps[index]
    // A clause that repeats the instruction or an earlier clause has its vector already.
    let vector =
      text === instruction || (dense.oneClause === 'instruction' && steps.length === 1)
        ? query
        : undefined
    for (let earlier = 0; vector === undefined && earlier < index; earlier++) {
      if (steps[earlier].text === text) vector = perStep[earlier].query
    }
    const offset = (index + 1) * count
    perStep[index] = similarities(
      vector ?? dense.encoder.embedText(text),
      vectors,
      distinctSlots(slots, seen, index + 1),
      cosineBlock.subarray(offset, offset + count),
      memberBlock.subarray(offset, offset + count),
    )
  }
  const out: number[][] = new Array(wanted.length)
  for (let at = 0; at < wanted.length; at++) {
    const slot = wanted[at]
    const cosine = whole.cosine[slot]
    let stepCosine = Number.NEGATIVE_INFINITY
    let stepDev = Number.NEGATIVE_INFINITY
    let stepTop1 = 0
    for (const step of perStep) {
      if (step.member[slot] === 0) continue
      const value = step.cosine[slot]
      stepCosine = Math.max(stepCosine, value)
      stepDev = Math.max(stepDev, value - step.mean)
      if (step.best === slot) stepTop1 = 1
    }
    if (stepCosine === Number.NEGATIVE_INFINITY) {
      // Only the whole instruction retrieved it: its clause values are the instruction's.
      stepCosine = cosine
      stepDev = cosine - whole.mean
    }
    out[at] = [
      cosine,
      cosine - whole.mean,
      whole.best === slot ? 1 : 0,
      stepCosine,
      stepDev,
      stepTop1,
    ]
  }
  return out
}
