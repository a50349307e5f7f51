/**
 * A planner's and a selector's fallback report the same `raw` for the same failed call: what the
 * model's endpoint answered (its key hidden), over real HTTP (a local chat-completions server).
 * Before round 43 the planner's fallback had `raw` only when the model's text could not be parsed,
 * not when the call failed (an HTTP 401 or 500, a body that is no completion); the selector's had
 * it in both cases.
 */
import { describe, expect, it } from 'vitest'
import type { Fallback } from '../../src/contracts.ts'
import { OpenAiLanguageModel } from '../../src/models/openai/openai-language-model.ts'
import { LlmPlanner } from '../../src/plan/llm-planner.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { LlmSelector } from '../../src/select/llm-selector.ts'
import { Top1Selector } from '../../src/select/top1-selector.ts'
import {
  completion,
  type ScriptedReply,
  useFakeChatServer,
} from '../models/openai/fake-chat-server.ts'

const KEY = 'sk-secret-0123456789abcdef'

const server = useFakeChatServer()

function model(): OpenAiLanguageModel {
  return new OpenAiLanguageModel('qwen3-8b', {
    baseUrl: server.baseUrl,
    apiKey: KEY,
    maxRetries: 0,
  })
}

/** The planner's and the selector's fallback when every call is answered by `reply`. */
async function fallbacks(reply: (request: { headers: Record<string, unknown> }) => ScriptedReply) {
  server.reply(reply, reply)
  const plan = await new LlmPlanner({ model: model(), fallback: new RulePlanner() }).plan(
    'send an email to Ann',
  )
  const [selection] = await new LlmSelector({
    model: model(),
    fallback: new Top1Selector(),
  }).select([
    {
      step: 'send an email',
      candidates: [{ id: 'email.send', name: 'send', description: 'Sends an email.', score: 9 }],
    },
  ])
  return [plan.fallback, selection.fallback] as [Fallback, Fallback]
}

describe('the raw answer of a planner and a selector that fell back', () => {
  it.each([
    ['an HTTP 401', 401],
    ['an HTTP 500', 500],
  ])('is in both for %s, with the key hidden', async (_, status) => {
    const [planner, selector] = await fallbacks((request) => ({
      status,
      body: `{"error":{"message":"no, ${String(request.headers.authorization)}"}}`,
    }))
    expect(planner).toMatchObject({ stage: 'planner', to: 'rule', status })
    expect(selector).toMatchObject({ stage: 'selector', to: 'top1', status })
    expect(planner.raw).toBe('{"error":{"message":"no, Bearer ***"}}')
    expect(selector.raw).toBe(planner.raw)
    expect(JSON.stringify([planner, selector])).not.toContain('sk-secret')
  })

  it('is in both for an answer that is no chat completion', async () => {
    const [planner, selector] = await fallbacks(() => ({ body: '{"choices":"nope"}' }))
    expect(planner).toMatchObject({ code: 'MODEL_CALL_FAILED', raw: '{"choices":"nope"}' })
    expect(selector).toMatchObject({ code: 'MODEL_CALL_FAILED', raw: '{"choices":"nope"}' })
  })

  it("is the model's text for a plan that could not be read", async () => {
    server.reply({ body: completion(`not a plan, ${'x'.repeat(10)}`) })
    const plan = await new LlmPlanner({ model: model(), fallback: new RulePlanner() }).plan(
      'send an email to Ann',
    )
    expect(plan.fallback).toMatchObject({ code: 'PLAN_UNPARSABLE', raw: 'not a plan, xxxxxxxxxx' })
  })
})
