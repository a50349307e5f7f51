/**
 * Shared suites for the stage contracts of `src/contracts.ts` and the language-model contract
 * (hono's router `common.case.test.ts` pattern): every implementation runs the same suite from
 * `stage-contracts.test.ts`. The Retriever suite is `test/retrieve/retriever.contract.ts` and
 * the EmbeddingModel suite `test/models/embedding-model.contract.ts`.
 * @module
 */
import { describe, expect, it } from 'vitest'
import type {
  CandidateTool,
  Planner,
  Reranker,
  SelectionRequest,
  Selector,
} from '../../src/contracts.ts'
import { isToolselError } from '../../src/errors.ts'
import type { ChatMessage, LanguageModel } from '../../src/models/language-model.ts'

interface Suite<T> {
  /** Suite title, e.g. `RulePlanner`. */
  name: string
  create: () => Promise<T>
  /** When set, the suite is skipped and this reason is shown. */
  skip?: string
}

const title = (kind: string, suite: Suite<unknown>) =>
  `${kind} contract: ${suite.name}${suite.skip ? ` (skipped: ${suite.skip})` : ''}`

function candidate(id: string, description: string, score: number): CandidateTool {
  return { id, name: id.split('.').at(-1)!, description, score }
}

/** Two steps with candidates (best-scored first) and one without. */
export const CONTRACT_REQUESTS: readonly SelectionRequest[] = [
  {
    step: 'get the weather forecast for Paris',
    candidates: [
      candidate('weather.get_forecast', 'Get the weather forecast for a city', 9.1),
      candidate('weather.get_air_quality', 'Get the air quality index at a location', 4.2),
      candidate('maps.get_directions', 'Get driving directions between two places', 1.5),
    ],
  },
  {
    step: 'email the forecast to Ann',
    candidates: [
      candidate('mail.send_email', 'Send an email to an address', 7.3),
      candidate('sms.send_sms', 'Send a text message to a phone number', 3.3),
    ],
  },
  { step: 'zzz qqq', candidates: [] },
]

const requests = () =>
  CONTRACT_REQUESTS.map((request) => ({ ...request, candidates: [...request.candidates] }))

async function expectAborted(run: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
  const controller = new AbortController()
  controller.abort()
  const error = await run(controller.signal).catch((caught: unknown) => caught)
  expect(isToolselError(error, 'ABORTED') || isToolselError(error, 'TIMEOUT'), String(error)).toBe(
    true,
  )
}

export function runPlannerContract(suite: Suite<Planner> & { maxSteps?: number }): void {
  describe.skipIf(suite.skip !== undefined)(title('Planner', suite), () => {
    const instruction = 'Get the weather forecast for Paris, and email the forecast to Ann'

    it('has a non-empty name', async () => {
      expect((await suite.create()).name.length).toBeGreaterThan(0)
    })

    it('answers non-empty step texts, names the planner that produced them, reports sane usage', async () => {
      const result = await (await suite.create()).plan(instruction)
      expect(result.steps.length).toBeGreaterThan(0)
      for (const step of result.steps) expect(step.trim().length).toBeGreaterThan(0)
      expect(result.planner.length).toBeGreaterThan(0)
      if (suite.maxSteps !== undefined)
        expect(result.steps.length).toBeLessThanOrEqual(suite.maxSteps)
      for (const tokens of [result.usage?.inputTokens ?? 0, result.usage?.outputTokens ?? 0]) {
        expect(Number.isInteger(tokens) && tokens >= 0).toBe(true)
      }
    })

    it('never answers an empty plan, even for an instruction with one capability', async () => {
      const result = await (await suite.create()).plan('weather')
      expect(result.steps.length).toBeGreaterThan(0)
    })

    it('is deterministic within and across instances', async () => {
      const first = await (await suite.create()).plan(instruction)
      const planner = await suite.create()
      expect((await planner.plan(instruction)).steps).toEqual(first.steps)
      expect((await planner.plan(instruction)).steps).toEqual(first.steps)
    })
  })
}

