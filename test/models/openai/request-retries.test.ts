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

/** A base URL whose port refuses connections (a server started and closed). */
async function closedBaseUrl(): Promise<string> {
  const { createServer } = await import('node:net')
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return `http://127.0.0.1:${port}/v1`
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
    // Planner a (a retry, a retry), b, c; then rule's one step: the selector's a, b and c failed
    // in this request already, so top1 stands in at once. Before round 43: 18; round 43-44: 8.
    expect(modelsCalled()).toEqual(['a', 'a', 'a', 'b', 'c'])
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
    expect(server.requests).toHaveLength(5)

    // 0: first tries only; a larger budget than the list needs: each call's maxRetries.
    for (const [maxRetriesPerRequest, calls] of [
      [0, 3],
      [1, 4],
      [100, 9],
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
    // The planner's model is not the selector's: one that failed in the planner is not called
    // again (the next test).
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
      // P = 1 (p → rule), Q = 2 (a → b → top1): 1 + 3 x 2 first tries.
      [8, 0, 7],
      [8, 2, 9],
      // The rule planner's plan cut to 2 steps: 1 + 2 x 2.
      [2, 0, 5],
    ]) {
      server.reset()
      failEveryCall()
      const planner = new LlmPlanner({
        model: model('p', maxRetriesPerRequest),
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
      // At most the bound; fewer when a step's call comes after another step's call of the same
      // model failed (the steps run concurrently, so how many do is a matter of timing).
      expect(server.requests.length).toBeLessThanOrEqual(calls)
      expect(server.requests.length).toBeGreaterThanOrEqual(3)
    }
  })

  it('skips a model that failed unavailable for the rest of the request, its fallback standing in at once', async () => {
    // Refused connections: a port nothing listens on (the fake server's, closed).
    const closed = await closedBaseUrl()
    const model = (name: string, baseUrl = closed) =>
      new OpenAiLanguageModel(name, { baseUrl, retryDelayMs: 1, maxRetries: 1 })
    const planner = new LlmPlanner({ model: model('a'), fallback: new RulePlanner() })
    const selector = new LlmSelector({
      model: model('a'),
      fallback: new LlmSelector({
        model: model('b', server.baseUrl),
        fallback: new Top1Selector(),
      }),
    })
    server.reply({ body: completion('{"answer": "weather.get_forecast"}') })
    const result = await selectTools(INSTRUCTION, { library, retriever, k: 15, planner, selector })
    // The selector's a was not called (before: called, refused, retried); b answered.
    expect(modelsCalled()).toEqual(['b'])
    expect(result.tools.map((tool) => tool.id)).toEqual(['weather.get_forecast'])
    const [planned, selected] = result.components.fallbacks
    expect(result.components.fallbacks).toHaveLength(2)
    expect(planned).toMatchObject({ stage: 'planner', code: 'UPSTREAM_UNAVAILABLE' })
    expect(planned.message).toMatch(/is unreachable/)
    expect(selected).toMatchObject({
      stage: 'selector',
      from: 'llm(openai:a)',
      to: 'llm(openai:b)',
      code: 'UPSTREAM_UNAVAILABLE',
    })
    expect(selected.message).toMatch(
      /^llm\(openai:a\) not called: its model failed earlier in this request \(.*is unreachable/,
    )

    // Steps judged one after another (as the ONNX backend queues them): a 503 after its retries in
    // the first step, the second goes to top1 without a call. The list's order is kept.
    server.reset()
    server.reply(
      ...Array.from({ length: 10 }, () => ({
        status: 503,
        body: 'overloaded',
        headers: { 'retry-after': '0' },
      })),
    )
    const sequential = new LlmSelector({
      model: model('c', server.baseUrl),
      fallback: new Top1Selector(),
    })
    const retries = new RequestRetries()
    const candidates = SAMPLE_TOOLS.slice(0, 3).map(({ id, name, description }) => ({
      id,
      name,
      description,
      score: 1,
    }))
    const selections = []
    for (const step of ['Get the weather forecast for Paris', 'send an email to Ann']) {
      selections.push(...(await sequential.select([{ step, candidates }], { retries })))
    }
    // c, its retry; then nothing.
    expect(modelsCalled()).toEqual(['c', 'c'])
    expect(selections.map((selection) => selection.fallback?.to)).toEqual(['top1', 'top1'])
    expect(selections[1].fallback).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', status: 503 })
    expect(selections[1].fallback?.message).toMatch(/not called: its model failed earlier/)
    expect(selections[1].fallback).not.toHaveProperty('raw')
  })

  it('still calls a model that failed otherwise, or that no fallback would stand in for', async () => {
    // A plan it could not parse (PLAN_UNPARSABLE) says nothing of the selector's call.
    server.reply({ body: completion('no plan here') })
    server.reply({ body: completion('{"answer": "weather.get_forecast"}') })
    const one = (name: string) =>
      new OpenAiLanguageModel(name, { baseUrl: server.baseUrl, maxRetries: 0 })
    const parsed = await selectTools(INSTRUCTION, {
      library,
      retriever,
      k: 15,
      planner: new LlmPlanner({ model: one('a'), fallback: new RulePlanner() }),
      selector: new LlmSelector({ model: one('a'), fallback: new Top1Selector() }),
    })
    expect(modelsCalled()).toEqual(['a', 'a'])
    expect(parsed.components.fallbacks.map(({ code }) => code)).toEqual(['PLAN_UNPARSABLE'])

    // A selector model without a fallback is called all the same: the request's only chance.
    server.reset()
    server.reply({ status: 503, body: 'overloaded' })
    server.reply({ body: completion('{"answer": "weather.get_forecast"}') })
    const result = await selectTools(INSTRUCTION, {
      library,
      retriever,
      k: 15,
      planner: new LlmPlanner({ model: one('a'), fallback: new RulePlanner() }),
      selector: new LlmSelector({ model: one('a') }),
    })
    expect(modelsCalled()).toEqual(['a', 'a'])
    expect(result.components.fallbacks.map(({ stage }) => stage)).toEqual(['planner'])
    expect(result.tools.map((tool) => tool.id)).toEqual(['weather.get_forecast'])
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
