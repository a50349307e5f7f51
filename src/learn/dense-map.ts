/**
 * A learned dense space for the selector's dense features (learn/dense-features.ts): two linear
 * maps over the static GloVe SIF vectors (models/static), one for request texts (A) and one for
 * tool texts (B), trained contrastively so that a request scores its gold tools above every other
 * tool of its library: cosine(A·q, B·t) / τ under a softmax over the whole library (InfoNCE, van
 * den Oord et al. 2018, https://arxiv.org/abs/1807.03748; the library is the set of negatives).
 * There are no per-tool parameters, so a library it was never trained on gets its vectors like
 * any other: the maps apply to any text.
 *
 * Both maps start as the identity (the untrained GloVe cosine) and move by Adam on mini-batches of
 * one library's queries. Deterministic: the batch order is a seeded shuffle, the loops have a
 * fixed order, and nothing else is random.
 * @module
 */
import { normalizeL2 } from '../models/embedding-model.ts'
import { DenseToolVectors, type TextEncoder } from './dense-features.ts'

/** The two maps: `size × size` matrices, row-major (output row i = Σ_j M[i·size + j] · x[j]). */
export interface DenseMap {
  size: number
  query: Float32Array
  tool: Float32Array
}

/** One library's training pairs: unit base vectors of its tools and of requests with gold tools. */
export interface DenseMapSet {
  name: string
  tools: Float32Array[]
  queries: Array<{ vector: Float32Array; gold: number[] }>
}

export interface DenseMapOptions {
  /** Passes over the training queries. Default 2. */
  epochs?: number
  /** Queries per step (all from one library). Default 128. */
  batch?: number
  /** Adam step size. Default 0.002. */
  learningRate?: number
  /** Softmax temperature on the cosines. Default 0.05. */
  temperature?: number
  /** Seeds the batch order. Default 1. */
  seed?: number
  /**
   * L2 penalty on each map's distance from the identity (per step, times the step size): keeps
   * the space near the untrained GloVe one, which is what a library never trained on sees.
   * Default 0.1: on the training sources, maps learned on one source then lifted the other
   * source's held-out top-1 in both directions (bench/dense-map-dev.ts), which without it they
   * did not.
   */
  identityDecay?: number
  /**
   * Learn diagonal maps only (a weight per dimension and side): too few parameters to learn a
   * library's tools, for a space that must transfer. Default false: full maps.
   */
  diagonal?: boolean
  /** After each epoch: its mean loss, and the maps so far (a copy). */
  onEpoch?: (epoch: number, loss: number, map: () => DenseMap) => void
}

/** Applies `matrix` to `input` and scales the result to unit length. */
export function applyMap(matrix: Float32Array, size: number, input: Float32Array): Float32Array {
  const out = new Float32Array(size)
  multiply(matrix, size, input, out)
  return normalizeL2(out)
}

/** Dense tool vectors of `base`'s encoders through a learned map (requests and tools). */
export function mappedToolVectors(
  base: DenseToolVectors,
  map: { size: number; query: ArrayLike<number>; tool: ArrayLike<number> },
): DenseToolVectors {
  return new DenseToolVectors(
    new MappedEncoder(base.encoder, Float32Array.from(map.query), map.size, 'query'),
    new MappedEncoder(base.toolEncoder, Float32Array.from(map.tool), map.size, 'tool'),
  )
}

/** A text encoder in the learned space: the base encoder's vector through one of the maps. */
export class MappedEncoder implements TextEncoder {
  readonly modelId: string
  readonly #base: TextEncoder
  readonly #matrix: Float32Array
  readonly #size: number

  constructor(base: TextEncoder, matrix: Float32Array, size: number, side: 'query' | 'tool') {
    if (matrix.length !== size * size) {
      throw new Error(
        `A dense map of size ${size} needs ${size * size} values, got ${matrix.length}.`,
      )
    }
    this.modelId = `${base.modelId}+learned-${side}`
    this.#base = base
    this.#matrix = matrix
    this.#size = size
  }

