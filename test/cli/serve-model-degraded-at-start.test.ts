/**
 * `toolsel serve` whose start-up check finds the model endpoint failing (unreachable, or not
 * listing the configured model) starts, with a warning, and `/readyz` `degraded` and
 * `toolsel_model_degraded` name the failing planner and selector from the start, before any
 * request falls back; a use that works clears them, as after a fallback. Over real HTTP: a real
 * serve process, a local OpenAI-compatible endpoint, a port where nothing listens. Before, both
 * were empty until the first request fell back.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { deadPort } from '../helpers/dead-port.ts'
import { useKeyEndpoint } from '../helpers/openai-key-endpoint.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

const KEY = 'sk-right-key-0123456789'

const endpoint = useKeyEndpoint(KEY)

let running: RunningServe | undefined
/** The config files' directories of this test (`serveOnEndpoint`). */
const configDirs: string[] = []
afterEach(async () => {
  await running?.stop()
  running = undefined
  for (const dir of configDirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** `toolsel serve <args>` on the key endpoint, with `config` as its config file when given. */
async function serveOnEndpoint(args: string[], config?: object): Promise<RunningServe> {
  const env: Record<string, string> = {
    TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`,
    TOOLSEL_OPENAI_API_KEY: KEY,
  }
  if (config !== undefined) {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-degraded-config-'))
    configDirs.push(dir)
    env.TOOLSEL_CONFIG = join(dir, 'config.json')
    await writeFile(env.TOOLSEL_CONFIG, JSON.stringify(config))
  }
  return startServe(args, { env, savedDemo: true })
}

async function degraded(): Promise<Array<Record<string, unknown>> | undefined> {
  const response = await fetch(`${running!.url}/readyz`)
  expect(response.status).toBe(200)
  return ((await response.json()) as { degraded?: Array<Record<string, unknown>> }).degraded
}

async function gauges(name = 'toolsel_model_degraded'): Promise<string[]> {
  const text = await (await fetch(`${running!.url}/metrics`)).text()
  return text.split('\n').filter((line) => line.startsWith(`${name}{`))
}

async function select(): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${running!.url}/v1/select-tools`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instruction: 'send an email to Ann' }),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { components: { fallbacks: Array<Record<string, unknown>> } })
    .components.fallbacks
}

describe('toolsel serve when the start-up check finds the model endpoint failing', () => {
  it('lists an unreachable endpoint’s planner and selector under degraded from the start', async () => {
    const port = await deadPort()
    running = await startServe(['--planner', 'llm:openai:fake', '--selector', 'openai:fake'], {
      savedDemo: true,
      env: {
        TOOLSEL_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        TOOLSEL_OPENAI_API_KEY: KEY,
      },
    })
    expect(running.logs()).toMatch(/Could not check the OpenAI-compatible endpoint/)
    const entries = await degraded()
    expect(entries).toHaveLength(2)
    expect(entries![0]).toMatchObject({
      stage: 'planner',
      component: 'llm(openai:fake)',
      fallback: 'rule',
      code: 'UPSTREAM_UNAVAILABLE',
      failures: 1,
    })
    expect(entries![0]).not.toHaveProperty('status')
    expect(String(entries![0].message)).toMatch(
      new RegExp(`start-up check could not reach .*GET http://127\\.0\\.0\\.1:${port}/v1/models`),
    )
    expect(entries![1]).toMatchObject({
      stage: 'selector',
      component: 'llm(openai:fake)',
      fallback: 'top1',
      code: 'UPSTREAM_UNAVAILABLE',
    })
    expect(await gauges()).toEqual([
      'toolsel_model_degraded{stage="planner",component="llm(openai:fake)"} 1',
      'toolsel_model_degraded{stage="selector",component="llm(openai:fake)"} 1',
    ])
    // Its HELP, which a scrape shows, says so too (before: only "whose latest use failed").
    const scrape = await (await fetch(`${running!.url}/metrics`)).text()
    expect(scrape).toMatch(/^# HELP toolsel_model_degraded .*start-up check found failing/m)
    // The same component label as the loaded gauge's (before: the configured ids, `llm:openai:fake`
    // and `openai:fake`).
    expect(await gauges('toolsel_model_loaded')).toEqual(
      expect.arrayContaining([
        'toolsel_model_loaded{kind="planner",component="llm(openai:fake)"} 1',
        'toolsel_model_loaded{kind="selector",component="llm(openai:fake)"} 1',
      ]),
    )
  }, 120_000)

  it('lists a model the endpoint does not list (404), until a use of it works', async () => {
    // The endpoint lists only "fake" but answers any model's chat: the first use works.
    running = await serveOnEndpoint(['--planner', 'llm:openai:alias', '--selector', 'top1'])
    expect(running.logs()).toMatch(/lists no model "alias"/)
    const entries = await degraded()
    expect(entries).toHaveLength(1)
    expect(entries![0]).toMatchObject({
      stage: 'planner',
      component: 'llm(openai:alias)',
      fallback: 'rule',
      code: 'MODEL_CALL_FAILED',
      status: 404,
    })
    expect(String(entries![0].message)).toMatch(/lists no model "alias" \(it serves "fake"\)/)
    expect(await select()).toEqual([])
    expect(await degraded()).toBeUndefined()
    expect(await gauges()).toEqual([])
  }, 120_000)

  it('warns of a model last in one list and in the middle of the other with what holds for each', async () => {
    // Before round 43 the warning said "a request falling back to it would fail" of both lists,
    // true only of select.fallback: as the planner's fallback, rule stands in for it.
    running = await serveOnEndpoint(['--planner', 'openai:gone', '--selector', 'openai:sel'], {
      plan: { fallback: ['openai:other', 'rule'] },
      select: { fallback: ['openai:fake', 'openai:other'] },
    })
    const logs = running.logs()
    expect(logs).toContain(
      `openai:other: GET ${endpoint.baseUrl}/v1/models lists no model "other" (it serves "fake"): its calls would answer 404 (as the planner's fallback they fall back to rule; as the selector's fallback they fail the request).`,
    )
    // The configured ones fall back in their one stage each; the planner to the next entry.
    expect(logs).toContain(
      `openai:gone: GET ${endpoint.baseUrl}/v1/models lists no model "gone" (it serves "fake"): its calls would answer 404 and fall back.`,
    )
    const other = (await degraded())!.filter((entry) => entry.component === 'llm(openai:other)')
    expect(other.map((entry) => [entry.stage, entry.fallback])).toEqual([
      ['planner', 'rule'],
      ['selector', undefined],
    ])
    expect(String(other[0].message)).toMatch(/\(as the planner's fallback they fall back to rule;/)
  }, 120_000)

  it('lists a model fallback the endpoint does not list under its own name, until it answers', async () => {
    // Before: only the configured planner and selector were seeded; the fallbacks, checked too,
    // were not listed. "prose" answers outside the choices, so its fallback answers.
    running = await serveOnEndpoint(
      ['--planner', 'llm:openai:fake', '--selector', 'openai:prose'],
      {
        plan: { fallback: 'openai:other' },
        select: { fallback: 'openai:other2' },
      },
    )
    const notListed = { code: 'MODEL_CALL_FAILED', status: 404, failures: 1 }
    const entries = await degraded()
    expect(entries).toEqual([
      expect.objectContaining({ stage: 'planner', component: 'llm(openai:other)', ...notListed }),
      expect.objectContaining({
        stage: 'selector',
        component: 'llm(openai:prose)',
        fallback: 'llm(openai:other2)',
        ...notListed,
      }),
      expect.objectContaining({
        stage: 'selector',
        component: 'llm(openai:other2)',
        ...notListed,
      }),
    ])
    // Nothing stands in for a fallback.
    expect(entries![0]).not.toHaveProperty('fallback')
    expect(entries![2]).not.toHaveProperty('fallback')
    expect(String(entries![2].message)).toMatch(/lists no model "other2" \(it serves "fake"\)/)
    // A fallback's failing call fails the request (e1f350c); the message said "and fall back".
    expect(String(entries![2].message)).toMatch(
      /its calls would answer 404, and a request falling back to it would fail\./,
    )
    expect(String(entries![1].message)).toMatch(/its calls would answer 404 and fall back\./)
    expect(await gauges()).toEqual([
      'toolsel_model_degraded{stage="planner",component="llm(openai:other)"} 1',
      'toolsel_model_degraded{stage="selector",component="llm(openai:prose)"} 1',
      'toolsel_model_degraded{stage="selector",component="llm(openai:other2)"} 1',
    ])
    // The selector's fallback answers: it is removed; the planner's, never used, stays.
    expect((await select()).map((fallback) => fallback.to)).toContain('llm(openai:other2)')
    expect(await degraded()).toEqual([
      expect.objectContaining({ stage: 'planner', component: 'llm(openai:other)' }),
      expect.objectContaining({ stage: 'selector', component: 'llm(openai:prose)', failures: 2 }),
    ])
  }, 120_000)
})
