import { afterAll, describe, expect, it } from 'vitest'
import { ToolselError } from '../../src/errors.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { OnnxLanguageModel } from '../../src/models/onnx/onnx-language-model.ts'
import { OpenAiLanguageModel } from '../../src/models/openai/openai-language-model.ts'
import { LlmSelector } from '../../src/select/llm-selector.ts'
import type { CandidateTool, SelectionRequest } from '../../src/contracts.ts'
import { Top1Selector } from '../../src/select/top1-selector.ts'
import { ReplayLanguageModel } from '../models/language/replay-language-model.ts'
import { TINY_MODELS_MISSING, tinyModel } from '../models/language/tiny-models.ts'
import { completion, startFakeChatServer } from '../models/openai/fake-chat-server.ts'

const tool = (id: string, score: number, description = `Does ${id}.`): CandidateTool => ({
  id,
  name: id.replace(/[._]/g, ' '),
  description,
  score,
})

const EMAIL = tool('email.send', 9, 'Sends an email\nto one or more recipients.')
const FORECAST = tool('weather.get_forecast', 8, 'Weather forecast for a city and day.')
const CURRENT = tool('weather.get_current', 7, 'Current weather in a city.')
const STEP = 'get the weather forecast for Paris tomorrow'

describe.skipIf(TINY_MODELS_MISSING)('LlmSelector on the tiny Qwen3 selector model', () => {
  afterAll(() => OnnxLanguageModel.clearCache())
  const selector = async (margin?: number) =>
    new LlmSelector({
      model: await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector')),
      margin,
    })

  it('picks the candidate the model scores highest, whatever the retriever order', async () => {
    const [selection] = await (
      await selector()
    ).select([{ step: STEP, candidates: [EMAIL, CURRENT, FORECAST] }])
    expect(selection).toEqual({
      toolId: 'weather.get_forecast',
      score: expect.closeTo(0, 2),
      usage: { inputTokens: expect.any(Number), outputTokens: 0 },
    })
    expect((await selector()).name).toBe('llm(onnx:tiny-qwen3-selector)')
  })

  it('answers none when the model prefers none to every candidate', async () => {
    const [selection] = await (await selector()).select([{ step: STEP, candidates: [EMAIL] }])
    // email.send misses two tokens of the fixture's table (about -40), none misses one (about -20).
    expect(selection).toMatchObject({ toolId: null, score: expect.closeTo(-20, 0) })
  })

  it('turns a pick that beats none by less than the margin into none', async () => {
    const request = { step: STEP, candidates: [EMAIL, FORECAST] }
    // weather.get_forecast scores about 0 and none about -20: a margin of 19 keeps it, 21 does not.
    expect((await (await selector(19)).select([request]))[0].toolId).toBe('weather.get_forecast')
    expect((await (await selector(21)).select([request]))[0].toolId).toBeNull()
  })

  it('selects every step of a plan, in order', async () => {
    const requests: SelectionRequest[] = [
      { step: STEP, candidates: [FORECAST, EMAIL] },
      { step: 'email the forecast to Ann', candidates: [EMAIL] },
      { step: 'nothing found for this one', candidates: [] },
    ]
    const selections = await (await selector()).select(requests)
    expect(selections.map((selection) => selection.toolId)).toEqual([
      'weather.get_forecast',
      null,
      null,
    ])
  })

  it("stops with the caller's TIMEOUT reason", async () => {
    const controller = new AbortController()
    controller.abort(new ToolselError('TIMEOUT', 'Selection took too long.'))
    await expect(
      (await selector()).select([{ step: STEP, candidates: [FORECAST] }], {
        signal: controller.signal,
      }),
    ).rejects.toMatchObject({ code: 'TIMEOUT' })
  })
})

describe('LlmSelector with a replayed model', () => {
  it('answers none for a step without candidates without calling the model', async () => {
    const model = new ReplayLanguageModel('replay', {})
    expect(await new LlmSelector({ model }).select([{ step: STEP, candidates: [] }])).toEqual([
      { toolId: null },
    ])
    expect(model.scoreCalls).toHaveLength(0)
  })

  it('shows the step and one line per candidate, and scores each id plus none', async () => {
    const model = new ReplayLanguageModel('replay', {
      scores: (choices) => choices.map((_, index) => -index),
    })
    await new LlmSelector({ model }).select([{ step: STEP, candidates: [EMAIL, FORECAST, EMAIL] }])
    const [{ messages, choices }] = model.scoreCalls
    expect(choices).toEqual(['email.send', 'weather.get_forecast', 'none'])
    expect(messages[1].content).toBe(
      [
        `Step: ${STEP}`,
        '',
        'Candidates:',
        'email.send: email send - Sends an email to one or more recipients.',
        'weather.get_forecast: weather get forecast - Weather forecast for a city and day.',
        '',
        'Answer with one id from the list, or none.',
      ].join('\n'),
    )
  })

  it('labels the no-tool answer differently when a candidate is called none', async () => {
    const model = new ReplayLanguageModel('replay', {
      scores: (choices) => choices.map((choice) => (choice === 'none' ? 0 : -5)),
    })
    const [selection] = await new LlmSelector({ model }).select([
      { step: STEP, candidates: [tool('none', 1)] },
    ])
    expect(model.scoreCalls[0].choices).toEqual(['none', 'none of these'])
    expect(selection.toolId).toBe('none')
  })

  it('rejects a backend that returns the wrong number of scores', async () => {
    const model = new ReplayLanguageModel('replay', { scores: () => [0] })
    await expect(
      new LlmSelector({ model }).select([{ step: STEP, candidates: [FORECAST] }]),
    ).rejects.toMatchObject({
      code: 'MODEL_CALL_FAILED',
    })
  })
})

describe('LlmSelector over an OpenAI-compatible server', () => {
  it('reports SELECTION_OUTSIDE_CANDIDATES for an answer outside the list, or falls back visibly', async () => {
    const server = await startFakeChatServer()
    try {
      const model = new OpenAiLanguageModel('qwen3-8b', {
        baseUrl: server.baseUrl,
        choiceMode: 'guided_choice',
      })
      const request = { step: STEP, candidates: [FORECAST, EMAIL] }
      server.reply({ body: completion('weather.get_forcast') })
      await expect(new LlmSelector({ model }).select([request])).rejects.toMatchObject({
        code: 'SELECTION_OUTSIDE_CANDIDATES',
        details: { raw: 'weather.get_forcast' },
      })

      const logger = createMemoryLogger()
      server.reply({ body: completion('weather.get_forcast') })
      const [selection] = await new LlmSelector({
        model,
        fallback: new Top1Selector(),
        logger,
      }).select([request])
      expect(selection).toEqual({
        toolId: 'weather.get_forecast',
        score: 8,
        fallback: {
          stage: 'selector',
          from: 'llm(openai:qwen3-8b)',
          to: 'top1',
          code: 'SELECTION_OUTSIDE_CANDIDATES',
          message: expect.stringContaining('"weather.get_forcast"'),
          raw: 'weather.get_forcast',
        },
      })
      expect(logger.lines.join('\n')).toContain('using the fallback selector')

      server.reply({ body: completion('email.send') })
      expect((await new LlmSelector({ model }).select([request]))[0]).toMatchObject({
        toolId: 'email.send',
        score: 0,
        usage: { inputTokens: 42, outputTokens: 7 },
      })
    } finally {
      await server.close()
    }
  })
})
