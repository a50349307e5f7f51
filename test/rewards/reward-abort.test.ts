/**
 * The reward routes pass the request's LazyAbort, not an AbortSignal: a batch scored by BM25
 * makes none, and the deadline and a client's close still stop a batch that is running (the time
 * slicer reads `aborted` between completions and steps). Over real HTTP, since a client's close
 * reaches the server only as the socket's `close` event.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Retriever } from '../../src/contracts.ts'
import { ToolselError } from '../../src/errors.ts'
import { LazyAbort } from '../../src/lazy-abort.ts'
import { Bm25Retriever } from '../../src/retrieve/bm25/bm25-retriever.ts'
import { scorePlans } from '../../src/rewards/score-plans.ts'
import { scoreSelectionsSliced } from '../../src/rewards/score-selections.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp, postJson, readJson } from '../server/test-service.ts'
import { listenApp } from '../helpers/listen-app.ts'
import { signalsMade } from '../helpers/signals-made.ts'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** `turns` turns of the event loop (the time slicer yields with setImmediate). */
async function loopTurns(turns: number): Promise<void> {
  for (let turn = 0; turn < turns; turn += 1) await new Promise((resolve) => setImmediate(resolve))
}

function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end);
}

/** 1,000 plans of 8 steps, every step distinct: 8,000 retrievals if nothing stops the batch. */
const STEPS = 8_000
const completions = Array.from({ length: STEPS / 8 }, (_, plan) =>
  JSON.stringify(
    Array.from({ length: 8 }, (_, step) => `send the weather report ${plan * 8 + step}`),
  ),
)

async function listen(requestTimeoutMs?: number): Promise<string> {
  const { app, service } = await createTestApp(
    requestTimeoutMs ? { config: { server: { requestTimeoutMs } } } : {},
  )
  expect(service.resolveRetrieval({}).retriever.synchronous).toBe(true)
  const listening = await listenApp(app.fetch)
  cleanups.push(() => listening.close())
  return listening.url
}

/**
 * Counts the real BM25 retrievals and notes the first abort of a request: its reason and the
 * retrievals made by then. The fifth retrieval calls `onFifthCall`; the later ones cost `costMs`
 * more, as on a large library, so that the batch is still running when the abort comes.
 */
function watchBatch(options: { costMs: number; onFifthCall: () => void }) {
  const seen = { retrievals: 0, abortedAt: -1, reason: undefined as unknown }
  const retrieve = Bm25Retriever.prototype.retrieve
  vi.spyOn(Bm25Retriever.prototype, 'retrieve').mockImplementation(function (
    this: Bm25Retriever,
    ...args
  ) {
    seen.retrievals += 1
    if (seen.retrievals === 5) options.onFifthCall()
    else if (seen.retrievals > 5) spin(options.costMs)
    return retrieve.apply(this, args)
  })
  const abort = LazyAbort.prototype.abort
  vi.spyOn(LazyAbort.prototype, 'abort').mockImplementation(function (this: LazyAbort, reason) {
    if (seen.abortedAt < 0) {
      seen.abortedAt = seen.retrievals
      seen.reason = reason
    }
    abort.call(this, reason)
  })
  return seen
}

describe('reward batches and the request abort', () => {
  it('make no AbortSignal when scored by BM25', async () => {
    const made = await signalsMade(async () => {
      const { app } = await createTestApp()
      const planner = await app.request(
        '/v1/rewards/planner',
        postJson({
          instruction: 'What is the weather in Paris, then email the forecast to Ann',
          gold: ['weather.get_forecast'],
          completions: ['["get the weather forecast for Paris", "send an email to Ann"]'],
        }),
      )
      expect(planner.status).toBe(200)
      expect((await readJson(planner)).rewards[0].claims[0]).toEqual({
        id: 'weather.get_forecast',
        rank: 1,
      })
      const selector = await app.request(
        '/v1/rewards/selector',
        postJson({ gold: 'mail.send_email', completions: ['mail.send_email', 'sms.send'] }),
      )
      expect(selector.status).toBe(200)
      expect((await readJson(selector)).rewards.map((r: { reward: number }) => r.reward)).toEqual([
        1, 0,
      ])
    })
    expect(made).toBe(0)
  })

  it('the deadline stops a running planner batch: no retrieval after it fires', async () => {
    const requestTimeoutMs = 50
    const url = await listen(requestTimeoutMs)
    // The fifth retrieval outlasts the deadline, so it fires while the batch runs.
    const seen = watchBatch({ costMs: 0.05, onFifthCall: () => spin(requestTimeoutMs + 20) })
    const response = await fetch(
      `${url}/v1/rewards/planner`,
      postJson({ instruction: 'x', gold: ['weather.get_forecast'], completions }),
    )
    expect(response.status).toBe(504)
    expect((await readJson(response)).error.code).toBe('TIMEOUT')
    await loopTurns(20)
    expect((seen.reason as ToolselError).code).toBe('TIMEOUT')
    expect(seen.abortedAt).toBeGreaterThanOrEqual(5)
    expect(seen.retrievals).toBe(seen.abortedAt)
    expect(seen.retrievals).toBeLessThan(STEPS)
  })

  it("a client's close stops a running planner batch: no retrieval after it", async () => {
    const url = await listen()
    const client = new AbortController()
    const seen = watchBatch({ costMs: 0.2, onFifthCall: () => client.abort() })
    await expect(
      fetch(`${url}/v1/rewards/planner`, {
        ...postJson({ instruction: 'x', gold: ['weather.get_forecast'], completions }),
        signal: client.signal,
      }),
    ).rejects.toThrow()
    // The server sees the close on a later turn of the event loop, between two slices.
    await vi.waitFor(() => expect(seen.abortedAt).toBeGreaterThan(0), { timeout: 20_000 })
    await loopTurns(20)
    expect((seen.reason as ToolselError).code).toBe('ABORTED')
    expect(seen.retrievals).toBe(seen.abortedAt)
    expect(seen.retrievals).toBeLessThan(STEPS)
  })

  it('a retriever that waits gets the AbortSignal, aborted when the abort comes', async () => {
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    const abort = new LazyAbort()
    const signals: Array<AbortSignal | undefined> = []
    const waiting: Retriever = {
      name: 'waiting',
      retrieve: async (_query, options) => {
        signals.push(options.signal)
        // The deadline fires while the first retrieval waits.
        setImmediate(() => abort.abort(new ToolselError('TIMEOUT', 'late')))
        await new Promise((resolve) => setTimeout(resolve, 5))
        return []
      },
    }
    const scored = scorePlans('x', [SAMPLE_TOOLS[0].id], ['["one step"]', '["another step"]'], {
      library,
      retriever: waiting,
      k: 5,
      maxSteps: 8,
      abort,
    })
    await expect(scored).rejects.toMatchObject({ code: 'TIMEOUT' })
    expect(signals).toHaveLength(1)
    expect(signals[0]?.aborted).toBe(true)
    expect((signals[0]?.reason as ToolselError).code).toBe('TIMEOUT')
  })

  it('a selector batch stops at an abort that came before its next completion', async () => {
    const abort = new LazyAbort()
    abort.abort(new ToolselError('ABORTED', 'The client closed the request.'))
    await expect(
      scoreSelectionsSliced('mail.send_email', ['mail.send_email'], { abort }),
    ).rejects.toMatchObject({ code: 'ABORTED' })
  })
})
