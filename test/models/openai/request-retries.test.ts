/**
 * models.openai.maxRetriesPerRequest: the model calls of one request (selectTools) share their
 * retries, over a real HTTP server that fails every call. Before round 43 each call retried on its
 * own, so a fallback list of three models multiplied them: 18 calls for planner and selector.
 */
import { describe, expect, it } from 'vitest'
import { ToolLibrary } from '../../../src/library/tool-library.ts'
import type { Planner, Selector } from '../../../src/contracts.ts'
import {
  OpenAiLanguageModel,
  type OpenAiLanguageModelOptions,
} from '../../../src/models/openai/openai-language-model.ts'
import { RequestRetries } from '../../../src/models/request-retries.ts'
import { selectTools } from '../../../src/pipeline.ts'
import { LlmPlanner } from '../../../src/plan/llm-planner.ts'
import { RulePlanner } from '../../../src/plan/rule-planner.ts'
import { Bm25Retriever } from '../../../src/retrieve/bm25/bm25-retriever.ts'
import { LlmSelector } from '../../../src/select/llm-selector.ts'
import { Top1Selector } from '../../../src/select/top1-selector.ts'
import { SAMPLE_TOOLS } from '../../helpers/sample-tools.ts'
import { completion, useFakeChatServer } from './fake-chat-server.ts'

const library = new ToolLibrary('sample', SAMPLE_TOOLS)
const retriever = Bm25Retriever.build(SAMPLE_TOOLS, {
  k1: 1.2,
  b: 0.75,
  fieldWeights: { name: 3, description: 1, parameters: 1, namespace: 1 },
})
const INSTRUCTION = 'Get the weather forecast for Paris'

const server = useFakeChatServer()

/** `openai:a` → `openai:b` → `openai:c` → rule (planner) and → top1 (selector), as serve builds them. */
function chains(options: Partial<OpenAiLanguageModelOptions>): {
  planner: Planner
  selector: Selector
} {
  const model = (name: string) =>
    new OpenAiLanguageModel(name, { baseUrl: server.baseUrl, retryDelayMs: 1, ...options })
  let planner: Planner = new RulePlanner()
  let selector: Selector = new Top1Selector()
  for (const name of ['c', 'b', 'a']) {
    planner = new LlmPlanner({ model: model(name), fallback: planner })
    selector = new LlmSelector({ model: model(name), fallback: selector })
  }
  return { planner, selector }
}

/** Every call answered 503 with `Retry-After: 0` (the queue holds more than any request makes). */
function failEveryCall() {
  server.reply(
    ...Array.from({ length: 100 }, () => ({
      status: 503,
      body: 'overloaded',
      headers: { 'retry-after': '0' },
    })),
  )
}

const modelsCalled = () => server.requests.map((request) => String(request.body.model))

