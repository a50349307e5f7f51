import { describe, expect, it } from 'vitest'
import { importToolsFromPath } from '../../src/library/importers/index.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { loadDefaultModel } from '../../src/learn/learned-model.ts'
import { selectTools } from '../../src/pipeline.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { NonePlanner } from '../../src/plan/none-planner.ts'
import { Bm25Retriever } from '../../src/retrieve/bm25/bm25-retriever.ts'
import { LearnedSelector } from '../../src/select/learned-selector.ts'
import { DEMO_LIBRARY_DIR } from '../../src/store/library-lifecycle.ts'

const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
const library = new ToolLibrary('demo', tools)
const retriever = Bm25Retriever.build(tools, {
  k1: 1.2,
  b: 0.75,
  fieldWeights: { name: 3, description: 1, parameters: 1, namespace: 1 },
}).withQueryOptions({ defaultMinScore: 3 })
const selector = new LearnedSelector(loadDefaultModel())
const base = { library, retriever, selector, k: 15 }

describe('LearnedSelector in the pipeline', () => {
  it('adds the whole instruction as a last step when the plan splits it, retrieving without tau', async () => {
    const instruction = 'What is the weather in Paris tomorrow, and email the forecast to Ann'
    const result = await selectTools(instruction, { ...base, planner: new RulePlanner() })
    expect(result.components.selector).toBe('learned')
    expect(result.steps.map((step) => step.whole ?? false)).toEqual([false, false, true])
    expect(result.steps.at(-1)?.text).toBe(instruction)
    // Each clause's best match, the second one only through the rule's per-clause floor.
    expect(result.tools.map((tool) => tool.id).sort()).toEqual([
      'mail.send_email',
      'weather.get_weather_forecast',
    ])
    // The learned selector sets the retrieval threshold to 0: weak candidates reach it too.
    expect(result.steps.flatMap((step) => step.candidates).some((c) => c.score <= 3)).toBe(true)
    // At most one tool per step, always one of the step's candidates.
    for (const step of result.steps) {
      if (step.selected !== null) {
        expect(step.candidates.map((candidate) => candidate.id)).toContain(step.selected)
      }
    }
  })

  it('takes two tools of one namespace for a one-clause request that asks for both', async () => {
    // One clause (no verb or determiner after "and"), two weather tools: the learned count
    // extends the set and the second tool goes to the whole-instruction step.
    const instruction = 'Please get the current weather and weather forecast for Paris'
    const result = await selectTools(instruction, { ...base, planner: new RulePlanner() })
    expect(result.steps.map((step) => step.whole ?? false)).toEqual([false, true])
    expect(result.tools.map((tool) => tool.id).sort()).toEqual([
      'weather.get_current_weather',
      'weather.get_weather_forecast',
    ])
    // With a determiner the second object gets a step of its own, and each step its tool.
    const split = await selectTools(
      'Please get the current weather and the weather forecast for Paris',
      { ...base, planner: new RulePlanner() },
    )
    expect(split.steps.map((step) => step.text)).toEqual([
      'get the current weather',
      'get the weather forecast for Paris',
      'Please get the current weather and the weather forecast for Paris',
    ])
    expect(split.tools.map((tool) => tool.id).sort()).toEqual([
      'weather.get_current_weather',
      'weather.get_weather_forecast',
    ])
  })

  it('adds no step when the plan is the instruction itself', async () => {
    const result = await selectTools('Will I need an umbrella in Seattle on Saturday?', {
      ...base,
      planner: new NonePlanner(),
    })
    expect(result.steps).toHaveLength(1)
    expect(result.steps[0].whole).toBeUndefined()
  })

  it('explains every candidate with its probability and features only when asked', async () => {
    const instruction = 'Check what is playing and add it to my Road trip playlist'
    const plain = await selectTools(instruction, { ...base, planner: new RulePlanner() })
    expect(plain.steps[0].candidates[0].features).toBeUndefined()
    const explained = await selectTools(instruction, {
      ...base,
      planner: new RulePlanner(),
      explain: true,
    })
    for (const step of explained.steps) {
      for (const candidate of step.candidates) {
        expect(Object.keys(candidate.features ?? {})).toEqual([
          'probability',
          ...loadDefaultModel().features,
        ])
      }
      if (step.selected !== null && explained.tools.length > 1) {
        // Below the threshold a tool is only taken alone (the floor rule) or as a clause's
        // pick (the per-clause floor).
        const chosen = step.candidates.find((candidate) => candidate.id === step.selected)!
        const { threshold, stepFloor } = loadDefaultModel().rule
        expect(chosen.features!.probability).toBeGreaterThanOrEqual(
          Math.min(threshold, stepFloor ?? threshold),
        )
      }
    }
    expect(explained.tools.map((tool) => tool.id)).toEqual(plain.tools.map((tool) => tool.id))
  })

  it('honours an explicit threshold from the request', async () => {
    const result = await selectTools('play some jazz in the kitchen', {
      ...base,
      planner: new RulePlanner(),
      minScore: 5,
    })
    for (const step of result.steps)
      for (const c of step.candidates) expect(c.score).toBeGreaterThan(5)
  })
})
