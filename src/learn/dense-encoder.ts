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
  let vectors = learned.get(map)
  if (vectors === undefined) {
    vectors = base().then((vectors) => {
      if (vectors === undefined) return undefined
      const problem = otherSpace(map, vectors)
      if (problem === undefined) return mappedToolVectors(vectors, map)
      warn(`learned selector: dense map skipped, dense features left neutral: ${problem}`)
      return undefined
    })
    learned.set(map, vectors)
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
