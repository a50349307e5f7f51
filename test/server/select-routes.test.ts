import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import type { Planner, Retriever } from '../../src/contracts.ts'
import { ToolselError } from '../../src/errors.ts'
import { LazyAbort } from '../../src/lazy-abort.ts'
import { createTestApp, postJson, readJson } from './test-service.ts'
import { signalsMade } from '../helpers/signals-made.ts'
import { earlyTimers } from '../helpers/early-timers.ts'

describe('POST /v1/select-tools', () => {
  it('returns the selected tools with schemas, per-step candidates, timings and components', async () => {
    const { app } = await createTestApp()
    const response = await app.request(
      '/v1/select-tools',
      postJson({
        instruction: 'Get the weather forecast for Paris, and email the forecast to Ann',
        tau: 0,
        selector: 'top1',
      }),
    )
    expect(response.status).toBe(200)
    const body = await readJson(response)
    expect(body.tools.map((tool: { id: string }) => tool.id)).toEqual([
      'weather.get_forecast',
      'mail.send_email',
    ])
    expect(body.tools[0].parameters).toMatchObject({ type: 'object', required: ['city'] })
    expect(body.steps).toHaveLength(2)
    for (const step of body.steps) {
      expect(step.candidates[0]).toEqual({
        id: step.selected,
        name: expect.any(String),
        score: expect.any(Number),
      })
    }
    expect(body.components).toMatchObject({
      library: 'sample',
      planner: 'rule',
      retriever: 'bm25',
      reranker: 'identity',
      selector: 'top1',
    })
    expect(Object.keys(body.timings).sort()).toEqual([
      'planMs',
      'rerankMs',
      'retrieveMs',
      'selectMs',
      'totalMs',
    ])
  })

  it('selects with the learned selector by default and explains its candidates on request', async () => {
    const { app } = await createTestApp()
    const instruction = 'Get the weather forecast for Paris, and email the forecast to Ann'
    const response = await app.request('/v1/select-tools', postJson({ instruction, explain: true }))
    expect(response.status).toBe(200)
    const body = await readJson(response)
    expect(body.components.selector).toBe('learned')
    // The two clauses, then the whole instruction the learned selector asks for.
    expect(body.steps.map((step: { whole?: boolean }) => step.whole ?? false)).toEqual([
      false,
      false,
      true,
    ])
    expect(body.steps[2].text).toBe(instruction)
    const selected = body.steps.flatMap((step: { selected: string | null }) => step.selected ?? [])
    expect(body.tools.map((tool: { id: string }) => tool.id)).toEqual(selected)
    expect(selected).toContain('weather.get_forecast')
    for (const step of body.steps) {
      for (const candidate of step.candidates) {
        expect(candidate.features.probability).toBeGreaterThanOrEqual(0)
        expect(candidate.features.probability).toBeLessThanOrEqual(1)
        expect(candidate.features).toHaveProperty('whole_rel')
      }
    }
    const plain = await readJson(await app.request('/v1/select-tools', postJson({ instruction })))
    expect(plain.steps[0].candidates[0]).not.toHaveProperty('features')
  })

  it('leaves schemas out when includeSchemas is false, and honours planner and k', async () => {
    const { app } = await createTestApp()
    const response = await app.request(
      '/v1/select-tools',
      postJson({
        instruction: 'send an email and book a hotel',
        includeSchemas: false,
        planner: 'none',
        k: 2,
        tau: 0,
      }),
    )
    const body = await readJson(response)
    expect(body.steps).toHaveLength(1)
    expect(body.steps[0].candidates.length).toBeLessThanOrEqual(2)
    expect(body.tools[0]).not.toHaveProperty('parameters')
    expect(body.components.planner).toBe('none')
  })

  it.each([
    ['malformed JSON', '{"instruction": ', 'INVALID_INPUT'],
    ['a missing instruction', { k: 3 }, 'INVALID_INPUT'],
    ['a wrong type', { instruction: 'x', k: '5' }, 'INVALID_INPUT'],
    ['k above the limit', { instruction: 'x', k: 1000 }, 'INVALID_INPUT'],
    ['an empty instruction', { instruction: '   ' }, 'INVALID_INPUT'],
    ['an unknown field', { instruction: 'x', topK: 3 }, 'INVALID_INPUT'],
    ['an unknown planner', { instruction: 'x', planner: 'magic' }, 'INVALID_INPUT'],
  ])('answers 400 for %s', async (_case, body, code) => {
    const { app } = await createTestApp()
    const response = await app.request('/v1/select-tools', postJson(body))
    expect(response.status).toBe(400)
    const error = (await readJson(response)).error
    expect(error.code).toBe(code)
    expect(error.message.length).toBeGreaterThan(10)
  })

  it('names the bad field in the message', async () => {
    const { app } = await createTestApp()
    const response = await app.request('/v1/select-tools', postJson({ instruction: 'x', k: '5' }))
    expect((await readJson(response)).error.message).toMatch(/^Invalid request body: "k": /)
  })

  it('names the closest field for a mistyped one', async () => {
    const { app } = await createTestApp()
    const message = async (path: string, init: RequestInit) =>
      (await readJson(await app.request(path, init))).error.message
    expect(
      await message('/v1/select-tools', postJson({ instruction: 'text Bob', libary: 'demo' })),
    ).toBe('Invalid request body: Unrecognized key: "libary" (did you mean "library"?).')
    // After the missing field it stands for, as zod lists them.
    expect(await message('/v1/select-tools', postJson({ instructions: 'text Bob' }))).toMatch(
      /; Unrecognized key: "instructions" \(did you mean "instruction"\?\)\.$/,
    )
    expect(await message('/v1/search-tools', postJson({ query: 'sms', limit: 3 }))).toBe(
      'Invalid request body: Unrecognized key: "limit".',
    )
    expect(
      await message('/v1/libraries/mine?fromat=openai', {
        method: 'PUT',
        body: '[{"name": "a", "description": "b"}]',
      }),
    ).toBe('Invalid query parameters: Unrecognized key: "fromat" (did you mean "format"?).')
  })

  it('answers 400 when the body is not sent as JSON', async () => {
    const { app } = await createTestApp()
    const response = await app.request('/v1/select-tools', {
      method: 'POST',
      body: 'instruction=x',
    })
    expect(response.status).toBe(400)
    expect((await readJson(response)).error.message).toContain('content-type: application/json')
  })

  it('answers 400 for a compressed body instead of parsing it as garbage', async () => {
    const { app } = await createTestApp()
    const body = gzipSync(JSON.stringify({ instruction: 'send an email to Ann' }))
    for (const [path, method, type] of [
      ['/v1/select-tools', 'POST', 'application/json'],
      ['/v1/libraries/zipped', 'PUT', 'application/json'],
    ] as const) {
      const response = await app.request(path, {
        method,
        body,
        headers: { 'content-type': type, 'content-encoding': 'gzip' },
      })
      expect(response.status).toBe(400)
      const { error } = await readJson(response)
      expect(error.code).toBe('INVALID_INPUT')
      expect(error.message).toContain('Content-Encoding "gzip" is not supported')
    }
    const identity = await app.request('/v1/select-tools', {
      method: 'POST',
      body: JSON.stringify({ instruction: 'send an email to Ann' }),
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    })
    expect(identity.status).toBe(200)
  })

  it('answers 400 for a UTF-16 body instead of parsing it as garbage; UTF-8 and Latin-1 labels pass', async () => {
    const { app } = await createTestApp()
    const text = JSON.stringify({ instruction: 'send an email to Ann' })
    const utf16 = await app.request('/v1/select-tools', {
      method: 'POST',
      body: Buffer.from(text, 'utf16le'),
      headers: { 'content-type': 'application/json; charset=UTF-16LE' },
    })
    expect(utf16.status).toBe(400)
    expect((await readJson(utf16)).error.message).toContain('charset "UTF-16LE" is not supported')
    for (const charset of ['utf-8', 'UTF8', '"utf-8"', 'iso-8859-1']) {
      const response = await app.request('/v1/select-tools', {
        method: 'POST',
        body: text,
        headers: { 'content-type': `application/json; charset=${charset}` },
      })
      expect(response.status, charset).toBe(200)
    }
  })

  it('bounds error messages that quote long request values', async () => {
    const { app } = await createTestApp()
    const ids = Array.from({ length: 200 }, (_, index) => `missing-${index}-${'x'.repeat(100)}`)
    const response = await app.request('/v1/libraries/sample/tools/batch', postJson({ ids }))
    expect(response.status).toBe(404)
    const { message } = (await readJson(response)).error
    // 20 ids quoted, each cut at 64 characters (shownName), and a count of the rest.
    expect(message.length).toBeLessThan(2000)
    expect(message).toContain(`"missing-0-${'x'.repeat(54)}"…, `)
    expect(message).toContain(' and 180 more.')
  })

  it('answers 413 for a body over the limit', async () => {
    const { app } = await createTestApp({ config: { server: { bodyLimitBytes: 1000 } } })
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'x'.repeat(5000) }),
    )
    expect(response.status).toBe(413)
    expect((await readJson(response)).error.code).toBe('PAYLOAD_TOO_LARGE')
  })

  it('answers 400 for an instruction over the length limit', async () => {
    const { app } = await createTestApp({ config: { server: { maxInstructionChars: 20 } } })
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'find flights to Paris tomorrow' }),
    )
    expect(response.status).toBe(400)
  })

  it('answers 404 for an unknown library', async () => {
    const { app } = await createTestApp()
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'x', library: 'nope' }),
    )
    expect(response.status).toBe(404)
    expect((await readJson(response)).error).toEqual({
      code: 'UNKNOWN_LIBRARY',
      message: 'No library named "nope" is loaded (available: sample).',
    })
  })

  it('names at most 20 libraries in the unknown-library message', async () => {
    const { app } = await createTestApp()
    for (let index = 0; index < 24; index += 1) {
      const put = await app.request(`/v1/libraries/lib-${String(index).padStart(2, '0')}`, {
        method: 'PUT',
        body: JSON.stringify([{ name: 'send_sms', description: 'Send an SMS' }]),
        headers: { 'content-type': 'application/json' },
      })
      expect(put.status).toBe(201)
    }
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'x', library: 'nope' }),
    )
    const { message } = (await readJson(response)).error
    expect(message).toContain('lib-19 and 5 more: GET /v1/libraries')
    expect(message).not.toContain('lib-20')
  })

  it('answers 504 and aborts the work when the request takes too long, no earlier than its limit', async () => {
    let abortedAt: number | undefined
    let hang = false
    const slowPlanner: Planner = {
      name: 'slow',
      plan: (instruction, options) =>
        // The warm-up below is answered; the request timed waits until aborted.
        !hang
          ? Promise.resolve({ steps: [instruction], planner: 'slow' })
          : new Promise((_resolve, reject) => {
              options?.signal?.addEventListener('abort', () => {
                abortedAt = performance.now()
                reject(options.signal?.reason)
              })
            }),
    }
    const { app } = await createTestApp({
      config: { server: { requestTimeoutMs: 50 } },
      components: { planner: () => slowPlanner },
    })
    // A first request does the app's lazy work (~100 ms of CPU under load): a timer armed then
    // fires late whatever its time, so a deadline that trusted one timer passed this test (round
    // 44, checked). This request warms the app (its answer does not matter: under load it may pass
    // the limit too); the timed one's deadline timer then fires on time.
    await app.request('/v1/select-tools', postJson({ instruction: 'send an email' }))
    hang = true
    // Every timer ends at half its time (a Node timer may end up to ~1 ms early): the deadline,
    // armed after `sent`, still fires 50 ms or more after it.
    const undo = earlyTimers(0.5)
    const sent = performance.now()
    let response: Response
    try {
      response = await app.request('/v1/select-tools', postJson({ instruction: 'send an email' }))
    } finally {
      undo()
    }
    expect(response.status).toBe(504)
    const { error } = await readJson(response)
    expect(error.code).toBe('TIMEOUT')
    expect(error.message).toContain('longer than its 50 ms limit')
    expect(abortedAt).toBeDefined()
    expect(abortedAt! - sent).toBeGreaterThanOrEqual(50)
  })

  it('gives a component that reads its signal after the deadline an aborted one', async () => {
    let seen: { aborted: boolean; code: unknown } | undefined
    const latePlanner: Planner = {
      name: 'late',
      plan: async (_instruction, options) => {
        await new Promise((resolve) => setTimeout(resolve, 120))
        const signal = options?.signal
        seen = { aborted: signal?.aborted === true, code: (signal?.reason as ToolselError)?.code }
        return { steps: ['x'], planner: 'late' }
      },
    }
    const { app } = await createTestApp({
      config: { server: { requestTimeoutMs: 50 } },
      components: { planner: () => latePlanner },
    })
    const response = await app.request('/v1/select-tools', postJson({ instruction: 'send mail' }))
    expect(response.status).toBe(504)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(seen).toEqual({ aborted: true, code: 'TIMEOUT' })
  })

  it('makes no AbortSignal for a selection by the in-process default components', async () => {
    const made = await signalsMade(async () => {
      const { app } = await createTestApp()
      const response = await app.request(
        '/v1/select-tools',
        postJson({ instruction: 'get the weather forecast and text it to Sam' }),
      )
      expect(response.status).toBe(200)
      expect((await readJson(response)).tools.length).toBeGreaterThan(0)
    })
    expect(made).toBe(0)
  })

  it('answers 503 before the libraries are loaded', async () => {
    const { app } = await createTestApp({ start: false })
    const response = await app.request('/v1/select-tools', postJson({ instruction: 'x' }))
    expect(response.status).toBe(503)
    expect((await readJson(response)).error.code).toBe('NOT_READY')
    expect((await app.request('/readyz')).status).toBe(503)
    expect((await app.request('/healthz')).status).toBe(200)
  })
})