describe('models.openai.maxRetriesPerRequest', () => {
  it('shares the retries of a request: each model of the list gets its first try, the retries no more than the budget', async () => {
    failEveryCall()
    const result = await selectTools(INSTRUCTION, {
      library,
      retriever,
      k: 15,
      ...chains({ maxRetries: 2, maxRetriesPerRequest: 2 }),
    })
    // Planner a (a retry, a retry), b, c; then rule's one step: selector a, b, c. Before: 18.
    expect(modelsCalled()).toEqual(['a', 'a', 'a', 'b', 'c', 'a', 'b', 'c'])
    expect(result.components.fallbacks.map(({ stage, from, to }) => [stage, from, to])).toEqual([
      ['planner', 'llm(openai:a)', 'llm(openai:b)'],
      ['planner', 'llm(openai:b)', 'llm(openai:c)'],
      ['planner', 'llm(openai:c)', 'rule'],
      ['selector', 'llm(openai:a)', 'llm(openai:b)'],
      ['selector', 'llm(openai:b)', 'llm(openai:c)'],
      ['selector', 'llm(openai:c)', 'top1'],
    ])
    // A call not retried says why.
    expect(result.components.fallbacks[1].message).toMatch(
      /Not retried: this request's 2 retries are spent \(models\.openai\.maxRetriesPerRequest\)\.$/,
    )
    expect(result.tools.map((tool) => tool.id)).toEqual(['weather.get_forecast'])

    // The next request has its own budget.
    server.reset()
    failEveryCall()
    await selectTools(INSTRUCTION, { library, retriever, k: 15, ...chains({ maxRetries: 2 }) })
    expect(server.requests).toHaveLength(8)

    // 0: first tries only; a larger budget than the list needs: each call's maxRetries.
    for (const [maxRetriesPerRequest, calls] of [
      [0, 6],
      [1, 7],
      [100, 18],
    ]) {
      server.reset()
      failEveryCall()
      await selectTools(INSTRUCTION, {
        library,
        retriever,
        k: 15,
        ...chains({ maxRetries: 2, maxRetriesPerRequest }),
      })
      expect({ maxRetriesPerRequest, calls: server.requests.length }).toEqual({
        maxRetriesPerRequest,
        calls,
      })
    }
  })

  it('makes at most P + S x Q first tries and maxRetriesPerRequest retries, S at most plan.maxSteps (README)', async () => {
    // The bound README states (round 44): P models in the planner's list, Q in the selector's,
    // S steps (plan.maxSteps at most, whichever planner answers), each model tried once per step.
    const three =
      'Get the weather forecast for Paris, then send an email to Ann, then search for flights to Rome'
    const model = (name: string, maxRetriesPerRequest: number) =>
      new OpenAiLanguageModel(name, {
        baseUrl: server.baseUrl,
        retryDelayMs: 1,
        maxRetries: 2,
        maxRetriesPerRequest,
      })
    for (const [maxSteps, maxRetriesPerRequest, calls] of [
      // P = 1 (a → rule), Q = 2 (a → b → top1): 1 + 3 x 2 first tries.
      [8, 0, 7],
      [8, 2, 9],
      // The rule planner's plan cut to 2 steps: 1 + 2 x 2.
      [2, 0, 5],
    ]) {
      server.reset()
      failEveryCall()
      const planner = new LlmPlanner({
        model: model('a', maxRetriesPerRequest),
        fallback: new RulePlanner({ maxSteps }),
        maxSteps,
      })
      const selector = new LlmSelector({
        model: model('a', maxRetriesPerRequest),
        fallback: new LlmSelector({
          model: model('b', maxRetriesPerRequest),
          fallback: new Top1Selector(),
        }),
      })
      const result = await selectTools(three, { library, retriever, k: 15, planner, selector })
      expect(result.steps).toHaveLength(Math.min(3, maxSteps))
      expect({ maxSteps, maxRetriesPerRequest, calls: server.requests.length }).toEqual({
        maxSteps,
        maxRetriesPerRequest,
        calls,
      })
    }
  })

  it('leaves a request whose model recovers on a retry as it was', async () => {
    server.reply({ status: 503, body: 'overloaded', headers: { 'retry-after': '0' } })
    server.reply({ body: completion('["Get the weather forecast for Paris"]') })
    server.reply({ body: completion('{"answer": "weather.get_forecast"}') })
    const result = await selectTools(INSTRUCTION, {
      library,
      retriever,
      k: 15,
      ...chains({ maxRetries: 2 }),
    })
    expect(modelsCalled()).toEqual(['a', 'a', 'a'])
    expect(result.components.fallbacks).toEqual([])
    expect(result.tools.map((tool) => tool.id)).toEqual(['weather.get_forecast'])
  })

  it('counts within one budget across concurrent calls, a fresh one per request', async () => {
    const retries = new RequestRetries()
    const both = await Promise.all(
      [0, 1].map(async () => {
        await new Promise((resolve) => setTimeout(resolve, 1))
        return [retries.take(3), retries.take(3)]
      }),
    )
    expect(both.flat().filter(Boolean)).toHaveLength(3)
    expect(retries.used).toBe(3)
    expect(new RequestRetries().take(1)).toBe(true)
    expect(new RequestRetries().take(0)).toBe(false)
  })
})
