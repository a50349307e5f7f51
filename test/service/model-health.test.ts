/**
 * ModelHealth's state machine on its own, with real objects and a clock the test moves: the
 * start-up check's seed (startupFallbacks from a parsed config), a selection that falls back
 * (observe), one that uses a degraded component without a fallback (clear), the bounds, and the
 * cluster merge `serve --workers N` does (workers' reports applied by the primary, its list taken
 * back by every worker through `replace`; the processes themselves: serve-workers-model-degraded).
 */
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import type { Fallback } from '../../src/contracts.ts'
import type { StartupFailure } from '../../src/models/openai/check-api-key.ts'
import type { SelectToolsResult } from '../../src/pipeline.ts'
import { ModelHealth, startupFallbacks, type HealthReport } from '../../src/service/model-health.ts'

/** A clock at 2026-01-01T00:00:00Z that `tick` moves by a second. */
function clock() {
  let seconds = 0
  return {
    now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)),
    tick: () => void seconds++,
    at: (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
  }
}

const PLANNER = 'llm(openai:a)'
const SELECTOR = 'llm(openai:s)'

/** A selection's result: `fallbacks` as it reports them, one step with candidates unless none. */
function result(
  fallbacks: Fallback[],
  { planner = PLANNER, selector = SELECTOR, candidates = true } = {},
): SelectToolsResult {
  const candidate = { id: 't', name: 't', score: 1 }
  return {
    tools: [],
    steps: [{ text: 'step', candidates: candidates ? [candidate] : [], selected: null }],
    timings: { planMs: 0, retrieveMs: 0, rerankMs: 0, selectMs: 0, totalMs: 0 },
    components: {
      library: 'demo',
      planner,
      retriever: 'bm25',
      reranker: 'identity',
      selector,
      fallbacks,
    },
    usage: { inputTokens: 0, outputTokens: 0 },
  }
}

const plannerDown: Fallback = {
  stage: 'planner',
  from: PLANNER,
  to: 'rule',
  code: 'UPSTREAM_UNAVAILABLE',
  message: 'http://127.0.0.1:9/v1/chat/completions is unreachable',
}
const selectorRefused: Fallback = {
  stage: 'selector',
  from: SELECTOR,
  to: 'top1',
  code: 'MODEL_CALL_FAILED',
  status: 401,
  message: 'Check the API key',
  raw: 'the raw answer',
}