describe('POST /v1/search-tools', () => {
  it('returns ids, names, one-line descriptions and scores, never schemas', async () => {
    const { app } = await createTestApp()
    const response = await app.request('/v1/search-tools', postJson({ query: 'weather', k: 3 }))
    const body = await readJson(response)
    expect(body.library).toBe('sample')
    expect(body.results.length).toBeGreaterThan(0)
    expect(body.results.length).toBeLessThanOrEqual(3)
    for (const result of body.results)
      expect(Object.keys(result).sort()).toEqual(['description', 'id', 'name', 'score'])
  })

  it('takes retriever "auto", the default GET /v1/components names: the library\'s own', async () => {
    // Was 400 'no retriever kind "auto"' though /v1/components answers {default: "auto"}.
    const { app } = await createTestApp()
    const components = await readJson(await app.request('/v1/components'))
    expect(components.retrievers.default).toBe('auto')
    const search = await app.request(
      '/v1/search-tools',
      postJson({ query: 'weather', k: 3, retriever: 'auto' }),
    )
    expect(search.status).toBe(200)
    const plain = await readJson(
      await app.request('/v1/search-tools', postJson({ query: 'weather', k: 3 })),
    )
    expect(await readJson(search)).toEqual(plain)
    const select = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'weather in Paris', retriever: 'auto' }),
    )
    expect(select.status).toBe(200)
    expect((await readJson(select)).components.retriever).toBe('bm25')
  })

  it('makes no AbortSignal for a BM25 search', async () => {
    const made = await signalsMade(async () => {
      const { app } = await createTestApp()
      const response = await app.request('/v1/search-tools', postJson({ query: 'weather' }))
      expect(response.status).toBe(200)
      expect((await readJson(response)).results.length).toBeGreaterThan(0)
    })
    expect(made).toBe(0)
  })

  it('refuses an aborted search before the retriever runs, and gives a waiting retriever the signal', async () => {
    const { service } = await createTestApp()
    const aborted = new LazyAbort()
    aborted.abort(new ToolselError('TIMEOUT', 'late'))
    await expect(service.search({ query: 'weather' }, aborted)).rejects.toMatchObject({
      code: 'TIMEOUT',
    })

    const seen: Array<AbortSignal | undefined> = []
    const waiting: Retriever = {
      name: 'bm25',
      retrieve: async (_query, options) => {
        seen.push(options.signal)
        await new Promise((resolve) => setTimeout(resolve, 5))
        return []
      },
    }
    const target = { ...service.library('sample'), retrievers: new Map([['bm25', waiting]]) }
    const abort = new LazyAbort()
    const searched = service.search({ query: 'weather' }, abort, target)
    abort.abort(new ToolselError('TIMEOUT', 'late'))
    expect((await searched).results).toEqual([])
    expect(seen).toHaveLength(1)
    expect(seen[0]?.aborted).toBe(true)
    expect((seen[0]?.reason as ToolselError).code).toBe('TIMEOUT')
  })
})
