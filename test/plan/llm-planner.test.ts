import { afterAll, describe, expect, it } from 'vitest'
import { ToolselError } from '../../src/errors.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { OnnxLanguageModel } from '../../src/models/onnx/onnx-language-model.ts'
import { LlmPlanner } from '../../src/plan/llm-planner.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { ReplayLanguageModel } from '../models/language/replay-language-model.ts'
import { TINY_MODELS_MISSING, tinyModel } from '../models/language/tiny-models.ts'

const INSTRUCTION = 'Get the weather forecast for Paris tomorrow and email it to Ann.'
const STEPS = ['get the weather forecast for Paris tomorrow', 'email it to Ann']

describe.skipIf(TINY_MODELS_MISSING)('LlmPlanner on tiny Qwen3 models', () => {
  afterAll(() => OnnxLanguageModel.clearCache())

  it('plans with the model through its chat template and reports usage', async () => {
    const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-planner'))
    const planner = new LlmPlanner({ model })
    const result = await planner.plan(INSTRUCTION)
    expect(result).toEqual({
      steps: STEPS,
      planner: 'llm(onnx:tiny-qwen3-planner)',
      usage: { inputTokens: expect.any(Number), outputTokens: 16 },
    })
  })

  it('reads a plan written after a think block inside a code fence', async () => {
    const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-thinking'))
    expect((await new LlmPlanner({ model, thinking: true }).plan(INSTRUCTION)).steps).toEqual(STEPS)
    expect((await new LlmPlanner({ model }).plan(INSTRUCTION)).steps).toEqual(STEPS)
  })

  it('falls back to the rule planner on an unusable answer and says so, with the raw text', async () => {
    const logger = createMemoryLogger()
    const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-garbage'))
    const planner = new LlmPlanner({ model, maxTokens: 10, fallback: new RulePlanner(), logger })
    const result = await planner.plan(INSTRUCTION)
    expect(result.planner).toBe('rule')
    expect(result.steps).toEqual(await new RulePlanner().split(INSTRUCTION))
    expect(result.fallback).toEqual({
      stage: 'planner',
      from: 'llm(onnx:tiny-qwen3-garbage)',
      to: 'rule',
      code: 'PLAN_UNPARSABLE',
      message: expect.stringContaining('cut at 10 tokens'),
      raw: 'I cannot help with that, sorry la la la',
    })
    expect(result.usage).toEqual({ inputTokens: expect.any(Number), outputTokens: 10 })
    expect(logger.lines.join('\n')).toContain('using the fallback planner')
  })

  it('throws PLAN_UNPARSABLE with the raw text when there is no fallback', async () => {
    const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-garbage'))
    const error = await new LlmPlanner({ model, maxTokens: 7 })
      .plan(INSTRUCTION)
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({
      code: 'PLAN_UNPARSABLE',
      details: { raw: 'I cannot help with that, sorry' },
    })
  })

  it('propagates a timeout instead of falling back', async () => {
    const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-garbage'))
    const planner = new LlmPlanner({ model, maxTokens: 1_000_000, fallback: new RulePlanner() })
    const controller = new AbortController()
    setTimeout(() => controller.abort(new ToolselError('TIMEOUT', 'Planning took over 50 ms.')), 50)
    await expect(planner.plan(INSTRUCTION, { signal: controller.signal })).rejects.toMatchObject({
      code: 'TIMEOUT',
    })
  })
})

describe('LlmPlanner with a replayed model', () => {
  it('asks for a JSON list of one-capability steps, with the step cap in the prompt', async () => {
    const model = new ReplayLanguageModel('replay', { answers: [JSON.stringify(STEPS)] })
    await new LlmPlanner({ model, maxSteps: 5 }).plan(INSTRUCTION)
    const [{ messages, options }] = model.generateCalls
    expect(messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('at most 5'),
    })
    expect(messages[0].content).toContain('JSON list of strings')
    expect(messages.at(-1)).toEqual({ role: 'user', content: INSTRUCTION })
    expect(options).toMatchObject({ maxTokens: 256, thinking: false })
  })

  it('cuts long plans at maxSteps and turns an empty plan into the instruction', async () => {
    const long = new ReplayLanguageModel('replay', {
      answers: [JSON.stringify(['a', 'b', 'c', 'd'])],
    })
    expect((await new LlmPlanner({ model: long, maxSteps: 2 }).plan(INSTRUCTION)).steps).toEqual([
      'a',
      'b',
    ])
    const empty = new ReplayLanguageModel('replay', { answers: ['[]'] })
    expect((await new LlmPlanner({ model: empty }).plan(` ${INSTRUCTION} `)).steps).toEqual([
      INSTRUCTION,
    ])
  })

  it('falls back on a model error, without raw text', async () => {
    const failure = new ToolselError('UPSTREAM_UNAVAILABLE', 'vLLM is down.')
    const model = new ReplayLanguageModel('replay', { answers: [failure] })
    const result = await new LlmPlanner({ model, fallback: new RulePlanner() }).plan(INSTRUCTION)
    expect(result.fallback).toEqual({
      stage: 'planner',
      from: 'llm(replay)',
      to: 'rule',
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'vLLM is down.',
    })
  })

  it('wraps a non-toolsel model error as MODEL_CALL_FAILED', async () => {
    const model = new ReplayLanguageModel('replay', { answers: [new Error('socket hang up')] })
    await expect(new LlmPlanner({ model }).plan(INSTRUCTION)).rejects.toMatchObject({
      code: 'MODEL_CALL_FAILED',
      message: 'llm(replay) failed: socket hang up',
    })
  })

  it('propagates ABORTED even with a fallback', async () => {
    const model = new ReplayLanguageModel('replay', { answers: ['[]'] })
    const controller = new AbortController()
    controller.abort()
    const planner = new LlmPlanner({ model, fallback: new RulePlanner() })
    await expect(planner.plan(INSTRUCTION, { signal: controller.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    })
  })
})
