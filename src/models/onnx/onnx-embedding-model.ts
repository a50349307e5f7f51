/**
 * Sentence embeddings from any model directory in the transformers.js layout (`config.json`,
 * `tokenizer.json`, `tokenizer_config.json`, `onnx/model*.onnx`), run by the feature-extraction
 * pipeline on ONNX Runtime.
 * @module
 */
import { existsSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { z } from 'zod'
import { ToolselError, errorFirstLine } from '../../errors.ts'
import { SILENT_LOGGER, type Logger } from '../../log.ts'
import { checkModelTextFiles, MODEL_TEXT_FILES, readModelText } from '../model-text-files.ts'
import { modelFilesState } from '../model-fingerprint.ts'
import { embedInBatches, type EmbedOptions, type EmbeddingModel } from '../embedding-model.ts'
import { modelWeightFiles } from '../model-weight-files.ts'
import type { OnnxDtype } from './causal-lm-files.ts'
import { createOnDevice, loadTransformers, type Device } from './transformers.ts'

/** How token vectors become one sentence vector. */
export type Pooling = 'mean' | 'cls'

export type { OnnxDtype } from './causal-lm-files.ts'

/** Settings a model directory may carry in `toolsel.json`; they override sentence-transformers files. */
const ModelSettingsSchema = z
  .object({
    pooling: z.enum(['mean', 'cls']).optional(),
    normalize: z.boolean().optional(),
    queryPrefix: z.string().optional(),
    documentPrefix: z.string().optional(),
  })
  .strict()

export type OnnxModelSettings = z.infer<typeof ModelSettingsSchema>

export interface OnnxEmbeddingOptions extends OnnxModelSettings {
  /** Where to run. `cuda` falls back to `cpu` with a logged warning. Default `cpu`. */
  device?: Device
  /** Which weight file to load. Default `fp32` (`onnx/model.onnx`). */
  dtype?: OnnxDtype
  /** Texts per forward pass. Default 32; 8-128 suits small encoders on CPU. */
  maxBatchSize?: number
  logger?: Logger
}

/** Resolved settings; options win over `toolsel.json`, which wins over sentence-transformers files. */
export type ResolvedOnnxSettings = Required<OnnxModelSettings>

const DEFAULT_SETTINGS: ResolvedOnnxSettings = {
  pooling: 'mean',
  normalize: true,
  queryPrefix: '',
  documentPrefix: '',
}

/** Loads of a model directory before one whose files stayed the same throughout is given up. */
const MAX_LOAD_TRIES = 3

/**
 * Test hooks: `beforeRead` runs in each load after the files were fingerprinted, just before
 * transformers.js reads them (a test replaces the weights there); `afterRead` runs after the
 * model was loaded and probed, before the files are fingerprinted again (a test puts the old
 * weights back there). Unset outside tests.
 */
export const onnxLoadHooks: {
  beforeRead?: (directory: string) => Promise<void> | void
  afterRead?: (directory: string) => Promise<void> | void
} = {}

/** Forward passes run (the load's dimension probe, then each batch embedded): tests count them. */
export const onnxStats = { passes: 0 }

/** The slice of the transformers.js pipeline we use; its full generic type is very slow to check. */
type FeatureExtractor = ((
  texts: string[],
  options: { pooling: Pooling; normalize: boolean },
) => Promise<{ data: ArrayLike<number>; dims: number[] }>) & { dispose(): Promise<void> }

export class OnnxEmbeddingModel implements EmbeddingModel {
  readonly modelId: string
  readonly dimensions: number
  readonly maxBatchSize: number
  /** The device the session actually runs on (after any CUDA fallback). */
  readonly device: Device
  readonly settings: ResolvedOnnxSettings
  /** The files loaded, by content (`modelFilesFingerprint`): `onnx:<dir>` names only a place. */
  readonly fingerprint: string
  /** Every load runs a forward pass (the dimension probe): a warm-up pass would only repeat it. */
  readonly warmedUp = true
  readonly #extractor: FeatureExtractor

  private constructor(
    fields: Pick<
      OnnxEmbeddingModel,
      'modelId' | 'dimensions' | 'maxBatchSize' | 'device' | 'settings' | 'fingerprint'
    >,
    extractor: FeatureExtractor,
  ) {
    this.modelId = fields.modelId
    this.dimensions = fields.dimensions
    this.maxBatchSize = fields.maxBatchSize
    this.device = fields.device
    this.settings = fields.settings
    this.fingerprint = fields.fingerprint
    this.#extractor = extractor
  }

  /**
   * Loads the model in `directory` and runs one probe text to learn its dimensions, so a broken
   * model fails here (MODEL_LOAD_FAILED) rather than on the first request.
   *
   * The files are fingerprinted before and after the load (the second time from the per-process
   * cache unless a file's stat changed), and their stat identity (device, inode, size, mtime,
   * ctime) taken with it: weights replaced while transformers.js read them would otherwise pair
   * the vectors of one set of weights with the fingerprint of another. When either differs the
   * loaded model is let go and the load starts again, at most `MAX_LOAD_TRIES` times (then
   * MODEL_LOAD_FAILED: the directory kept changing). The identity sees weights replaced and put
   * back during one load (A, B, A), where the two fingerprints agree though B may have been read.
   */
  static async load(
    directory: string,
    options: OnnxEmbeddingOptions = {},
  ): Promise<OnnxEmbeddingModel> {
    const path = resolve(directory)
    const logger = options.logger ?? SILENT_LOGGER
    const dtype = options.dtype ?? 'fp32'
    for (let attempt = 1; ; attempt++) {
      // transformers.js reads these whole: a link to /dev/zero would grow the process until killed.
      // The fingerprint refuses any loaded file that is not a regular file within its limit
      // (model-weight-files.ts), the ONNX files too, before transformers.js reads them.
      await checkModelTextFiles(path)
      const before = await modelFilesState(path, loadedFiles(path, dtype))
      const model = await OnnxEmbeddingModel.#loadOnce(path, options, before.fingerprint)
      const after = await (async () => {
        await onnxLoadHooks.afterRead?.(path)
        return modelFilesState(path, loadedFiles(path, dtype))
      })().catch(async (error: unknown) => {
        await model.dispose()
        throw error
      })
      if (after.fingerprint === before.fingerprint && after.identity === before.identity) {
        return model
      }
      await model.dispose()
      if (attempt >= MAX_LOAD_TRIES) {
        throw new ToolselError(
          'MODEL_LOAD_FAILED',
          `Embedding model "${path}" (dtype ${dtype}) could not be loaded: its files changed during each of ${MAX_LOAD_TRIES} loads. Load it once they are all written.`,
          { details: { directory: path, dtype } },
        )
      }
      logger.warn('Embedding model files changed while it loaded; loading it again', {
        model: path,
        attempt,
      })
    }
  }

  /** One load of the model in `path`, whose files were `fingerprint` just before. */
  static async #loadOnce(
    path: string,
    options: OnnxEmbeddingOptions,
    fingerprint: string,
  ): Promise<OnnxEmbeddingModel> {
    const logger = options.logger ?? SILENT_LOGGER
    const settings = await resolveSettings(path, options)
    const transformers = await loadTransformers()
    const dtype = options.dtype ?? 'fp32'
    await onnxLoadHooks.beforeRead?.(path)
    try {
      const { value: extractor, device } = await createOnDevice(
        options.device ?? 'cpu',
        async (device) =>
          (await transformers.pipeline('feature-extraction', path, {
            device,
            dtype,
          })) as unknown as FeatureExtractor,
        (message) => logger.warn(message, { model: path }),
      )
      onnxStats.passes++
      const probe = await extractor(['dimension probe'], settings)
      const dimensions = probe.dims.at(-1) ?? 0
      if (probe.dims.length !== 2 || dimensions === 0) {
        await extractor.dispose()
        throw new Error(`expected pooled output [1, hidden], got [${probe.dims.join(', ')}]`)
      }
      const maxBatchSize = options.maxBatchSize ?? 32
      const modelId = `onnx:${basename(path)}`
      logger.info('Loaded embedding model', { modelId, device, dtype, dimensions, ...settings })
      return new OnnxEmbeddingModel(
        { modelId, dimensions, maxBatchSize, device, settings, fingerprint },
        extractor,
      )
    } catch (error) {
      const reason = errorFirstLine(error)
      throw new ToolselError(
        'MODEL_LOAD_FAILED',
        `Embedding model "${path}" (dtype ${dtype}) could not be loaded: ${reason}. It needs config.json, tokenizer.json, tokenizer_config.json and onnx/model${dtype === 'fp32' ? '' : '_<dtype suffix>'}.onnx.`,
        { cause: error, details: { directory: path, dtype } },
      )
    }
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const prefix =
      options.kind === 'query' ? this.settings.queryPrefix : this.settings.documentPrefix
    return embedInBatches(
      texts.map((text) => prefix + text),
      this.maxBatchSize,
      (batch) => this.#embedBatch(batch),
      options.signal,
    )
  }

  /** Releases the ONNX Runtime session. */
  dispose(): Promise<void> {
    return this.#extractor.dispose()
  }

  async #embedBatch(batch: string[]): Promise<Float32Array[]> {
    try {
      onnxStats.passes++
      const { data } = await this.#extractor(batch, this.settings)
      const rows = Float32Array.from(data)
      return batch.map((_, row) => rows.slice(row * this.dimensions, (row + 1) * this.dimensions))
    } catch (error) {
      throw new ToolselError('MODEL_CALL_FAILED', `Embedding with ${this.modelId} failed.`, {
        cause: error,
        details: { modelId: this.modelId, texts: batch.length },
      })
    }
  }
}

