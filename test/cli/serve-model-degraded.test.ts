/**
 * A key revoked while `toolsel serve` runs (its start-up check passed): every planner and selector
 * call is refused (401) and falls back. `/readyz` stays ready (the fallbacks answer) but lists the
 * failing components under `degraded` with the status, and `/metrics` counts the fallbacks and
 * marks them degraded, until a call works again. Over real HTTP: a real serve process and a local
 * OpenAI-compatible endpoint whose key can be revoked. Before, /readyz and /metrics showed nothing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { useKeyEndpoint } from '../helpers/openai-key-endpoint.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

const KEY = 'sk-right-key-0123456789'

const endpoint = useKeyEndpoint(KEY)

let running: RunningServe | undefined
afterAll(async () => {
  await running?.stop()
})

async function stopRunning(): Promise<void> {
  await running?.stop()
  running = undefined
}

interface Fallback {
  stage: string
  from: string
  to: string
  code: string
  status?: number
}

async function select(): Promise<Fallback[]> {
  const response = await fetch(`${running!.url}/v1/select-tools`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instruction: 'send an email to Ann' }),
  })
  expect(response.status).toBe(200)
  const body = (await response.json()) as { components: { fallbacks: Fallback[] } }
  return body.components.fallbacks
}

interface ObjectSchema {
  properties?: Record<string, ObjectSchema>
  items?: ObjectSchema
  required?: string[]
}

/** The /openapi.json schema of a select-tools answer's `components.fallbacks` item. */
async function fallbackSchema(): Promise<ObjectSchema> {
  const document = (await (await fetch(`${running!.url}/openapi.json`)).json()) as {
    paths: Record<
      string,
      { post: { responses: Record<string, { content: Record<string, { schema: ObjectSchema }> }> } }
    >
  }
  const answer =
    document.paths['/v1/select-tools'].post.responses['200'].content['application/json']
  return answer.schema.properties?.components.properties?.fallbacks.items ?? {}
}

async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${running!.url}/readyz`)
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

async function metrics(): Promise<string[]> {
  const text = await (await fetch(`${running!.url}/metrics`)).text()
  return text.split('\n').filter((line) => /^toolsel_model_(fallbacks_total|degraded)\{/.test(line))
}

describe('toolsel serve when the model endpoint refuses the key after the start', () => {
  it('stays ready, and /readyz and /metrics name the refused planner and selector until it works', async () => {
    running = await startServe(['--planner', 'llm:openai:fake', '--selector', 'llm:openai:fake'], {
      savedDemo: true,
      env: { TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`, TOOLSEL_OPENAI_API_KEY: KEY },
    })
    expect(await select()).toEqual([])
    expect((await readyz()).body).not.toHaveProperty('degraded')
    expect(await metrics()).toEqual([])

    endpoint.revoked = true
    const fallbacks = await select()
    await select()
    expect(fallbacks.map(({ stage, to, code, status }) => ({ stage, to, code, status }))).toEqual([
      { stage: 'planner', to: 'rule', code: 'MODEL_CALL_FAILED', status: 401 },
      { stage: 'selector', to: 'top1', code: 'MODEL_CALL_FAILED', status: 401 },
    ])
    // /openapi.json describes every field of a real fallback, `status` included (before: any object).
    const schema = await fallbackSchema()
    for (const fallback of fallbacks) {
      expect(Object.keys(schema.properties ?? {})).toEqual(
        expect.arrayContaining(Object.keys(fallback)),
      )
      expect(Object.keys(fallback)).toEqual(expect.arrayContaining(schema.required ?? []))
    }
    const planner = fallbacks[0].from
    const selector = fallbacks[1].from

    const { status, body } = await readyz()
    expect(status).toBe(200)
    expect(body.status).toBe('ready')
    const degraded = body.degraded as Array<Record<string, unknown>>
    expect(degraded).toHaveLength(2)
    expect(degraded[0]).toMatchObject({
      stage: 'planner',
      component: planner,
      fallback: 'rule',
      code: 'MODEL_CALL_FAILED',
      status: 401,
      failures: 2,
    })
    expect(degraded[0].message).toMatch(/HTTP 401.*Incorrect API key provided/)
    expect(degraded[1]).toMatchObject({ stage: 'selector', component: selector, status: 401 })
    expect(Date.parse(String(degraded[0].since))).not.toBeNaN()
    expect(await metrics()).toEqual([
      `toolsel_model_fallbacks_total{stage="planner",component="${planner}",code="MODEL_CALL_FAILED",status="401"} 2`,
      `toolsel_model_fallbacks_total{stage="selector",component="${selector}",code="MODEL_CALL_FAILED",status="401"} 2`,
      `toolsel_model_degraded{stage="planner",component="${planner}"} 1`,
      `toolsel_model_degraded{stage="selector",component="${selector}"} 1`,
    ])

    endpoint.revoked = false
    expect(await select()).toEqual([])
    expect((await readyz()).body).not.toHaveProperty('degraded')
    expect((await metrics()).filter((line) => line.startsWith('toolsel_model_degraded'))).toEqual(
      [],
    )
  })
})

