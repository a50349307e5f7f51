import { describe, expect, it } from 'vitest'
import { createTestApp, postJson, readJson } from '../server/test-service.ts'

const PLANNER = '/v1/rewards/planner'
const SELECTOR = '/v1/rewards/selector'

describe('POST /v1/rewards/planner', () => {
  it('scores each completion: a perfect plan 1, an extra step lowers precision, no list is penalised', async () => {
    const { app } = await createTestApp()
    const response = await app.request(
      PLANNER,
      postJson({
        instruction: 'What is the weather in Paris, then email the forecast to Ann',
        gold: ['weather.get_forecast', 'mail.send_email'],
        completions: [
          '["get the weather forecast for Paris", "send an email to Ann"]',
          '```json\n["get the weather forecast for Paris", "send an email to Ann", "send an email to Bob"]\n```',
          'Sure! I would check the weather first.',
        ],
      }),
    )
    expect(response.status).toBe(200)
    const body = await readJson(response)
    expect(body).toMatchObject({ library: 'sample', retriever: 'bm25', k: 15 })
    const [perfect, extra, prose] = body.rewards
    expect(perfect).toMatchObject({ reward: 1, precision: 1, recall: 1, f1: 1, format: 'ok' })
    expect(perfect.claims).toEqual([
      { id: 'weather.get_forecast', rank: 1 },
      { id: 'mail.send_email', rank: 1 },
    ])
    expect(extra.steps).toHaveLength(3)
    expect(extra.precision).toBeCloseTo(2 / 3)
    expect(extra.reward).toBeLessThan(1)
    expect(prose).toMatchObject({ reward: -1, format: 'unparsable', steps: [] })
  })

  it('takes the format penalty from the request and an empty list as the instruction itself', async () => {
    const { app } = await createTestApp()
    const body = await readJson(
      await app.request(
        PLANNER,
        postJson({
          instruction: 'send an email to Ann',
          gold: ['mail.send_email'],
          completions: ['[]', 'no plan'],
          formatPenalty: 0.25,
        }),
      ),
    )
    expect(body.rewards[0]).toMatchObject({ steps: ['send an email to Ann'], reward: 1 })
    expect(body.rewards[1].reward).toBe(-0.25)
  })

  it('rejects gold ids the library lacks, naming them, and bodies without completions', async () => {
    const { app } = await createTestApp()
    const unknown = await app.request(
      PLANNER,
      postJson({ instruction: 'x', gold: ['nope.tool'], completions: ['["x"]'] }),
    )
    expect(unknown.status).toBe(404)
    const error = (await readJson(unknown)).error
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain('"nope.tool"')
    const empty = await app.request(
      PLANNER,
      postJson({ instruction: 'x', gold: ['mail.send_email'], completions: [] }),
    )
    expect(empty.status).toBe(400)
    expect((await readJson(empty)).error.message).toContain('completions')
  })
})

describe('POST /v1/rewards/selector', () => {
  it('gives 1 to the gold id (plain, JSON or after thinking) and 0 otherwise', async () => {
    const { app } = await createTestApp()
    const body = await readJson(
      await app.request(
        SELECTOR,
        postJson({
          gold: 'mail.send_email',
          candidates: ['mail.send_email', 'weather.get_forecast'],
          completions: [
            'mail.send_email',
            '{"answer": "mail.send_email"}',
            '<think>the step sends mail</think>\nmail.send_email',
            'weather.get_forecast',
            'mail.send_mail',
            'none',
          ],
        }),
      ),
    )
    expect(body.rewards.map((item: { reward: number }) => item.reward)).toEqual([1, 1, 1, 0, 0, 0])
    expect(body.rewards[4]).toMatchObject({ answer: 'mail.send_mail', valid: false })
    expect(body.rewards[5]).toMatchObject({ answer: 'none', valid: true })
  })

  it('rewards none when the gold tool was not retrieved (gold null)', async () => {
    const { app } = await createTestApp()
    const body = await readJson(
      await app.request(
        SELECTOR,
        postJson({ gold: null, candidates: ['a', 'none'], completions: ['none of these', 'none'] }),
      ),
    )
    expect(body.rewards.map((item: { reward: number }) => item.reward)).toEqual([1, 0])
  })
})

describe('/openapi.json', () => {
  it('documents both reward routes with their request schemas', async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    for (const path of [PLANNER, SELECTOR]) {
      const operation = document.paths[path].post
      expect(operation.requestBody.content['application/json'].schema.required).toContain(
        'completions',
      )
      expect(operation.responses['200']).toBeDefined()
    }
  })
})
