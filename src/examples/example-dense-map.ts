/**
 * A library's own dense space, learned from its usage examples: the learned-dense-space maps
 * (learn/dense-map.ts: InfoNCE over the library's tools, from the identity) trained on the
 * library's (instruction → tools) pairs. Round 8 measured that such a map, trained in the library
 * it serves, doubles dense top-1 there (ToolPlanner G3 32 → 56-61, ToolLens 11 → 46-67) while
 * transferring badly to other libraries; usage examples are exactly a library's own pairs.
 *
 * Guarded like the nearest-example memory's self-check: the map is trained on all but a held-out
 * quarter of the examples first, and used only when it ranks that quarter's tools first more
 * often than the untrained space does (a library whose every tool has one example, CRAFT, learns
 * nothing about a held-out example's tool). Deterministic: the map's training is seeded, and the
 * held-out quarter is chosen by a hash of the instruction.
 * @module
 */
import { denseToolText, type DenseToolVectors } from '../learn/dense-features.ts'
import {
  applyMap,
  denseHits,
  trainDenseMapAsync,
  yieldToEventLoop,
  type DenseMap,
  type DenseMapSet,
} from '../learn/dense-map.ts'
import { idHash } from '../library/id-table.ts'
import type { Tool } from '../library/tool.ts'
import { TopK } from '../retrieve/top-k.ts'
import type { UsageExample } from './usage-example.ts'

export interface ExampleMapOptions {
  /** Passes over the examples. */
  epochs: number
  /** Adam step size. */
  learningRate: number
  /** L2 pull of each map towards the identity (see DenseMapOptions.identityDecay). */
  identityDecay: number
  /** Examples the map is trained on at most (the newest); bounds the training time. */
  maxExamples: number
  /** Examples a library needs before a map is learned. */
  minExamples: number
  /** Top-1 points (0-100) the map must gain on the held-out quarter over the untrained space. */
  minGain: number
}

export const DEFAULT_EXAMPLE_MAP_OPTIONS: Readonly<ExampleMapOptions> = {
  epochs: 2,
  learningRate: 0.002,
  identityDecay: 0.01,
  maxExamples: 5000,
  minExamples: 40,
  minGain: 2,
}

/** The guard's replay: top-1 (%) of the held-out quarter untrained and through the check map. */
export interface ExampleMapCheck {
  held: number
  untrained: number
  trained: number
}

export interface ExampleMapResult {
  /** The map, or undefined when the guard found it did not help (or too few examples). */
  map: DenseMap | undefined
  check: ExampleMapCheck | undefined
}

/** Examples embedded, or held-out examples scored, between two yields to the event loop. */
const CHUNK = 256

/** Rounded to 4 decimals (as the shipped learned map is): the stored map is what was checked. */
const rounded = (values: Float32Array) =>
  Float32Array.from(values, (value) => Math.round(value * 1e4) / 1e4 || 0)

/**
 * Learns the library's map from its examples (see the module comment). `dense` gives the base
 * (untrained) vectors of requests and tools.
 */