  embedText(text: string): Float32Array {
    const vector = this.#base.embedText(text)
    if (vector.length !== this.#size) {
      throw new Error(
        `A dense map of size ${this.#size} can't map ${this.#base.modelId}'s ${vector.length}-dimensional vectors.`,
      )
    }
    return applyMap(this.#matrix, this.#size, vector)
  }
}

function identity(size: number): Float64Array {
  const out = new Float64Array(size * size)
  for (let index = 0; index < size; index++) out[index * size + index] = 1
  return out
}

/** Seeded Fisher-Yates shuffle (xorshift32). */
function shuffle<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0 || 1
  for (let index = items.length - 1; index > 0; index--) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    const other = (state >>> 0) % (index + 1)
    ;[items[index], items[other]] = [items[other], items[index]]
  }
  return items
}

/**
 * out = M·x (M row-major, size × size); returns |M·x| (1 for a zero vector).
 *
 * Ten rows at a time (the rest one at a time): each row's sum still runs over the columns in order
 * (the same additions, so the same bits), but the sums are independent, so the processor overlaps
 * them instead of waiting for each addition before the next, and each input value is read once
 * for all of them; five rows were about twice as fast as one (round 10), ten about a fifth faster
 * again (round 19).
 */
function multiply(
  matrix: Float32Array | Float64Array,
  size: number,
  input: Float32Array,
  out: Float32Array | Float64Array,
): number {
  let norm = 0
  let row = 0
  for (; row + 10 <= size; row += 10) {
    const o0 = row * size
    const o1 = o0 + size
    const o2 = o1 + size
    const o3 = o2 + size
    const o4 = o3 + size
    const o5 = o4 + size
    const o6 = o5 + size
    const o7 = o6 + size
    const o8 = o7 + size
    const o9 = o8 + size
    let s0 = 0
    let s1 = 0
    let s2 = 0
    let s3 = 0
    let s4 = 0
    let s5 = 0
    let s6 = 0
    let s7 = 0
    let s8 = 0
    let s9 = 0
    for (let column = 0; column < size; column++) {
      const x = input[column]
      s0 += matrix[o0 + column] * x
      s1 += matrix[o1 + column] * x
      s2 += matrix[o2 + column] * x
      s3 += matrix[o3 + column] * x
      s4 += matrix[o4 + column] * x
      s5 += matrix[o5 + column] * x
      s6 += matrix[o6 + column] * x
      s7 += matrix[o7 + column] * x
      s8 += matrix[o8 + column] * x
      s9 += matrix[o9 + column] * x
    }
    out[row] = s0
    out[row + 1] = s1
    out[row + 2] = s2
    out[row + 3] = s3
    out[row + 4] = s4
    out[row + 5] = s5
    out[row + 6] = s6
    out[row + 7] = s7
    out[row + 8] = s8
    out[row + 9] = s9
    norm += s0 * s0
    norm += s1 * s1
    norm += s2 * s2
    norm += s3 * s3
    norm += s4 * s4
    norm += s5 * s5
    norm += s6 * s6
    norm += s7 * s7
    norm += s8 * s8
    norm += s9 * s9
  }
  for (; row < size; row++) {
    let sum = 0
    const offset = row * size
    for (let column = 0; column < size; column++) sum += matrix[offset + column] * input[column]
    out[row] = sum
    norm += sum * sum
  }
  return Math.sqrt(norm) || 1
}

/**
 * The gradient of a unit vector's loss (`grad`, w.r.t. x̂ = x / |x|) taken back to x, then to the
 * map: G += ((grad − (grad·x̂) x̂) / |x|) ⊗ input.
 */
function backToMap(
  gradient: Float64Array,
  grad: Float64Array,
  unit: Float64Array,
  norm: number,
  input: Float32Array,
  size: number,
): void {
  let along = 0
  for (let index = 0; index < size; index++) along += grad[index] * unit[index]
  for (let row = 0; row < size; row++) {
    const g = (grad[row] - along * unit[row]) / norm
    if (g === 0) continue
    const offset = row * size
    for (let column = 0; column < size; column++) gradient[offset + column] += g * input[column]
  }
}