describe('toolsel serve with fallback lists when the key is revoked (round 42)', () => {
  it('reports each model down the list, in /readyz and /metrics, and the embedded end answers', async () => {
    await stopRunning()
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-fallback-list-'))
    const config = join(dir, 'toolsel.json')
    await writeFile(
      config,
      JSON.stringify({
        plan: { fallback: ['openai:other', 'rule'] },
        select: { fallback: ['openai:other', 'top1'] },
        models: { openai: { maxRetries: 0 } },
      }),
    )
    try {
      // `/nomodels`: no list, so the start-up check finds nothing failing ("other" is unlisted).
      running = await startServe(
        ['--planner', 'llm:openai:fake', '--selector', 'llm:openai:fake', '--config', config],
        {
          savedDemo: true,
          env: {
            TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/nomodels/v1`,
            TOOLSEL_OPENAI_API_KEY: KEY,
          },
        },
      )
      expect(await select()).toEqual([])
      endpoint.revoked = true
      const fallbacks = await select()
      const hops = fallbacks.map(
        ({ stage, from, to, status }) => `${stage} ${from}→${to} ${status}`,
      )
      // Before round 42 the list was INVALID_CONFIG (exit 2); a single `openai:other` failed the
      // request (500) here.
      expect(hops.slice(0, 2)).toEqual([
        'planner llm(openai:fake)→llm(openai:other) 401',
        'planner llm(openai:other)→rule 401',
      ])
      expect(new Set(hops.slice(2))).toEqual(
        new Set([
          'selector llm(openai:fake)→llm(openai:other) 401',
          'selector llm(openai:other)→top1 401',
        ]),
      )
      const degraded = (await readyz()).body.degraded as Array<Record<string, unknown>>
      expect(
        degraded.map(({ stage, component, fallback }) => `${stage} ${component}→${fallback}`),
      ).toEqual([
        'planner llm(openai:fake)→llm(openai:other)',
        'planner llm(openai:other)→rule',
        'selector llm(openai:fake)→llm(openai:other)',
        'selector llm(openai:other)→top1',
      ])
      const lines = await metrics()
      for (const [stage, component] of [
        ['planner', 'llm(openai:fake)'],
        ['planner', 'llm(openai:other)'],
        ['selector', 'llm(openai:fake)'],
        ['selector', 'llm(openai:other)'],
      ])
        expect(lines).toContain(
          `toolsel_model_degraded{stage="${stage}",component="${component}"} 1`,
        )
      endpoint.revoked = false
      expect(await select()).toEqual([])
      // The configured models work again, so the endpoint takes the key again: the fallback
      // model, asked no more, is not listed either. Before round 43 it stayed listed (its 401)
      // until the configured one failed again and it answered.
      expect((await readyz()).body).not.toHaveProperty('degraded')
      expect((await metrics()).filter((line) => line.startsWith('toolsel_model_degraded'))).toEqual(
        [],
      )
    } finally {
      endpoint.revoked = false
      await stopRunning()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
