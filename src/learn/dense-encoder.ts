/**
 * The encoder of the learned selector's dense features (learn/dense-features.ts): static GloVe
 * word vectors, loaded once per process (about a second from the binary cache that `npm ci`
 * writes; see models/static/word-vectors.ts). When they cannot be loaded the selector works
 * without them (neutral feature values) and says so once on stderr.
 * @module
 */
import { StaticEmbeddingModel } from '../models/static/static-embedding-model.ts'
import { DenseToolVectors } from './dense-features.ts'
import { mappedToolVectors } from './dense-map.ts'
import { VECTOR_PROBE_TEXTS } from '../models/vector-probe.ts'
import { spaceProbe } from './dense-space-probe.ts'

let loading: Promise<DenseToolVectors | undefined> | undefined

/** The process' dense tool vectors (undefined when the word vectors are unavailable). */
export function denseToolVectors(): Promise<DenseToolVectors | undefined> {
  loading ??= StaticEmbeddingModel.load('glove-100d', (message) =>
    process.stderr.write(`${message}\n`),
  ).then(
    (model) => new DenseToolVectors(model),
    (error: unknown) => {
      process.stderr.write(
        `learned selector: static word vectors unavailable, dense features left neutral (${(error as Error).message})\n`,
      )
      return undefined
    },
  )
  return loading
}

/** The map part of a model's `denseMap` (learned-model.ts). */
export interface StoredDenseMap {
  /** The encoder's id the map was trained over (`static:glove-100d`). */
  base?: string
  /** That encoder's vectors by content (dense-space-probe.ts); absent in older models. */
  baseProbe?: string
  size: number
  query: readonly number[]
  tool: readonly number[]
}

const learned = new WeakMap<StoredDenseMap, Promise<DenseToolVectors | undefined>>()

/**
 * Dense tool vectors in a model's learned space (learn/dense-map.ts): the process' static word
 * vectors through the model's request and tool maps; one instance (and tool-vector memo) per map.
 * Undefined when the word vectors are unavailable, as for denseToolVectors, and when they are not
 * the space the map was trained over (another encoder id or dimension, or other vectors under
 * the same id: `baseProbe`): the dense features are left neutral then, said once on stderr.
 */
export function learnedToolVectors(
  map: StoredDenseMap,
  warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
  base: () => Promise<DenseToolVectors | undefined> = denseToolVectors,
): Promise<DenseToolVectors | undefined> {
  return checkedOnce(learned, map, base, warn, (vectors) => {
    const problem = otherSpace(map, vectors)
    return problem === undefined
      ? mappedToolVectors(vectors, map)
      : `learned selector: dense map skipped, dense features left neutral: ${problem}`
  })
}

const probed = new Map<string, Promise<DenseToolVectors | undefined>>()

/**
 * The process' dense tool vectors for a model whose plain dense features (no map) were computed
 * over vectors of probe `probe` (learned-model.ts `denseProbe`): undefined, said once on stderr,
 * when the vectors loaded here are others (another release or conversion of the word vectors),
 * so the dense features are left neutral instead of computed in another space.
 */
export function probedToolVectors(
  probe: string,
  warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
  base: () => Promise<DenseToolVectors | undefined> = denseToolVectors,
): Promise<DenseToolVectors | undefined> {
  return checkedOnce(probed, probe, base, warn, (vectors) => {
    const here = spaceProbe(vectors.encoder)
    return here === probe
      ? vectors
      : `learned selector: dense features left neutral: the model was trained over other ${vectors.encoder.modelId} vectors than this process loaded (probe ${probe} vs ${here}: another release or conversion of the word vectors). Retrain the model with \`toolsel train --dense\`.`
  })
}

/**
 * `base()`'s vectors as `use` makes them, once per `key` (kept in `cache`); undefined when there
 * are none or `use` says why they don't apply (its message, given to `warn` once).
 */
function checkedOnce<K>(
  cache: {
    get(key: K): Promise<DenseToolVectors | undefined> | undefined
    set(key: K, value: Promise<DenseToolVectors | undefined>): unknown
  },
  key: K,
  base: () => Promise<DenseToolVectors | undefined>,
  warn: (message: string) => void,
  use: (vectors: DenseToolVectors) => DenseToolVectors | string,
): Promise<DenseToolVectors | undefined> {
  let vectors = cache.get(key)
  if (vectors === undefined) {
    vectors = base().then((vectors) => {
      if (vectors === undefined) return undefined
      const used = use(vectors)
      if (typeof used !== 'string') return used
      warn(used)
      return undefined
    })
    cache.set(key, vectors)
  }
  return vectors
}

/** Why `map` does not apply to `vectors`' space, or undefined when it does. */
export function otherSpace(map: StoredDenseMap, vectors: DenseToolVectors): string | undefined {
  const { encoder } = vectors
  const base = map.base ?? 'static:glove-100d'
  const retrain = 'Retrain the model with `toolsel train --learned-dense`.'
  if (encoder.modelId !== base)
    return `the map was trained over ${base} vectors, this process has ${encoder.modelId}. ${retrain}`
  const dimensions = encoder.embedText(VECTOR_PROBE_TEXTS[0]!).length
  if (dimensions !== map.size)
    return `the map is ${map.size} × ${map.size}, ${base} vectors here have ${dimensions} dimensions. ${retrain}`
  if (map.baseProbe !== undefined && map.baseProbe !== spaceProbe(encoder))
    return `the map was trained over other ${base} vectors than this process loaded (probe ${map.baseProbe} vs ${spaceProbe(encoder)}: another release or conversion of the word vectors). ${retrain}`
  return undefined
}