export async function learnExampleMap(
  tools: readonly Tool[],
  examples: readonly UsageExample[],
  dense: DenseToolVectors,
  options: Partial<ExampleMapOptions> = {},
): Promise<ExampleMapResult> {
  const settings = { ...DEFAULT_EXAMPLE_MAP_OPTIONS, ...options }
  const position = new Map(tools.map((tool, index) => [tool.id, index]))
  const used = examples.slice(Math.max(0, examples.length - settings.maxExamples))
  const pairs: Array<{ key: string; vector: Float32Array; gold: number[] }> = []
  // Every piece of the work below runs at most a few hundred milliseconds between yields.
  for (let start = 0; start < used.length; start += CHUNK) {
    for (const example of used.slice(start, start + CHUNK)) {
      const gold = example.tools.flatMap((id) => position.get(id) ?? [])
      if (gold.length > 0)
        pairs.push({
          key: example.instruction,
          vector: dense.encoder.embedText(example.instruction),
          gold,
        })
    }
    await yieldToEventLoop()
  }
  if (pairs.length < settings.minExamples || tools.length < 2)
    return { map: undefined, check: undefined }
  const toolVectors = tools.map((tool) => dense.toolEncoder.embedText(denseToolText(tool)))
  const set = (chosen: typeof pairs, name: string): DenseMapSet => ({
    name,
    tools: toolVectors,
    queries: chosen.map(({ vector, gold }) => ({ vector, gold })),
  })
  const train = async (chosen: typeof pairs): Promise<DenseMap> => {
    const map = await trainDenseMapAsync([set(chosen, 'examples')], {
      epochs: settings.epochs,
      learningRate: settings.learningRate,
      identityDecay: settings.identityDecay,
      seed: 1,
    })
    return { size: map.size, query: rounded(map.query), tool: rounded(map.tool) }
  }
  const heldOut = (pair: (typeof pairs)[number]) => idHash(pair.key) % 4 === 0
  const held = pairs.filter(heldOut)
  const top1 = async (map?: DenseMap) => {
    let hits = 0
    for (let start = 0; start < held.length; start += CHUNK) {
      await yieldToEventLoop()
      hits += denseHits([set(held.slice(start, start + CHUNK), 'held')], map).hits
    }
    return Math.round((hits / Math.max(1, held.length)) * 10_000) / 100
  }
  const check: ExampleMapCheck = {
    held: held.length,
    untrained: await top1(),
    trained:
      held.length === 0 ? 0 : await top1(await train(pairs.filter((pair) => !heldOut(pair)))),
  }
  if (held.length === 0 || check.trained < check.untrained + settings.minGain)
    return { map: undefined, check }
  return { map: await train(pairs), check }
}

/**
 * A library's tools in its learned space: cosine of a request to any tool, and the library's
 * best-scored tools for a request. Tool vectors are computed once, at construction.
 */
export class ExampleDenseSpace {
  readonly #map: DenseMap
  readonly #ids: string[]
  readonly #index: Map<string, number>
  readonly #vectors: Float32Array
  readonly #encoder: DenseToolVectors['encoder']

  constructor(tools: readonly Tool[], map: DenseMap, dense: DenseToolVectors) {
    this.#map = map
    this.#encoder = dense.encoder
    this.#ids = tools.map((tool) => tool.id)
    this.#index = new Map(this.#ids.map((id, index) => [id, index]))
    this.#vectors = new Float32Array(tools.length * map.size)
    tools.forEach((tool, index) => {
      const base = dense.toolEncoder.embedText(denseToolText(tool))
      this.#vectors.set(applyMap(map.tool, map.size, base), index * map.size)
    })
  }

  /** The request's cosine to every tool, and the `top` best tools (best first, ties by position). */
  score(instruction: string, top: number): ExampleDenseScores {
    const size = this.#map.size
    const query = applyMap(this.#map.query, size, this.#encoder.embedText(instruction))
    const cosines = new Float32Array(this.#ids.length)
    for (let tool = 0; tool < this.#ids.length; tool++) {
      let sum = 0
      const offset = tool * size
      for (let index = 0; index < size; index++) sum += query[index] * this.#vectors[offset + index]
      cosines[tool] = sum
    }
    const best = new TopK(top)
    for (let tool = 0; tool < cosines.length; tool++) best.push(tool, cosines[tool])
    return {
      top: best.sorted().map(({ position }) => this.#ids[position]),
      cosine: (id) => {
        const at = this.#index.get(id)
        return at === undefined ? 0 : cosines[at]
      },
    }
  }
}

export interface ExampleDenseScores {
  /** The library's best-scored tools, best first. */
  top: readonly string[]
  /** A tool's cosine to the request in the learned space (0 for an unknown id). */
  cosine: (id: string) => number
}
