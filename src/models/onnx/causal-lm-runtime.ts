/**
 * The slice of transformers.js a causal LM needs: load tokenizer and model from a local
 * directory, render the chat template, and run one forward pass with a KV cache. The generation
 * loop and choice scoring are ours (`causal-lm-generate.ts`, `causal-lm-score.ts`); feeding
 * goes through the model's own `forward` (`decoder_forward` in transformers.js 4.3.2), which
 * derives `position_ids` from the attention mask and creates the empty cache of the first pass.
 * @module
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ChatMessage } from '../language-model.ts'
import { checkModelTextFiles, readModelText } from '../model-text-files.ts'
import { checkModelWeightFiles } from '../model-weight-files.ts'
import type { OnnxDtype } from './causal-lm-files.ts'
import { loadTransformers, type Device } from './transformers.ts'

/** The transformers.js tensor fields we read. Its full class type is slow to check. */
interface TensorLike {
  readonly type: string
  readonly dims: number[]
  readonly data: ArrayLike<number>
  to(type: 'float32'): TensorLike
}

interface TokenizerLike {
  chat_template: unknown
  eos_token_id?: number
  pad_token_id?: number
  apply_chat_template(messages: ChatMessage[], options: Record<string, unknown>): string
  encode(text: string, options: { add_special_tokens: boolean }): number[]
  decode(ids: number[], options: { skip_special_tokens: boolean }): string
}

interface ModelLike {
  sessions: Record<string, { inputNames: string[] }>
  config: { eos_token_id?: number | number[] }
  generation_config: { eos_token_id?: number | number[] } | null
  forward(inputs: Record<string, unknown>): Promise<Record<string, TensorLike>>
  dispose(): Promise<unknown>
}

/** Past keys and values by input name (`past_key_values.0.key`, …), batch first. */
export type KvCache = Record<string, TensorLike>

export interface ForwardInput {
  /** Token ids per row, all rows the same length (pad them). */
  inputIds: number[][]
  /** 1/0 per row over past + new tokens; pads are 0. */
  attentionMask: number[][]
  /** The cache of earlier tokens; omitted on the first pass. */
  past?: KvCache
  /** Keep logits for the last `keepLast` positions only (when the export supports it). */
  keepLast: number
}

/** Logits as ONNX Runtime returned them: float16 stays 16-bit (Uint16Array on Node 20). */
export interface Logits {
  type: 'float32' | 'float16'
  /** Row-major [rows, positions, vocab]. */
  data: Float32Array | Uint16Array
  vocab: number
}

export interface ForwardOutput {
  logits: Logits
  /** Positions per row in `logits` (all new positions when the export can't keep fewer). */
  positions: number
  past: KvCache
}

export class CausalLmRuntime {
  /** Tokens that end a turn: generation_config's `eos_token_id` list, else config's, else the tokenizer's. */
  readonly eosTokenIds: ReadonlySet<number>
  /** The token that closes the assistant's answer in the chat template (`<|im_end|>` for Qwen3). */
  readonly endOfTurnId: number
  readonly padTokenId: number
  /** Whether the export takes `num_logits_to_keep`, so prompt passes skip the full logits. */
  readonly keepsLogits: boolean
  readonly #tokenizer: TokenizerLike
  readonly #model: ModelLike
  readonly #newTensor: (type: string, data: unknown, dims: number[]) => TensorLike
  readonly #chatTemplate: string | undefined

  private constructor(
    tokenizer: TokenizerLike,
    model: ModelLike,
    newTensor: (type: string, data: unknown, dims: number[]) => TensorLike,
    chatTemplate: string | undefined,
  ) {
    this.#tokenizer = tokenizer
    this.#model = model
    this.#newTensor = newTensor
    this.#chatTemplate = chatTemplate
    const eos = model.generation_config?.eos_token_id ?? model.config.eos_token_id
    const endOfTurn = tokenizer.eos_token_id ?? (Array.isArray(eos) ? eos[0] : eos)
    if (endOfTurn === undefined) throw new Error('no eos_token_id in the tokenizer or config')
    this.endOfTurnId = endOfTurn
    this.eosTokenIds = new Set([
      endOfTurn,
      ...(Array.isArray(eos) ? eos : eos === undefined ? [] : [eos]),
    ])
    this.padTokenId = tokenizer.pad_token_id ?? endOfTurn
    this.keepsLogits = model.sessions.model?.inputNames.includes('num_logits_to_keep') ?? false
  }

