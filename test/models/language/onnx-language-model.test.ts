import { describe, expect, it, vi } from 'vitest'
import { ToolselError } from '../../../src/errors.ts'
import { createMemoryLogger } from '../../../src/log.ts'
import { argmax, type ChatMessage } from '../../../src/models/language-model.ts'
import { CausalLmRuntime } from '../../../src/models/onnx/causal-lm-runtime.ts'
import { OnnxLanguageModel } from '../../../src/models/onnx/onnx-language-model.ts'
import { TINY_MODELS_MISSING, TINY_PLAN, tinyModel } from './tiny-models.ts'

const ASK: ChatMessage[] = [
  { role: 'system', content: 'Split the request into steps.' },
  { role: 'user', content: 'Get the weather for Paris tomorrow and email it to Ann.' },
]

describe.skipIf(TINY_MODELS_MISSING)('OnnxLanguageModel on tiny Qwen3 models', () => {
  describe('generate', () => {
    it('decodes greedily through the chat template until the end-of-turn token', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-planner'))
      const result = await model.generate(ASK, { maxTokens: 64 })
      expect(result.text).toBe(TINY_PLAN)
      expect(result.finishReason).toBe('stop')
      // 15 plan tokens + <|im_end|>; the prompt is the rendered template (system + user turns).
      expect(result.usage.outputTokens).toBe(16)
      expect(result.usage.inputTokens).toBeGreaterThan(20)
    })

    it('passes the thinking switch to the chat template', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-planner'))
      const result = await model.generate(ASK, { maxTokens: 64, thinking: true })
      expect(result.text).toBe(`<think> I need two steps.</think>\n\n${TINY_PLAN}`)
    })

    it('cuts the answer before the first stop string, even one spanning tokens', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-planner'))
      const paris = await model.generate(ASK, { maxTokens: 64, stop: ['Ann', 'Paris'] })
      expect(paris).toMatchObject({ text: '["get the weather forecast for ', finishReason: 'stop' })
      const spanning = await model.generate(ASK, { maxTokens: 64, stop: ['cast for'] })
      expect(spanning.text).toBe('["get the weather fore')
    })

    it('stops at maxTokens with finishReason length', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-garbage'))
      const result = await model.generate(ASK, { maxTokens: 12 })
      expect(result).toMatchObject({
        text: 'I cannot help with that, sorry la la la la la',
        finishReason: 'length',
        usage: { outputTokens: 12 },
      })
    })

    it('carries the KV cache across tokens (the fixture reads the previous token from it)', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-garbage'))
      const result = await model.generate(ASK, { maxTokens: 60 })
      expect(result.text).toBe(`I cannot help with that, sorry${' la'.repeat(53)}`)
      expect(result.text).not.toContain('ERROR')
    })

    it('loads the fp16 file for dtype fp16 and reads its float16 logits', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'), {
        dtype: 'fp16',
      })
      expect(model.modelId).toBe('onnx:tiny-qwen3-selector@fp16')
      expect((await model.generate(ASK, { maxTokens: 8 })).text).toBe('weather.get_forecast')
    })

    it('rejects maxTokens below 1 with INVALID_INPUT', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-planner'))
      await expect(model.generate(ASK, { maxTokens: 0 })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      })
    })
  })

  describe('scoreChoices', () => {
    const CHOICES = ['email.send', 'weather.get_forecast', 'weather.get_current', 'none']

    it('gives the answer the model would generate a log-probability near 0', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'))
      const { scores, usage } = await model.scoreChoices(ASK, CHOICES)
      expect(argmax(scores)).toBe(1)
      expect(scores[1]).toBeGreaterThan(-0.01)
      // Each token off the fixture's table costs about -20 (logit 20 vs 0 over 151,936 tokens).
      expect(scores[2]).toBeCloseTo(-20, 0)
      expect(scores[3]).toBeCloseTo(-20, 0)
      expect(scores[0]).toBeCloseTo(-40, 0)
      expect(usage.outputTokens).toBe(0)
    })

    it('scores the same in one batched pass, one choice per pass, and in fp16', async () => {
      OnnxLanguageModel.clearCache()
      const batched = await (
        await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'))
      ).scoreChoices(ASK, CHOICES)
      OnnxLanguageModel.clearCache()
      const single = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'), {
        scoreBatchSize: 1,
      })
      const half = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'), { dtype: 'fp16' })
      const one = await single.scoreChoices(ASK, CHOICES)
      const fp16 = await half.scoreChoices(ASK, CHOICES)
      one.scores.forEach((score, index) => expect(score).toBeCloseTo(batched.scores[index], 4))
      fp16.scores.forEach((score, index) => expect(score).toBeCloseTo(batched.scores[index], 1))
      OnnxLanguageModel.clearCache()
    })

    it('scores multi-token answers, with and without num_logits_to_keep in the export', async () => {
      const keeps = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-planner'))
      const wrong = ['["get the weather forecast for Paris"]', TINY_PLAN.slice(0, -2)]
      const { scores } = await keeps.scoreChoices(ASK, [wrong[0], TINY_PLAN, wrong[1]])
      expect(argmax(scores)).toBe(1)
      expect(scores[1]).toBeGreaterThan(-0.05)
      // tiny-qwen3-thinking has no num_logits_to_keep input: every pass returns all positions.
      const fenced = '```json\n' + TINY_PLAN + '\n```'
      const full = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-thinking'))
      const fullScores = (await full.scoreChoices(ASK, [TINY_PLAN, fenced, wrong[0]])).scores
      // The fenced answer wins; it tokenizes a little differently as one string than the fixture's
      // segments ("\n[" is one token), so it is not scored near 0 like the plan above.
      expect(argmax(fullScores)).toBe(1)
      expect(fullScores[1]).toBeGreaterThan(fullScores[0] + 10)
    })

    it('rejects an empty choice list with INVALID_INPUT', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'))
      await expect(model.scoreChoices(ASK, [])).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    })
  })

  describe('loading', () => {
    it('shares one instance per resolved directory, dtype and device', async () => {
      const directory = tinyModel('tiny-qwen3-selector')
      const first = await OnnxLanguageModel.load(directory)
      expect(await OnnxLanguageModel.load(`${directory}/../tiny-qwen3-selector`)).toBe(first)
      expect(await OnnxLanguageModel.load(directory, { dtype: 'fp16' })).not.toBe(first)
    })

    it('falls back from cuda to cpu with a logged warning', async () => {
      const logger = createMemoryLogger()
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'), {
        device: 'cuda',
        logger,
      })
      // On a machine with a working CUDA provider the session stays on cuda and nothing is logged.
      if (model.device === 'cpu') {
        expect(logger.lines.join('\n')).toMatch(
          /WARN CUDA execution provider unavailable .*falling back to CPU/,
        )
      }
      expect((await model.generate(ASK, { maxTokens: 8 })).text).toBe('weather.get_forecast')
    })

    it('fails with MODEL_LOAD_FAILED naming the missing piece and the fix', async () => {
      const missing = OnnxLanguageModel.load('/nonexistent/model')
      await expect(missing).rejects.toMatchObject({ code: 'MODEL_LOAD_FAILED' })
      await expect(missing).rejects.toThrow(/is not a directory/)
      const noQ4 = OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'), { dtype: 'q4' })
      await expect(noQ4).rejects.toThrow(/onnx\/model_q4\.onnx \(dtype q4\) is missing.*fp32, fp16/)
    })
  })

  describe('abort', () => {
    it('rejects with ABORTED when the signal has already fired', async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-planner'))
      const controller = new AbortController()
      controller.abort()
      await expect(
        model.generate(ASK, { maxTokens: 8, signal: controller.signal }),
      ).rejects.toMatchObject({
        code: 'ABORTED',
      })
    })

    it("stops a running generation at the next token with the caller's TIMEOUT reason, and stays usable", async () => {
      const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-garbage'))
      const controller = new AbortController()
      // Count the model's forward passes (the real ones run), and fire the caller's timeout
      // during the fifth: no clock is involved.
      let passes = 0
      const forward = CausalLmRuntime.prototype.forward
      const spy = vi.spyOn(CausalLmRuntime.prototype, 'forward').mockImplementation(function (
        this: CausalLmRuntime,
        input,
      ) {
        passes += 1
        if (passes === 5) controller.abort(new ToolselError('TIMEOUT', 'Request took too long.'))
        return forward.call(this, input)
      })
      try {
        await expect(
          model.generate(ASK, { maxTokens: 1_000_000, signal: controller.signal }),
        ).rejects.toMatchObject({ code: 'TIMEOUT', message: 'Request took too long.' })
        // The next call waits for the aborted one to end. That one stopped after its fifth pass
        // (it checks the signal before every token); a 3-token answer takes 3 passes.
        expect((await model.generate(ASK, { maxTokens: 3 })).text).toBe('I cannot help')
        expect(passes).toBe(5 + 3)
      } finally {
        spy.mockRestore()
      }
    })
  })
})