export function runSelectorContract(suite: Suite<Selector>): void {
  describe.skipIf(suite.skip !== undefined)(title('Selector', suite), () => {
    it('has a non-empty name', async () => {
      expect((await suite.create()).name.length).toBeGreaterThan(0)
    })

    it('answers one selection per request, in order, each one of its candidates or null', async () => {
      const given = requests()
      const selections = await (await suite.create()).select(given)
      expect(selections).toHaveLength(given.length)
      selections.forEach((selection, index) => {
        const ids = given[index].candidates.map((item) => item.id)
        if (selection.toolId !== null) expect(ids).toContain(selection.toolId)
        if (ids.length === 0) expect(selection.toolId).toBeNull()
      })
    })

    it('answers [] for no requests', async () => {
      expect(await (await suite.create()).select([])).toEqual([])
    })

    it('is deterministic within and across instances', async () => {
      const ids = async (selector: Selector) =>
        (await selector.select(requests())).map((selection) => selection.toolId)
      const first = await ids(await suite.create())
      const selector = await suite.create()
      expect(await ids(selector)).toEqual(first)
      expect(await ids(selector)).toEqual(first)
    })
  })
}

export function runRerankerContract(suite: Suite<Reranker>): void {
  describe.skipIf(suite.skip !== undefined)(title('Reranker', suite), () => {
    it('has a non-empty name', async () => {
      expect((await suite.create()).name.length).toBeGreaterThan(0)
    })

    it('answers one list per request, only of its candidates, without repeats', async () => {
      const given = requests()
      const lists = await (await suite.create()).rerank(given)
      expect(lists).toHaveLength(given.length)
      lists.forEach((list, index) => {
        const ids = new Set(given[index].candidates.map((item) => item.id))
        for (const item of list) expect(ids.has(item.id), item.id).toBe(true)
        expect(new Set(list.map((item) => item.id)).size).toBe(list.length)
      })
      expect(lists[2]).toEqual([])
    })

    it('answers [] for no requests and is deterministic', async () => {
      const reranker = await suite.create()
      expect(await reranker.rerank([])).toEqual([])
      const ids = async () =>
        (await reranker.rerank(requests())).map((list) => list.map((item) => item.id))
      expect(await ids()).toEqual(await ids())
    })
  })
}

export function runLanguageModelContract(suite: Suite<LanguageModel>): void {
  describe.skipIf(suite.skip !== undefined)(title('LanguageModel', suite), () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Split the request into steps.' },
      { role: 'user', content: 'Get the weather for Paris tomorrow and email it to Ann.' },
    ]
    const choices = ['weather.get_forecast', 'mail.send_email', 'none']

    it('has a non-empty model id', async () => {
      expect((await suite.create()).modelId.length).toBeGreaterThan(0)
    })

    it('generates text with integer usage and a finish reason, the same text twice', async () => {
      const model = await suite.create()
      const first = await model.generate(messages, { maxTokens: 32 })
      expect(typeof first.text).toBe('string')
      expect(['stop', 'length', 'other']).toContain(first.finishReason)
      for (const tokens of [first.usage.inputTokens, first.usage.outputTokens]) {
        expect(Number.isInteger(tokens) && tokens >= 0).toBe(true)
      }
      expect((await model.generate(messages, { maxTokens: 32 })).text).toBe(first.text)
    })

    it('scores every choice with a log-probability (<= 0 or -Infinity), one finite', async () => {
      const { scores, usage } = await (await suite.create()).scoreChoices(messages, choices)
      expect(scores).toHaveLength(choices.length)
      for (const score of scores) expect(score <= 0 || score === -Infinity).toBe(true)
      expect(scores.some((score) => Number.isFinite(score))).toBe(true)
      expect(usage.inputTokens).toBeGreaterThanOrEqual(0)
    })

    it('rejects with ABORTED (or TIMEOUT) when the signal has fired', async () => {
      const model = await suite.create()
      await expectAborted((signal) => model.generate(messages, { maxTokens: 8, signal }))
      await expectAborted((signal) => model.scoreChoices(messages, choices, { signal }))
    })
  })
}