  /** Loads `onnx/model{suffix}.onnx` for `dtype` on `device`; errors propagate unwrapped. */
  static async load(directory: string, dtype: string, device: Device): Promise<CausalLmRuntime> {
    // transformers.js reads these whole: a link to /dev/zero would grow the process until killed.
    await checkModelTextFiles(directory)
    // And its ONNX files (model-weight-files.ts): ONNX Runtime reads them whole too.
    await checkModelWeightFiles(directory, dtype as OnnxDtype)
    const transformers = await loadTransformers()
    const [tokenizer, model] = await Promise.all([
      transformers.AutoTokenizer.from_pretrained(directory),
      transformers.AutoModelForCausalLM.from_pretrained(directory, {
        dtype: dtype as 'fp32',
        device,
      }),
    ])
    // Newer Hugging Face repos keep the template in chat_template.jinja, which the tokenizer
    // class of transformers.js 4.3.2 does not read (only processors do).
    const jinja = join(directory, 'chat_template.jinja')
    const template =
      !(tokenizer as unknown as TokenizerLike).chat_template && existsSync(jinja)
        ? await readModelText(jinja)
        : undefined
    return new CausalLmRuntime(
      tokenizer as unknown as TokenizerLike,
      model as unknown as ModelLike,
      (type, data, dims) => new transformers.Tensor(type as 'int64', data as BigInt64Array, dims),
      template,
    )
  }

  /** The generation prompt for `messages`, rendered by the model's chat template. */
  chatPrompt(messages: ChatMessage[], thinking: boolean): string {
    return this.#tokenizer.apply_chat_template(messages, {
      add_generation_prompt: true,
      tokenize: false,
      enable_thinking: thinking,
      ...(this.#chatTemplate === undefined ? {} : { chat_template: this.#chatTemplate }),
    })
  }

  /** Token ids of `text`, without special tokens added (chat prompts carry their own). */
  encode(text: string): number[] {
    return this.#tokenizer.encode(text, { add_special_tokens: false })
  }

  decode(ids: number[]): string {
    return this.#tokenizer.decode(ids, { skip_special_tokens: false })
  }

  async forward(input: ForwardInput): Promise<ForwardOutput> {
    const rows = input.inputIds.length
    const length = input.inputIds[0]?.length ?? 0
    const total = input.attentionMask[0]?.length ?? 0
    const feeds: Record<string, unknown> = {
      input_ids: this.#int64(input.inputIds.flat(), [rows, length]),
      attention_mask: this.#int64(input.attentionMask.flat(), [rows, total]),
    }
    if (input.past) feeds.past_key_values = input.past
    if (this.keepsLogits) feeds.num_logits_to_keep = this.#int64([input.keepLast], [])
    const outputs = await this.#model.forward(feeds)
    const { type, dims, data } = outputs.logits
    if (type !== 'float32' && type !== 'float16') throw new Error(`unsupported logits type ${type}`)
    const past: KvCache = {}
    for (const [name, tensor] of Object.entries(outputs)) {
      if (name.startsWith('present')) past[name.replace('present', 'past_key_values')] = tensor
    }
    return {
      logits: { type, data: data as Float32Array | Uint16Array, vocab: dims[2] },
      positions: dims[1],
      past,
    }
  }

  /** One position's logits as float32 (`index` counts positions over all rows). */
  logitsAt(logits: Logits, index: number): Float32Array {
    const row = logits.data.subarray(index * logits.vocab, (index + 1) * logits.vocab)
    if (logits.type === 'float32') return row as Float32Array
    return this.#newTensor('float16', row, [logits.vocab]).to('float32').data as Float32Array
  }

  /** The cache of row 0 repeated `rows` times, so several continuations share one prompt pass. */
  tileCache(cache: KvCache, rows: number): KvCache {
    const tiled: KvCache = {}
    for (const [name, tensor] of Object.entries(cache)) {
      if (tensor.dims[0] !== 1)
        throw new Error(`cannot tile ${name}: batch ${tensor.dims[0]}, not 1`)
      // fp16 caches arrive as Uint16Array on Node 20 (no Float16Array); the copy keeps the type.
      const data = tensor.data as Float32Array | Uint16Array
      const target = new (data.constructor as new (length: number) => typeof data)(
        data.length * rows,
      )
      for (let row = 0; row < rows; row++) target.set(data, row * data.length)
      tiled[name] = this.#newTensor(tensor.type, target, [rows, ...tensor.dims.slice(1)])
    }
    return tiled
  }

  /** Releases the ONNX Runtime session. */
  async dispose(): Promise<void> {
    await this.#model.dispose()
  }

  #int64(values: number[], dims: number[]): TensorLike {
    return this.#newTensor('int64', BigInt64Array.from(values, BigInt), dims)
  }
}
