/**
 * A causal LM from a local directory in the transformers.js layout (an ONNX export of Qwen3, or
 * of a fine-tuned checkpoint), run on ONNX Runtime. One instance per directory, dtype and device
 * is shared by everyone who asks, so a planner and a selector on the same model load it once.
 * @module
 */
import { basename, resolve } from 'node:path'
import { ToolselError, errorFirstLine, isToolselError, throwIfAborted } from '../../errors.ts'
import { SILENT_LOGGER, type Logger } from '../../log.ts'
import type {
  ChatMessage,
  ChoiceScores,
  GenerateOptions,
  GenerateResult,
  LanguageModel,
  ScoreChoicesOptions,
} from '../language-model.ts'
import { decodeTokens } from './causal-lm-generate.ts'
import { layoutProblems } from './causal-lm-files.ts'
import { CausalLmRuntime } from './causal-lm-runtime.ts'
import { scoreContinuations } from './causal-lm-score.ts'
import type { OnnxDtype } from './onnx-embedding-model.ts'
import { createOnDevice, type Device } from './transformers.ts'

export interface OnnxLanguageModelOptions {
  /**
   * Which weight file to load: `fp32` → onnx/model.onnx (the default), `fp16` → model_fp16.onnx,
   * `q8` → model_quantized.onnx, `q4` → model_q4.onnx, `q4f16` → model_q4f16.onnx.
   */
  dtype?: OnnxDtype
  /** Where to run. `cuda` falls back to `cpu` with a logged warning. Default `cpu`. */
  device?: Device
  /**
   * Choices scored per batched forward pass. Default 16 (15 candidates + none in one pass).
   * Memory grows with this times the prompt length; lower it for long prompts on small GPUs.
   * Shared instances keep the value of the first load of their directory.
   */
  scoreBatchSize?: number
  logger?: Logger
}

const instances = new Map<string, Promise<OnnxLanguageModel>>()

export class OnnxLanguageModel implements LanguageModel {
  readonly modelId: string
  /** The device the session actually runs on (after any CUDA fallback). */
  readonly device: Device
  readonly dtype: OnnxDtype
  readonly #runtime: CausalLmRuntime
  readonly #scoreBatchSize: number
  /** Calls run one at a time: ONNX Runtime already uses every core for one pass. */
  #queue: Promise<unknown> = Promise.resolve()

  private constructor(
    fields: Pick<OnnxLanguageModel, 'modelId' | 'device' | 'dtype'>,
    runtime: CausalLmRuntime,
    scoreBatchSize: number,
  ) {
    this.modelId = fields.modelId
    this.device = fields.device
    this.dtype = fields.dtype
    this.#runtime = runtime
    this.#scoreBatchSize = scoreBatchSize
  }

  /**
   * The shared model for `directory` (resolved), dtype and requested device; loads it on first
   * use. Throws MODEL_LOAD_FAILED with the missing file and its fix. A failed load is not cached.
   */
  static load(
    directory: string,
    options: OnnxLanguageModelOptions = {},
  ): Promise<OnnxLanguageModel> {
    const path = resolve(directory)
    const key = [path, options.dtype ?? 'fp32', options.device ?? 'cpu'].join('\u0000')
    let instance = instances.get(key)
    if (!instance) {
      instance = OnnxLanguageModel.#load(path, options)
      instance.catch(() => instances.delete(key))
      instances.set(key, instance)
    }
    return instance
  }

  /** Forgets the shared instances (tests; a reload after the files changed). Does not dispose them. */
  static clearCache(): void {
    instances.clear()
  }

