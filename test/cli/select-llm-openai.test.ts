/**
 * `toolsel select` with an OpenAI-compatible planner and selector that fail, over real HTTP (a
 * local chat-completions server): an answer that is not JSON falls back to the rule planner and
 * the top1 selector, and the person reading the output is told so; an endpoint that does not
 * answer fails the command with TIMEOUT naming the setting to raise.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  completion,
  type RecordedRequest,
  useFakeChatServer,
} from '../models/openai/fake-chat-server.ts'
import { runCli } from './run-cli.ts'

const TOOLS = [
  { name: 'get_weather', description: 'Get the current weather forecast for a city' },
  { name: 'send_sms', description: 'Send an SMS text message to a phone number' },
]

const server = useFakeChatServer()
let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-select-openai-'))
  await writeFile(join(dir, 'tools.json'), JSON.stringify(TOOLS))
})

async function select(
  openai: Record<string, unknown>,
  more: Record<string, unknown> = {},
  selector = 'llm:openai:fake',
): ReturnType<typeof runCli> {
  const config = join(dir, `config-${Math.random().toString(36).slice(2)}.json`)
  const settings = { baseUrl: server.baseUrl, maxRetries: 0, ...openai }
  await writeFile(config, JSON.stringify({ models: { openai: settings }, ...more }))
  return runCli([
    'select',
    'check the weather in Oslo and text it to Dan',
    '--library',
    join(dir, 'tools.json'),
    '--index-dir',
    join(dir, 'indexes'),
    '--planner',
    'llm:openai:fake',
    '--selector',
    selector,
    '--config',
    config,
    '--log-level',
    'silent',
  ])
}

describe('toolsel select over an OpenAI-compatible endpoint that fails', () => {
  it('says which components fell back when the answers are not JSON', async () => {
    for (let reply = 0; reply < 10; reply++) server.reply({ body: '{"choices": [' })
    const run = await select({})
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('Components: rule → bm25 → llm(openai:fake)')
    // Before: no such line; the Components line named the LLM selector although top1 chose.
    expect(run.stdout).toMatch(
      /\nFallbacks: planner llm\(openai:fake\) → rule \(MODEL_CALL_FAILED\); selector llm\(openai:fake\) → top1 on \d+ steps? \(MODEL_CALL_FAILED\)/,
    )
    expect(server.requests.length).toBeGreaterThan(1)
  })

  it('prints no Fallbacks line when the model answers', async () => {
    // The planner gets the instruction as one step; the selector the first id of its enum.
    const answer = (request: RecordedRequest) => {
      const format = request.body.response_format as
        { json_schema: { schema: { properties: { answer: { enum: string[] } } } } } | undefined
      const content = format
        ? JSON.stringify({ answer: format.json_schema.schema.properties.answer.enum[0] })
        : JSON.stringify(['check the weather in Oslo and text it to Dan'])
      return { body: completion(content) }
    }
    for (let reply = 0; reply < 10; reply++) server.reply(answer)
    const run = await select({})
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('Components: llm(openai:fake) → bm25 → llm(openai:fake)')
    expect(run.stdout).not.toContain('Fallbacks:')
  })

  it('fails once a fallback that is a model of the endpoint fails too (one call each)', async () => {
    // Before: llm(openai:other), built as the fallback, had itself as its fallback and called
    // the endpoint again and again (here 20 refused calls, then the default answer, which the
    // selector rejects forever; nothing but a deadline ended it).
    const refused = { status: 400, body: { error: { message: 'bad request' } } }
    for (let reply = 0; reply < 20; reply++) server.reply(refused)
    const planner = await select({}, { plan: { fallback: 'openai:other' } }, 'top1')
    expect(planner.code).toBe(1)
    expect(planner.stderr).toMatch(/^error \[MODEL_CALL_FAILED\]: .*bad request/)
    expect(server.requests.map((request) => request.body.model)).toEqual(['fake', 'other'])
    server.reset()
    for (let reply = 0; reply < 20; reply++) server.reply(refused)
    const selector = await select(
      {},
      { plan: { planner: 'rule' }, select: { fallback: 'openai:other' } },
    )
    expect(selector.code).toBe(1)
    expect(selector.stderr).toMatch(/^error \[MODEL_CALL_FAILED\]: .*bad request/)
    // The rule planner's two steps each ask llm(openai:fake); the first refused fallback call ends it.
    const models = server.requests.map((request) => request.body.model)
    expect(models.length).toBeLessThanOrEqual(4)
    expect(models.filter((model) => model === 'other').length).toBeGreaterThanOrEqual(1)
    expect(models.filter((model) => model === 'other').length).toBeLessThanOrEqual(2)
  })

  it('goes down a fallback list, model by model, to the embedded one at its end (one call each)', async () => {
    // Before round 42 a fallback was one id: ["openai:other", "rule"] was refused as a config
    // (expected string, received array), and `openai:other` alone failed the request when it
    // failed too (the test above).
    const refused = { status: 400, body: { error: { message: 'bad request' } } }
    for (let reply = 0; reply < 20; reply++) server.reply(refused)
    const planner = await select({}, { plan: { fallback: ['openai:other', 'rule'] } }, 'top1')
    expect(planner.stderr).toBe('')
    expect(planner.code).toBe(0)
    expect(planner.stdout).toContain('Components: rule → bm25 → top1')
    expect(planner.stdout).toContain(
      'Fallbacks: planner llm(openai:fake) → llm(openai:other) (MODEL_CALL_FAILED); planner llm(openai:other) → rule (MODEL_CALL_FAILED)',
    )
    expect(server.requests.map((request) => request.body.model)).toEqual(['fake', 'other'])

    server.reset()
    for (let reply = 0; reply < 20; reply++) server.reply(refused)
    const selector = await select(
      {},
      { plan: { planner: 'rule' }, select: { fallback: ['openai:other', 'top1'] } },
    )
    expect(selector.stderr).toBe('')
    expect(selector.code).toBe(0)
    expect(selector.stdout).toMatch(
      /; selector llm\(openai:fake\) → llm\(openai:other\) on (\d+) steps? \(MODEL_CALL_FAILED\); selector llm\(openai:other\) → top1 on \1 steps? \(MODEL_CALL_FAILED\)/,
    )
    // --planner is the model: one call of fake, then rule. Each step with candidates asks fake,
    // then other, once each; top1 answers without a call.
    const models = server.requests.map((request) => request.body.model)
    const other = models.filter((model) => model === 'other').length
    expect(other).toBeGreaterThanOrEqual(1)
    expect(models.filter((model) => model === 'fake').length).toBe(other + 1)
  })

  it('refuses a fallback list with an entry that can never be tried (exit 2)', async () => {
    const run = await select({}, { plan: { fallback: ['rule', 'openai:other'] } }, 'top1')
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(
      '"rule" calls no model and always answers, so the entries after it ("openai:other") would never be tried; end the list with it.',
    )
    expect(server.requests).toEqual([])
  })

  it('fails with TIMEOUT naming models.openai.timeoutMs when the endpoint does not answer', async () => {
    server.reply({ delayMs: Infinity, body: {} })
    const run = await select({ timeoutMs: 200 })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      `error [TIMEOUT]: ${server.baseUrl}/chat/completions did not answer within 200 ms (models.openai.timeoutMs; a call that times out is not retried). Check the server or raise models.openai.timeoutMs.`,
    )
  })
})