class Adam {
  readonly #m: Float64Array
  readonly #v: Float64Array
  #step = 0
  constructor(
    size: number,
    readonly rate: number,
  ) {
    this.#m = new Float64Array(size)
    this.#v = new Float64Array(size)
  }
  update(parameters: Float64Array, gradient: Float64Array): void {
    this.#step += 1
    const b1 = 0.9
    const b2 = 0.999
    const c1 = 1 - b1 ** this.#step
    const c2 = 1 - b2 ** this.#step
    for (let index = 0; index < parameters.length; index++) {
      const g = gradient[index]
      this.#m[index] = b1 * this.#m[index] + (1 - b1) * g
      this.#v[index] = b2 * this.#v[index] + (1 - b2) * g * g
      parameters[index] -=
        (this.rate * (this.#m[index] / c1)) / (Math.sqrt(this.#v[index] / c2) + 1e-8)
    }
  }
}

/** Mean InfoNCE loss of `queries` of one library under the maps, and (optionally) its gradients. */
function batchLoss(
  set: DenseMapSet,
  queries: DenseMapSet['queries'],
  a: Float64Array,
  b: Float64Array,
  size: number,
  temperature: number,
  gradients?: { a: Float64Array; b: Float64Array },
): number {
  const n = set.tools.length
  const toolUnits = new Float64Array(n * size)
  const toolNorms = new Float64Array(n)
  const row = new Float64Array(size)
  for (let tool = 0; tool < n; tool++) {
    const norm = multiply(b, size, set.tools[tool], row)
    toolNorms[tool] = norm
    for (let index = 0; index < size; index++) toolUnits[tool * size + index] = row[index] / norm
  }
  const toolGrads = gradients ? new Float64Array(n * size) : undefined
  const unit = new Float64Array(size)
  const scores = new Float64Array(n)
  const queryGrad = new Float64Array(size)
  let total = 0
  for (const query of queries) {
    const norm = multiply(a, size, query.vector, unit)
    for (let index = 0; index < size; index++) unit[index] /= norm
    let max = Number.NEGATIVE_INFINITY
    for (let tool = 0; tool < n; tool++) {
      let sum = 0
      const offset = tool * size
      for (let index = 0; index < size; index++) sum += unit[index] * toolUnits[offset + index]
      scores[tool] = sum / temperature
      if (scores[tool] > max) max = scores[tool]
    }
    let partition = 0
    for (let tool = 0; tool < n; tool++) {
      scores[tool] = Math.exp(scores[tool] - max)
      partition += scores[tool]
    }
    const share = 1 / query.gold.length
    for (const gold of query.gold) total -= share * Math.log(scores[gold] / partition)
    if (!gradients || !toolGrads) continue
    // d loss / d score_j = p_j − y_j; score_j = û·v̂_j / τ.
    queryGrad.fill(0)
    for (let tool = 0; tool < n; tool++) scores[tool] /= partition
    for (const gold of query.gold) scores[gold] -= share
    for (let tool = 0; tool < n; tool++) {
      const g = scores[tool] / temperature
      const offset = tool * size
      for (let index = 0; index < size; index++) {
        queryGrad[index] += g * toolUnits[offset + index]
        toolGrads[offset + index] += g * unit[index]
      }
    }
    backToMap(gradients.a, queryGrad, unit, norm, query.vector, size)
  }
  if (gradients && toolGrads) {
    const grad = new Float64Array(size)
    const toolUnit = new Float64Array(size)
    for (let tool = 0; tool < n; tool++) {
      for (let index = 0; index < size; index++) {
        grad[index] = toolGrads[tool * size + index]
        toolUnit[index] = toolUnits[tool * size + index]
      }
      backToMap(gradients.b, grad, toolUnit, toolNorms[tool], set.tools[tool], size)
    }
  }
  return total
}

/** Mean loss per query over `sets` under `map` (identity when absent): the untrained GloVe loss. */
export function denseMapLoss(
  sets: readonly DenseMapSet[],
  map?: DenseMap,
  temperature = 0.05,
): number {
  const size = sets.find((set) => set.tools.length > 0)?.tools[0].length ?? 0
  const a = map ? Float64Array.from(map.query) : identity(size)
  const b = map ? Float64Array.from(map.tool) : identity(size)
  let total = 0
  let count = 0
  for (const set of sets) {
    if (set.queries.length === 0 || set.tools.length === 0) continue
    total += batchLoss(set, set.queries, a, b, size, temperature)
    count += set.queries.length
  }
  return count === 0 ? 0 : total / count
}

/** Trains the two maps on `sets` (see the module comment); `losses` is each epoch's mean loss. */
export function trainDenseMap(
  sets: readonly DenseMapSet[],
  options: DenseMapOptions = {},
): DenseMap & { losses: number[] } {
  const steps = denseMapSteps(sets, options)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/**
 * trainDenseMap without holding the event loop: it yields to other tasks after every batch (a
 * batch of 128 queries over 1,415 tools is about 0.1-0.2 s). The same maps as trainDenseMap.
 */
export async function trainDenseMapAsync(
  sets: readonly DenseMapSet[],
  options: DenseMapOptions = {},
): Promise<DenseMap & { losses: number[] }> {
  const steps = denseMapSteps(sets, options)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
    await yieldToEventLoop()
  }
}

/** The training loop of trainDenseMap, one batch per step. */
function* denseMapSteps(
  sets: readonly DenseMapSet[],
  options: DenseMapOptions,
): Generator<undefined, DenseMap & { losses: number[] }> {
  const size = sets.find((set) => set.tools.length > 0)?.tools[0].length
  if (size === undefined) throw new Error('No tools to train the dense map on.')
  const epochs = options.epochs ?? 2
  const batchSize = options.batch ?? 128
  const temperature = options.temperature ?? 0.05
  const seed = options.seed ?? 1
  const a = identity(size)
  const b = identity(size)
  const adamA = new Adam(a.length, options.learningRate ?? 0.002)
  const adamB = new Adam(b.length, options.learningRate ?? 0.002)
  const gradients = { a: new Float64Array(a.length), b: new Float64Array(b.length) }
  const losses: number[] = []
  for (let epoch = 0; epoch < epochs; epoch++) {
    const batches: Array<{ set: DenseMapSet; queries: DenseMapSet['queries'] }> = []
    sets.forEach((set, setIndex) => {
      if (set.tools.length === 0) return
      const order = shuffle([...set.queries], seed * 7919 + epoch * 31 + setIndex)
      for (let start = 0; start < order.length; start += batchSize)
        batches.push({ set, queries: order.slice(start, start + batchSize) })
    })
    shuffle(batches, seed * 104_729 + epoch)
    let total = 0
    let count = 0
    for (const { set, queries } of batches) {
      gradients.a.fill(0)
      gradients.b.fill(0)
      total += batchLoss(set, queries, a, b, size, temperature, gradients)
      count += queries.length
      for (let index = 0; index < a.length; index++) {
        gradients.a[index] /= queries.length
        gradients.b[index] /= queries.length
      }
      if (options.diagonal) {
        for (let index = 0; index < a.length; index++) {
          if (index % (size + 1) === 0) continue
          gradients.a[index] = 0
          gradients.b[index] = 0
        }
      }
      const decay = options.identityDecay ?? 0.1
      if (decay > 0) {
        for (let index = 0; index < a.length; index++) {
          const diagonal = index % (size + 1) === 0 ? 1 : 0
          gradients.a[index] += decay * (a[index] - diagonal)
          gradients.b[index] += decay * (b[index] - diagonal)
        }
      }
      adamA.update(a, gradients.a)
      adamB.update(b, gradients.b)
      yield
    }
    const loss = count === 0 ? 0 : total / count
    losses.push(loss)
    options.onEpoch?.(epoch + 1, loss, () => ({
      size,
      query: Float32Array.from(a),
      tool: Float32Array.from(b),
    }))
  }
  return { size, query: Float32Array.from(a), tool: Float32Array.from(b), losses }
}

/** Rank-1 share (%) of `sets`' queries whose best-scored tool is a gold one, under `map` or the identity. */
export function denseTop1(sets: readonly DenseMapSet[], map?: DenseMap): number {
  const { hits, count } = denseHits(sets, map)
  return count === 0 ? 0 : Math.round((hits / count) * 10_000) / 100
}

/** How many of `sets`' queries have a gold tool as their best-scored one, of how many. */
export function denseHits(
  sets: readonly DenseMapSet[],
  map?: DenseMap,
): { hits: number; count: number } {
  let hits = 0
  let count = 0
  for (const set of sets) {
    if (set.tools.length === 0) continue
    const size = set.tools[0].length
    const tools = map ? set.tools.map((tool) => applyMap(map.tool, size, tool)) : set.tools
    for (const query of set.queries) {
      const unit = map ? applyMap(map.query, size, query.vector) : query.vector
      let best = -1
      let bestScore = Number.NEGATIVE_INFINITY
      tools.forEach((tool, index) => {
        let sum = 0
        for (let column = 0; column < size; column++) sum += unit[column] * tool[column]
        if (sum > bestScore) {
          bestScore = sum
          best = index
        }
      })
      if (query.gold.includes(best)) hits += 1
      count += 1
    }
  }
  return { hits, count }
}

/** Lets other tasks run (a macrotask turn): long trainings call it between their pieces. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))