  static async #load(path: string, options: OnnxLanguageModelOptions): Promise<OnnxLanguageModel> {
    const dtype = options.dtype ?? 'fp32'
    const logger = options.logger ?? SILENT_LOGGER
    const problems = layoutProblems(path, dtype)
    if (problems.length > 0) {
      throw new ToolselError(
        'MODEL_LOAD_FAILED',
        `Language model "${path}" can't be loaded: ${problems.map((problem) => `${problem.message} ${problem.fix}`).join(' ')}`,
        { details: { directory: path, dtype, problems } },
      )
    }
    try {
      const { value: runtime, device } = await createOnDevice(
        options.device ?? 'cpu',
        (device) => CausalLmRuntime.load(path, dtype, device),
        (message) => logger.warn(message, { model: path }),
      )
      const modelId = `onnx:${basename(path)}${dtype === 'fp32' ? '' : `@${dtype}`}`
      logger.info('Loaded language model', {
        modelId,
        device,
        dtype,
        keepsLogits: runtime.keepsLogits,
      })
      return new OnnxLanguageModel(
        { modelId, device, dtype },
        runtime,
        options.scoreBatchSize ?? 16,
      )
    } catch (error) {
      const reason = errorFirstLine(error)
      throw new ToolselError(
        'MODEL_LOAD_FAILED',
        `Language model "${path}" (dtype ${dtype}) could not be loaded: ${reason}. Run "toolsel models check ${path}" to see what is wrong.`,
        { cause: error, details: { directory: path, dtype } },
      )
    }
  }

  generate(messages: ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (!Number.isInteger(options.maxTokens) || options.maxTokens < 1) {
      return Promise.reject(
        new ToolselError(
          'INVALID_INPUT',
          `maxTokens must be a positive integer, got ${options.maxTokens}.`,
        ),
      )
    }
    return this.#exclusive('Generation', options.signal, async () => {
      const promptIds = this.#runtime.encode(
        this.#runtime.chatPrompt(messages, options.thinking ?? false),
      )
      const result = await decodeTokens(this.#runtime, promptIds, {
        maxTokens: options.maxTokens,
        stop: options.stop ?? [],
        temperature: options.temperature ?? 0,
        signal: options.signal,
      })
      return {
        text: result.text,
        usage: { inputTokens: promptIds.length, outputTokens: result.sampled },
        finishReason: result.finishReason,
      }
    })
  }

  scoreChoices(
    messages: ChatMessage[],
    choices: string[],
    options: ScoreChoicesOptions = {},
  ): Promise<ChoiceScores> {
    if (choices.length === 0) {
      return Promise.reject(
        new ToolselError('INVALID_INPUT', 'scoreChoices needs at least one choice.'),
      )
    }
    return this.#exclusive('Choice scoring', options.signal, async () => {
      const promptIds = this.#runtime.encode(this.#runtime.chatPrompt(messages, false))
      const { scores, inputTokens } = await scoreContinuations(this.#runtime, promptIds, choices, {
        batchSize: this.#scoreBatchSize,
        signal: options.signal,
      })
      return { scores, usage: { inputTokens, outputTokens: 0 } }
    })
  }

  /** Releases the ONNX Runtime session and drops the shared instance. */
  async dispose(): Promise<void> {
    for (const [key, instance] of instances) {
      if ((await instance.catch(() => undefined)) === this) instances.delete(key)
    }
    await this.#runtime.dispose()
  }

  /**
   * Runs `task` after every earlier call has finished. The caller's promise rejects as soon as
   * the signal fires; the task itself stops at its next signal check, and the next queued call
   * starts only then.
   */
  #exclusive<T>(what: string, signal: AbortSignal | undefined, task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      throwIfAborted(signal)
      try {
        return await task()
      } catch (error) {
        if (isToolselError(error)) throw error
        const reason = errorFirstLine(error)
        throw new ToolselError(
          'MODEL_CALL_FAILED',
          `${what} with ${this.modelId} failed: ${reason}`,
          {
            cause: error,
            details: { modelId: this.modelId },
          },
        )
      }
    })
    this.#queue = run.catch(() => undefined)
    return rejectOnAbort(run, signal)
  }
}

function rejectOnAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work
  return new Promise<T>((resolvePromise, reject) => {
    const onAbort = () => {
      try {
        throwIfAborted(signal)
      } catch (error) {
        reject(error)
      }
    }
    if (signal.aborted) onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolvePromise, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