/**
 * The files of the model directory a load reads: its JSON and template files, and the weights of
 * `dtype` with any external data beside them (causal-lm-files.ts: the same layout).
 */
function loadedFiles(directory: string, dtype: OnnxDtype): string[] {
  return [...MODEL_TEXT_FILES, ...modelWeightFiles(directory, dtype)]
}

/** Reads pooling, normalisation and prompts from the model directory and merges the options over them. */
export async function resolveSettings(
  directory: string,
  options: OnnxModelSettings = {},
): Promise<ResolvedOnnxSettings> {
  if (!existsSync(join(directory, 'config.json'))) {
    throw new ToolselError(
      'MODEL_LOAD_FAILED',
      `Embedding model directory "${directory}" has no config.json. Point onnx:<dir> at a model in the transformers.js layout.`,
      { details: { directory } },
    )
  }
  const parsed = ModelSettingsSchema.safeParse((await readJson(directory, 'toolsel.json')) ?? {})
  if (!parsed.success) {
    throw new ToolselError(
      'MODEL_LOAD_FAILED',
      `"${join(directory, 'toolsel.json')}" is invalid: ${parsed.error.issues.map((issue) => issue.message).join('; ')}. Allowed keys: pooling ('mean' | 'cls'), normalize, queryPrefix, documentPrefix.`,
      { details: { directory } },
    )
  }
  const own = parsed.data
  const fromFiles = { ...(await readSentenceTransformersSettings(directory)), ...definedOnly(own) }
  const explicit = definedOnly({
    pooling: options.pooling,
    normalize: options.normalize,
    queryPrefix: options.queryPrefix,
    documentPrefix: options.documentPrefix,
  })
  return { ...DEFAULT_SETTINGS, ...fromFiles, ...explicit }
}