describe('ModelHealth', () => {
  it('degrades a component that fell back, counts its failures, and clears it once it works', () => {
    const time = clock()
    const health = new ModelHealth(time.now)
    const reports: HealthReport[] = []
    health.onReport = (report) => reports.push(report)
    health.observe(result([plannerDown], { planner: 'rule' }))
    time.tick()
    health.observe(result([{ ...plannerDown, status: 503, message: 'x'.repeat(1000) }]))
    expect(health.degraded()).toEqual([
      {
        stage: 'planner',
        component: PLANNER,
        fallback: 'rule',
        code: 'UPSTREAM_UNAVAILABLE',
        status: 503,
        message: 'x'.repeat(300),
        since: time.at(0),
        lastFailure: time.at(1),
        failures: 2,
      },
    ])
    // A failure without a status replaces the one with (the latest failure's fields).
    health.observe(result([plannerDown], { planner: 'rule' }))
    expect(health.degraded()[0]).not.toHaveProperty('status')
    expect(reports).toHaveLength(3)
    // Its own use without a fallback clears it, and says so once.
    health.observe(result([]))
    expect(health.degraded()).toEqual([])
    expect(reports.at(-1)).toEqual({
      failed: [],
      worked: [{ stage: 'planner', component: PLANNER }],
    })
    health.observe(result([]))
    expect(reports).toHaveLength(4)
  })

  it('keeps a selector degraded while no step had candidates to ask it about', () => {
    const health = new ModelHealth()
    health.observe(result([selectorRefused]))
    expect(health.degraded()).toMatchObject([{ stage: 'selector', status: 401, failures: 1 }])
    expect(health.degraded()[0]).not.toHaveProperty('raw')
    health.observe(result([], { candidates: false }))
    expect(health.degraded()).toHaveLength(1)
    health.observe(result([]))
    expect(health.degraded()).toEqual([])
  })

  it('keeps one stage degraded when the other, of the same name, works', () => {
    const health = new ModelHealth()
    health.observe(result([{ ...selectorRefused, from: PLANNER }]))
    // The planner llm(openai:a) worked; the selector of that name fell back again.
    health.observe(result([{ ...selectorRefused, from: PLANNER }], { selector: PLANNER }))
    expect(health.degraded()).toMatchObject([
      { stage: 'selector', component: PLANNER, failures: 2 },
    ])
  })

  it('clears the stand-ins whose endpoint failure the recovered model disproves, not a model failure', () => {
    const time = clock()
    const health = new ModelHealth(time.now)
    const B = 'llm(openai:b)'
    const C = 'llm(openai:c)'
    const D = 'llm(onnx:/m/d)'
    // plan.fallback ["openai:b", "openai:c", "onnx:/m/d", "rule"]: an outage (401) of the endpoint;
    // c's model is not served (404); d, a local model, failed too.
    const hop = (from: string, to: string, failure: Partial<Fallback> = {}): Fallback => ({
      ...plannerDown,
      code: 'MODEL_CALL_FAILED',
      status: 401,
      from,
      to,
      ...failure,
    })
    health.observe(
      result(
        [
          hop(PLANNER, B),
          hop(B, C),
          hop(C, D, { status: 404 }),
          hop(D, 'rule', { code: 'MODEL_CALL_FAILED', status: undefined }),
        ],
        { planner: 'rule' },
      ),
    )
    expect(health.degraded().map((entry) => entry.component)).toEqual([PLANNER, B, C, D])
    // The configured model answers: the endpoint takes the key again, so b's 401 is not true any
    // more (before: listed until a failed again and b answered); c's 404 and d's failure are.
    time.tick()
    health.observe(result([]))
    expect(health.degraded()).toMatchObject([
      { component: C, status: 404, lastFailure: time.at(0) },
      { component: D },
    ])
  })

  it('keeps a stand-in that failed in the same report, and one of a recovered non-openai model', () => {
    const health = new ModelHealth()
    const B = 'llm(openai:b)'
    const unreachable = { ...plannerDown, from: B, to: 'rule' }
    health.observe(result([{ ...plannerDown, to: B }, unreachable], { planner: 'rule' }))
    // One report where a worked and b failed again (reports are applied as they come): b stays.
    health.apply({
      failed: [{ ...unreachable, stage: 'planner' }],
      worked: [{ stage: 'planner', component: PLANNER }],
    })
    expect(health.degraded().map((entry) => entry.component)).toEqual([B])
    // An onnx: model that recovers says nothing of the endpoint of b.
    const local = 'llm(onnx:/m/a)'
    const other = new ModelHealth()
    other.observe(
      result([{ ...plannerDown, from: local, to: B }, unreachable], { planner: 'rule' }),
    )
    other.observe(result([], { planner: local }))
    expect(other.degraded().map((entry) => entry.component)).toEqual([B])
  })

  it('tracks at most 64 components, dropping the oldest', () => {
    const health = new ModelHealth()
    for (let index = 0; index < 70; index++)
      health.markFailing({ ...plannerDown, from: `llm(openai:m${index})` })
    const degraded = health.degraded()
    expect(degraded).toHaveLength(64)
    expect(degraded[0].component).toBe('llm(openai:m6)')
    expect(degraded.at(-1)!.component).toBe('llm(openai:m69)')
  })

  it('returns copies: changing what degraded() gave changes nothing', () => {
    const health = new ModelHealth()
    health.markFailing(plannerDown)
    health.degraded()[0].failures = 99
    expect(health.degraded()[0].failures).toBe(1)
  })
})

