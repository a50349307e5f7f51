/**
 * What a trainer makes of `toolsel train-data` records is what `llm:onnx:` serving feeds the
 * model. TRL renders a conversational record with the model's chat template over all its
 * messages; the planner and selector served from an ONNX export render theirs with the same
 * template, thinking off, and generate (planner) or score each choice plus the end-of-turn token
 * (selector) after it. With Qwen3's template the two must line up token for token: the rendered
 * record = the served prompt + the target + `<|im_end|>`. A GRPO prompt rendered as TRL renders
 * rollout prompts equals the served prompt only with `enable_thinking: False` (docs/training.md,
 * step 3). The real Qwen3 tokenizer and the tiny Qwen3 fixtures; the prompts are recorded where
 * the ONNX runtime renders them (a spy that calls through).
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import type { ChatMessage } from '../../src/models/language-model.ts'
import { CausalLmRuntime } from '../../src/models/onnx/causal-lm-runtime.ts'
import { OnnxLanguageModel } from '../../src/models/onnx/onnx-language-model.ts'
import { loadTransformers } from '../../src/models/onnx/transformers.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { TINY_MODELS_MISSING, tinyModel } from '../models/language/tiny-models.ts'
import {
  fixedStepService,
  runTrainData,
  SAMPLE_EXAMPLES,
  type TrainDataRun,
} from './run-train-data.ts'

interface Tokenizer {
  apply_chat_template(messages: ChatMessage[], options: Record<string, unknown>): string
  encode(text: string, options: { add_special_tokens: boolean }): number[]
}

describe.skipIf(TINY_MODELS_MISSING)(
  'train-data records under the chat template = what llm:onnx: serving feeds the model',
  () => {
    let tokenizer: Tokenizer
    const runs = {} as Record<'planner' | 'selector' | 'grpo', TrainDataRun>
    /** Every prompt the ONNX runtime rendered, with the thinking switch it was rendered with. */
    const rendered: Array<{ messages: ChatMessage[]; thinking: boolean; prompt: string }> = []

    beforeAll(async () => {
      const dir = await mkdtemp(join(tmpdir(), 'toolsel-train-template-'))
      const examples = join(dir, 'examples.jsonl')
      const library = join(dir, 'sample-tools.json')
      await writeFile(examples, SAMPLE_EXAMPLES.map((item) => JSON.stringify(item)).join('\n'))
      await writeFile(library, JSON.stringify(SAMPLE_TOOLS))
      for (const kind of ['planner', 'selector', 'grpo'] as const) {
        runs[kind] = await runTrainData([
          kind,
          '--examples',
          examples,
          '--library',
          library,
          '--valid-fraction',
          '0',
        ])
        expect(runs[kind].code, runs[kind].stderr).toBe(0)
      }
      const { AutoTokenizer } = await loadTransformers()
      tokenizer = (await AutoTokenizer.from_pretrained(
        tinyModel('tiny-qwen3-selector'),
      )) as unknown as Tokenizer
      const original = CausalLmRuntime.prototype.chatPrompt
      vi.spyOn(CausalLmRuntime.prototype, 'chatPrompt').mockImplementation(function (
        this: CausalLmRuntime,
        messages: ChatMessage[],
        thinking: boolean,
      ) {
        const prompt = original.call(this, messages, thinking)
        rendered.push({ messages, thinking, prompt })
        return prompt
      })
    }, 120_000)
    afterAll(() => {
      vi.restoreAllMocks()
      OnnxLanguageModel.clearCache()
    })

    /** As TRL's SFTTrainer renders a conversational record: the template over every message. */
    const asTrained = (messages: ChatMessage[]) =>
      tokenizer.apply_chat_template(messages, { tokenize: false })
    const ids = (text: string) => tokenizer.encode(text, { add_special_tokens: false })

    const onnxPlanner = () =>
      createComponents(
        parseConfig({
          plan: { planner: `llm:onnx:${tinyModel('tiny-qwen3-planner')}`, fallback: '' },
        }),
        createMemoryLogger(),
      ).planner()

    /** The served prompt + target + end of turn, as text and as tokens. */
    function expectTrainedOn(messages: ChatMessage[], served: string) {
      const target = messages.at(-1)!.content
      const trained = asTrained(messages)
      expect(trained).toBe(`${served}${target}<|im_end|>\n`)
      // Tokens: the ONNX selector encodes the prompt and each choice apart, then <|im_end|>.
      const [endOfTurn] = ids('<|im_end|>')
      const scored = [...ids(served), ...ids(target), endOfTurn]
      expect(ids(trained).slice(0, scored.length)).toEqual(scored)
    }

    it('planner records: the prompt the ONNX planner renders, then the target plan', async () => {
      const planner = onnxPlanner()
      const records = runs.planner.files['planner.train.jsonl']
      expect(records.length).toBe(4)
      for (const record of records) {
        rendered.length = 0
        await planner.plan(record.messages.at(-2).content)
        expect(rendered).toHaveLength(1)
        const [{ messages, thinking, prompt }] = rendered
        expect(thinking).toBe(false)
        expect(JSON.stringify(messages)).toBe(JSON.stringify(record.messages.slice(0, -1)))
        expect(prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true)
        expectTrainedOn(record.messages, prompt)
      }
    })

    it('selector records: the prompt the ONNX selector scores its choices after, then the gold id or none', async () => {
      const config = parseConfig({
        select: { selector: `llm:onnx:${tinyModel('tiny-qwen3-selector')}`, fallback: '' },
      })
      const select = await fixedStepService(config)
      const records = runs.selector.files['selector.train.jsonl']
      expect(records.length).toBe(6)
      for (const record of records) {
        rendered.length = 0
        const result = await select(record.step)
        expect(result.steps[0].candidates.map((candidate) => candidate.id)).toEqual(
          record.candidates,
        )
        expect(rendered).toHaveLength(1)
        const [{ messages, thinking, prompt }] = rendered
        expect(thinking).toBe(false)
        expect(JSON.stringify(messages)).toBe(JSON.stringify(record.messages.slice(0, -1)))
        expectTrainedOn(record.messages, prompt)
      }
    })

    it('GRPO prompts: rendered with enable_thinking False they are the served prompts; by default Qwen3 would think', async () => {
      const planner = onnxPlanner()
      const records = runs.grpo.files['grpo-planner.train.jsonl']
      expect(records.length).toBe(4)
      for (const record of records) {
        rendered.length = 0
        await planner.plan(record.instruction)
        const rollout = (kwargs: Record<string, unknown>) =>
          tokenizer.apply_chat_template(record.prompt, {
            tokenize: false,
            add_generation_prompt: true,
            ...kwargs,
          })
        // GRPOConfig(chat_template_kwargs={"enable_thinking": False}), as docs/training.md says.
        expect(rollout({ enable_thinking: false })).toBe(rendered[0].prompt)
        // TRL's default: Qwen3's template leaves thinking on, a prompt toolsel never sends.
        expect(rollout({})).not.toBe(rendered[0].prompt)
      }
      for (const record of runs.grpo.files['grpo-selector.train.jsonl']) {
        const selector = runs.selector.files['selector.train.jsonl'].find(
          (row) => row.id === record.id,
        )
        expect(JSON.stringify(record.prompt)).toBe(JSON.stringify(selector.messages.slice(0, -1)))
      }
    })
  },
)
