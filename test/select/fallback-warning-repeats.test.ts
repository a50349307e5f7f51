/**
 * An endpoint that refuses the API key (401) on every call: each request's selector falls back
 * (visibly, in its selection), but the WARN is logged once a minute per kind, the next one
 * saying how many were left out, over real HTTP (a local chat-completions server). Before, every
 * step of every request wrote the same WARN.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryLogger } from '../../src/log.ts'
import { OpenAiLanguageModel } from '../../src/models/openai/openai-language-model.ts'
import { RepeatedWarning } from '../../src/repeated-warning.ts'
import { LlmSelector } from '../../src/select/llm-selector.ts'
import { Top1Selector } from '../../src/select/top1-selector.ts'
import { startFakeChatServer, type FakeChatServer } from '../models/openai/fake-chat-server.ts'

let server: FakeChatServer
beforeAll(async () => (server = await startFakeChatServer()))
afterAll(() => server.close())

const candidate = { id: 'weather.get_forecast', name: 'get forecast', description: 'x', score: 8 }

describe('the fallback warning of a failure that repeats', () => {
  it('is logged once for ten requests refused with 401, each still falling back visibly', async () => {
    const logger = createMemoryLogger()
    const selector = new LlmSelector({
      model: new OpenAiLanguageModel('qwen3-8b', { baseUrl: server.baseUrl, apiKey: 'sk-wrong' }),
      fallback: new Top1Selector(),
      logger,
    })
    for (let request = 0; request < 10; request++) {
      server.reply({ status: 401, body: { error: { message: 'Incorrect API key provided' } } })
      const [selection] = await selector.select([{ step: 'forecast', candidates: [candidate] }])
      expect(selection.fallback).toMatchObject({ code: 'MODEL_CALL_FAILED', to: 'top1' })
      expect(selection.fallback?.message).toMatch(/HTTP 401.*Check the API key/)
    }
    expect(server.requests).toHaveLength(10)
    const warnings = logger.lines.filter((line) => line.includes('using the fallback selector'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('HTTP 401')
  })

  it('says how many were left out when it is logged again after the interval, per kind', () => {
    const logger = createMemoryLogger()
    let now = 0
    const warnings = new RepeatedWarning(logger, 60_000, () => now)
    for (let call = 0; call < 5; call++) warnings.warn('MODEL_CALL_FAILED 401', 'failed', {})
    warnings.warn('UPSTREAM_UNAVAILABLE 503', 'failed', {})
    expect(logger.lines).toHaveLength(2)
    now = 61_000
    warnings.warn('MODEL_CALL_FAILED 401', 'failed', {})
    expect(logger.lines).toHaveLength(3)
    expect(logger.lines[2]).toContain('4 more like it in the last 61 s, not logged')
  })
})