/**
 * sentence-transformers exports describe pooling in `1_Pooling/config.json`, a final Normalize
 * layer in `modules.json` and prompts in `config_sentence_transformers.json`
 * (https://sbert.net/docs/sentence_transformer/usage/custom_models.html).
 */
async function readSentenceTransformersSettings(directory: string): Promise<OnnxModelSettings> {
  const settings: OnnxModelSettings = {}
  const pooling = (await readJson(directory, '1_Pooling/config.json')) as Record<string, unknown>
  if (pooling?.pooling_mode_cls_token === true) settings.pooling = 'cls'
  else if (pooling?.pooling_mode_mean_tokens === true) settings.pooling = 'mean'
  const modules = await readJson(directory, 'modules.json')
  if (Array.isArray(modules) && modules.some((module) => /Normalize$/.test(String(module?.type)))) {
    settings.normalize = true
  }
  const sentence = (await readJson(directory, 'config_sentence_transformers.json')) as {
    prompts?: Record<string, string>
  }
  const prompts = sentence?.prompts ?? {}
  if (typeof prompts.query === 'string') settings.queryPrefix = prompts.query
  const document = prompts.document ?? prompts.passage
  if (typeof document === 'string') settings.documentPrefix = document
  return settings
}

async function readJson(directory: string, file: string): Promise<unknown> {
  const path = join(directory, file)
  if (!existsSync(path)) return undefined
  try {
    return JSON.parse(await readModelText(path))
  } catch (error) {
    if (error instanceof ToolselError) throw error
    throw new ToolselError('MODEL_LOAD_FAILED', `Model file "${path}" is not valid JSON.`, {
      cause: error,
      details: { file: path },
    })
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, inner]) => inner !== undefined),
  ) as Partial<T>
}
