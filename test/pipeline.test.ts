import { describe, expect, it } from 'vitest'
import { ToolLibrary } from '../src/library/tool-library.ts'
import { CANDIDATE_POSITION, selectTools } from '../src/pipeline.ts'
import type { Planner, Reranker, Selection, Selector } from '../src/contracts.ts'
import { NonePlanner } from '../src/plan/none-planner.ts'
import { RulePlanner } from '../src/plan/rule-planner.ts'
import { Bm25Retriever } from '../src/retrieve/bm25/bm25-retriever.ts'
import { Top1Selector } from '../src/select/top1-selector.ts'
import { SAMPLE_TOOLS } from './helpers/sample-tools.ts'

const library = new ToolLibrary('sample', SAMPLE_TOOLS)
const retriever = Bm25Retriever.build(SAMPLE_TOOLS, {
  k1: 1.2,
  b: 0.75,
  fieldWeights: { name: 3, description: 1, parameters: 1, namespace: 1 },
})
const base = { library, retriever, selector: new Top1Selector(), k: 15, minScore: 0 }

/** A selector that always answers the same things, to check what the pipeline does with them. */
class ScriptedSelector implements Selector {
  readonly name = 'scripted'
  constructor(readonly answers: Selection[]) {}
  async select(): Promise<Selection[]> {
    return this.answers
  }
}

describe('selectTools', () => {
  it('plans, retrieves per step, selects per step and returns the union', async () => {
    const result = await selectTools(
      'Get the weather forecast for Paris, and send an email to Ann',
      {
        ...base,
        planner: new RulePlanner(),
      },
    )
    expect(result.steps.map((step) => step.text)).toEqual([
      'Get the weather forecast for Paris',
      'send an email to Ann',
    ])
    expect(result.steps.map((step) => step.selected)).toEqual([
      'weather.get_forecast',
      'mail.send_email',
    ])
    expect(result.tools.map((tool) => tool.id)).toEqual(['weather.get_forecast', 'mail.send_email'])
    for (const step of result.steps) {
      expect(step.candidates.length).toBeGreaterThan(0)
      // Its library position too, under a symbol no answer's JSON shows.
      expect(step.candidates[0]).toEqual({
        id: step.selected,
        name: expect.any(String),
        score: expect.any(Number),
        [CANDIDATE_POSITION]: expect.any(Number),
      })
    }
    expect(result.components).toEqual({
      library: 'sample',
      planner: 'rule',
      retriever: 'bm25',
      reranker: 'identity',
      selector: 'top1',
      fallbacks: [],
    })
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0 })
    const { planMs, retrieveMs, selectMs, totalMs } = result.timings
    expect(Math.min(planMs, retrieveMs, selectMs)).toBeGreaterThanOrEqual(0)
    expect(totalMs).toBeGreaterThanOrEqual(retrieveMs)
  })

  it('de-duplicates tools selected by several steps', async () => {
    const planner: Planner = {
      name: 'twice',
      plan: async () => ({ steps: ['send an email', 'email someone'], planner: 'twice' }),
    }
    const result = await selectTools('x', { ...base, planner })
    expect(result.steps.map((step) => step.selected)).toEqual([
      'mail.send_email',
      'mail.send_email',
    ])
    expect(result.tools.map((tool) => tool.id)).toEqual(['mail.send_email'])
  })

  it('selects nothing for a step without candidates above the threshold', async () => {
    const result = await selectTools('zzz qqq', {
      ...base,
      planner: new NonePlanner(),
      minScore: 3,
    })
    expect(result.steps).toEqual([{ text: 'zzz qqq', candidates: [], selected: null }])
    expect(result.tools).toEqual([])
  })

  it('refuses a selection outside the step candidates', async () => {
    const selector = new ScriptedSelector([{ toolId: 'travel.book_hotel' }])
    await expect(
      selectTools('send an email', { ...base, planner: new NonePlanner(), selector }),
    ).rejects.toMatchObject({
      code: 'SELECTION_OUTSIDE_CANDIDATES',
      message: expect.stringContaining('"travel.book_hotel"'),
    })
  })

  it('passes the reranked candidates, in the reranker order, to the selector', async () => {
    const reverse: Reranker = {
      name: 'reverse',
      rerank: async (requests) => requests.map((request) => [...request.candidates].reverse()),
    }
    const plain = await selectTools('send an email', { ...base, planner: new NonePlanner() })
    const reranked = await selectTools('send an email', {
      ...base,
      planner: new NonePlanner(),
      reranker: reverse,
    })
    const ids = plain.steps[0].candidates.map((candidate) => candidate.id)
    expect(ids.length).toBeGreaterThan(1)
    expect(reranked.steps[0].candidates.map((candidate) => candidate.id)).toEqual(ids.reverse())
    expect(reranked.steps[0].selected).toBe(ids[0])
    expect(reranked.components.reranker).toBe('reverse')
    expect(reranked.timings.rerankMs).toBeGreaterThanOrEqual(0)
  })

  it('refuses a reranked candidate the retriever did not return', async () => {
    const inventing: Reranker = {
      name: 'inventing',
      rerank: async (requests) =>
        requests.map(() => [{ id: 'travel.book_hotel', name: 'x', description: 'x', score: 1 }]),
    }
    await expect(
      selectTools('send an email', { ...base, planner: new NonePlanner(), reranker: inventing }),
    ).rejects.toMatchObject({
      code: 'RERANK_OUTSIDE_CANDIDATES',
      message: expect.stringContaining('Reranker "inventing" returned "travel.book_hotel"'),
    })
  })

  it('reports fallbacks and adds up usage from the components', async () => {
    const planner: Planner = {
      name: 'llm(test)',
      plan: async () => ({
        steps: ['send an email'],
        planner: 'rule',
        usage: { inputTokens: 10, outputTokens: 5 },
        fallback: {
          stage: 'planner',
          from: 'llm(test)',
          to: 'rule',
          code: 'PLAN_UNPARSABLE',
          message: 'garbage',
          raw: '???',
        },
      }),
    }
    const selector = new ScriptedSelector([
      { toolId: 'mail.send_email', usage: { inputTokens: 7, outputTokens: 1 } },
    ])
    const result = await selectTools('x', { ...base, planner, selector })
    expect(result.components.planner).toBe('rule')
    expect(result.components.fallbacks).toHaveLength(1)
    expect(result.usage).toEqual({ inputTokens: 17, outputTokens: 6 })
  })

  it('stops with ABORTED when the signal has fired', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(
      selectTools('send an email', {
        ...base,
        planner: new NonePlanner(),
        signal: controller.signal,
      }),
    ).rejects.toMatchObject({ code: 'ABORTED' })
  })
})