describe('startupFallbacks seeds ModelHealth from the start-up check', () => {
  const unlisted = (user: string): StartupFailure => ({
    user,
    code: 'MODEL_CALL_FAILED',
    status: 404,
    message: `The start-up check: lists no model "${user}"`,
  })
  /** The fallback a seed of `unlisted(user)` is: from `from`, to `to` when given. */
  const seed = (from: string, user: string, to?: string) => ({
    stage: 'planner',
    from,
    ...(to && { to }),
    code: 'MODEL_CALL_FAILED',
    status: 404,
    message: `The start-up check: lists no model "${user}"`,
  })

  it('seeds the failing planner and selector with their fallbacks, as their calls would report', () => {
    const config = parseConfig({
      plan: { planner: 'llm:openai:a' },
      select: { selector: 'openai:s', fallback: '' },
    })
    const seeded = startupFallbacks([unlisted('llm:openai:a'), unlisted('openai:s')], config)
    // The selector has no fallback: its requests fail instead, nothing to list.
    expect(seeded).toEqual([seed(PLANNER, 'llm:openai:a', 'rule')])
    const health = new ModelHealth()
    for (const fallback of seeded) health.markFailing(fallback)
    expect(health.degraded()).toMatchObject([{ component: PLANNER, fallback: 'rule', failures: 1 }])
    // A use that works clears the seed, as after a fallback.
    health.observe(result([]))
    expect(health.degraded()).toEqual([])
  })

  it('seeds a failing model fallback under its own name, without a fallback, until it answers', () => {
    const config = parseConfig({
      plan: { planner: 'openai:a', fallback: 'openai:b' },
      select: { selector: 'top1', fallback: 'openai:c' },
    })
    const failing = [unlisted('openai:b'), unlisted('openai:c')]
    // openai:c stands in for top1, which never falls back: it is not listed.
    const seeded = startupFallbacks(failing, config)
    expect(seeded).toEqual([seed('llm(openai:b)', 'openai:b')])
    const health = new ModelHealth()
    for (const fallback of seeded) health.markFailing(fallback)
    expect(health.degraded()[0]).not.toHaveProperty('fallback')
    // openai:a failed and openai:b answered for it: b works, a is degraded.
    health.observe(result([{ ...plannerDown, to: 'llm(openai:b)' }], { planner: 'llm(openai:b)' }))
    expect(health.degraded()).toMatchObject([{ component: PLANNER, fallback: 'llm(openai:b)' }])
  })

  it('does not list a model twice when it is its own fallback', () => {
    const config = parseConfig({ plan: { planner: 'openai:a', fallback: 'llm:openai:a' } })
    // Since round 42 without `to`: nothing stands in (before: `to` itself, which it never was).
    const seeded = startupFallbacks([unlisted('openai:a'), unlisted('llm:openai:a')], config)
    expect(seeded).toEqual([expect.objectContaining({ from: PLANNER })])
    expect(seeded[0]).not.toHaveProperty('to')
  })

  it('seeds each failing model of a fallback list with the next entry as its fallback', () => {
    const config = parseConfig({
      plan: { planner: 'openai:a', fallback: ['openai:b', 'openai:c', 'rule'] },
      select: { selector: 'openai:a', fallback: ['openai:c'] },
    })
    const failing = ['openai:a', 'openai:b', 'openai:c'].map(unlisted)
    expect(startupFallbacks(failing, config)).toEqual([
      seed(PLANNER, 'openai:a', 'llm(openai:b)'),
      seed('llm(openai:b)', 'openai:b', 'llm(openai:c)'),
      seed('llm(openai:c)', 'openai:c', 'rule'),
      { ...seed(PLANNER, 'openai:a', 'llm(openai:c)'), stage: 'selector' },
      // The last of its list: nothing stands in for it.
      { ...seed('llm(openai:c)', 'openai:c'), stage: 'selector' },
    ])
  })
})

describe('ModelHealth across workers (serve --workers N)', () => {
  it('merges every worker’s reports in the primary and gives every worker the same list', () => {
    const time = clock()
    const primary = new ModelHealth(time.now)
    const workers = [new ModelHealth(time.now), new ModelHealth(time.now)]
    // What cluster-model-health.ts wires through process messages, here in one process.
    for (const worker of workers) worker.onReport = (report) => primary.apply(report)
    const sync = () => {
      for (const worker of workers) worker.replace(primary.degraded())
    }
    primary.markFailing({ ...selectorRefused, code: 'UPSTREAM_UNAVAILABLE' })
    sync()
    time.tick()
    // Steps without candidates: the selector was not asked.
    workers[0].observe(result([plannerDown], { candidates: false }))
    time.tick()
    workers[1].observe(result([plannerDown], { candidates: false }))
    sync()
    for (const health of [primary, ...workers])
      expect(health.degraded()).toMatchObject([
        { stage: 'selector', component: SELECTOR, failures: 1, since: time.at(0) },
        {
          stage: 'planner',
          component: PLANNER,
          failures: 2,
          since: time.at(1),
          lastFailure: time.at(2),
        },
      ])
    // Worker 1 sees the selector work (it has the primary's list, so it knows it was degraded).
    workers[1].observe(result([plannerDown]))
    sync()
    expect(workers[0].degraded()).toMatchObject([{ stage: 'planner', failures: 3 }])
    // An empty report changes nothing; replace keeps at most 64 entries, the newest.
    primary.apply({ failed: [], worked: [] })
    expect(primary.degraded()).toHaveLength(1)
    const many = Array.from({ length: 70 }, (_, index) => ({
      ...primary.degraded()[0],
      component: `llm(openai:m${index})`,
    }))
    workers[0].replace(many)
    expect(workers[0].degraded().map((entry) => entry.component)).toEqual(
      many.slice(-64).map((entry) => entry.component),
    )
  })
})
