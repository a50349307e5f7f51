/**
 * `/readyz` `degraded` under a real `toolsel serve --workers 2`: every worker answers with the same
 * list, kept by the primary (cluster-model-health.ts), whichever worker saw the failure or the use
 * that worked, and the start-up check's findings are in it from the start. Before, each worker
 * listed what its own selections saw (the start-up check's findings in none), so a probe told
 * what the worker it reached had seen. Over real HTTP: a local OpenAI-compatible endpoint whose
 * key can be revoked, requests on fresh connections (the cluster hands them to the workers in
 * turn).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { callFresh } from '../helpers/fresh-request.ts'
import { useKeyEndpoint } from '../helpers/openai-key-endpoint.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

const KEY = 'sk-right-key-0123456789'

const endpoint = useKeyEndpoint(KEY)

let running: RunningServe | undefined
afterAll(async () => {
  await running?.stop()
})

type Entry = Record<string, unknown>

/** `degraded` as four probes on fresh connections (both workers, twice each) see it. */
async function probes(): Promise<Array<Entry[] | undefined>> {
  const answers: Array<Entry[] | undefined> = []
  for (let probe = 0; probe < 4; probe += 1) {
    const { status, text } = await callFresh(running!.url, 'GET', '/readyz')
    expect(status, text).toBe(200)
    answers.push((JSON.parse(text) as { degraded?: Entry[] }).degraded)
  }
  return answers
}

/**
 * The probes once all four agree and `check` holds for them: the worker that did not serve the
 * request has the primary's list within REPLACE_DELAY_MS; 20 s only guard against a hang.
 */
async function agreed(
  check: (degraded: Entry[] | undefined) => boolean,
): Promise<Entry[] | undefined> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const seen = await probes()
    const same = seen.every((each) => JSON.stringify(each) === JSON.stringify(seen[0]))
    if ((same && check(seen[0])) || Date.now() > deadline) {
      expect(seen.slice(1)).toEqual(seen.slice(0, 3))
      return seen[0]
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function select(): Promise<Array<Record<string, unknown>>> {
  const { status, text } = await callFresh(
    running!.url,
    'POST',
    '/v1/select-tools',
    JSON.stringify({ instruction: 'send an email to Ann' }),
  )
  expect(status, text).toBe(200)
  return (JSON.parse(text) as { components: { fallbacks: Array<Record<string, unknown>> } })
    .components.fallbacks
}

describe('toolsel serve --workers 2: /readyz degraded', () => {
  it('is the same from every worker: the start-up check’s findings, then every worker’s uses', async () => {
    // The endpoint lists only "fake" but answers any model's chat.
    running = await startServe(
      ['--workers', '2', '--planner', 'llm:openai:alias', '--selector', 'top1'],
      {
        savedDemo: true,
        env: {
          TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`,
          TOOLSEL_OPENAI_API_KEY: KEY,
          TOOLSEL_OPENAI_MAX_RETRIES: '0',
        },
      },
    )
    const atStart = await agreed((degraded) => degraded !== undefined)
    expect(atStart).toHaveLength(1)
    expect(atStart![0]).toMatchObject({
      stage: 'planner',
      component: 'llm(openai:alias)',
      code: 'MODEL_CALL_FAILED',
      status: 404,
      failures: 1,
    })

    // One worker uses it and it works: no worker lists it any more.
    expect(await select()).toEqual([])
    expect(await agreed((degraded) => degraded === undefined)).toBeUndefined()

    // One worker's selection falls back (the key revoked): every worker lists it.
    endpoint.revoked = true
    expect((await select()).map((fallback) => fallback.status)).toEqual([401])
    const revoked = await agreed((degraded) => degraded !== undefined)
    expect(revoked).toHaveLength(1)
    expect(revoked![0]).toMatchObject({
      stage: 'planner',
      component: 'llm(openai:alias)',
      fallback: 'rule',
      code: 'MODEL_CALL_FAILED',
      status: 401,
      failures: 1,
    })
    // A second fallback, in the other worker: one entry, counted twice.
    await select()
    const twice = await agreed((degraded) => degraded?.[0]?.failures === 2)
    expect(twice![0]).toMatchObject({ status: 401, failures: 2, since: revoked![0].since })
    const { text } = await callFresh(running.url, 'GET', '/metrics')
    expect(text.split('\n').filter((line) => line.startsWith('toolsel_model_degraded{'))).toEqual([
      'toolsel_model_degraded{stage="planner",component="llm(openai:alias)"} 1',
    ])

    endpoint.revoked = false
    expect(await select()).toEqual([])
    expect(await agreed((degraded) => degraded === undefined)).toBeUndefined()
  }, 180_000)
})
