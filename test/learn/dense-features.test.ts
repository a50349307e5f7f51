import { beforeAll, describe, expect, it } from 'vitest'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  extractCandidateFeatures,
  FEATURE_NAMES,
  featureNames,
} from '../../src/learn/candidate-features.ts'
import {
  DENSE_FEATURE_NAMES,
  denseFeatureValues,
  denseToolText,
  type DenseToolVectors,
} from '../../src/learn/dense-features.ts'
import { parseLearnedModel, usesDenseFeatures } from '../../src/learn/learned-model.ts'
import { trainLearnedModel } from '../../src/learn/train-model.ts'
import { LearnedSelector } from '../../src/select/learned-selector.ts'
import type { SelectionRequest } from '../../src/contracts.ts'
import { BM25_SETTINGS, featureInputFor } from '../helpers/feature-input.ts'
import { SAMPLE_TOOLS, sampleTool } from '../helpers/sample-tools.ts'
import { DENSE_SAMPLE_CASES, sampleSource } from '../helpers/training-cases.ts'
import { DENSE_LOAD_TIMEOUT_MS, requireDenseVectors } from '../helpers/dense-vectors.ts'

let vectors: DenseToolVectors
beforeAll(async () => {
  vectors = await requireDenseVectors()
}, DENSE_LOAD_TIMEOUT_MS)

const inputFor = (instruction: string) => featureInputFor(instruction, SAMPLE_TOOLS)

const dot = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, value, index) => sum + value * b[index], 0)
const DENSE_NAMES = featureNames(true)
const at = (values: number[], name: (typeof DENSE_FEATURE_NAMES)[number]) =>
  values[DENSE_NAMES.indexOf(name)]

describe('dense candidate features (static GloVe)', () => {
  it('are the cosines of the instruction and its clauses to each candidate, relative and ranked', () => {
    const instruction = 'What is the weather in Paris, and email the forecast to Ann'
    const input = inputFor(instruction)
    const features = extractCandidateFeatures({ ...input, dense: vectors.input(sampleTool) })
    expect(features.length).toBeGreaterThan(2)
    const plain = extractCandidateFeatures(input)
    features.forEach(({ values }, index) => {
      expect(values).toHaveLength(FEATURE_NAMES.length + DENSE_FEATURE_NAMES.length)
      for (const value of values) expect(Number.isFinite(value)).toBe(true)
      // The other features do not change.
      expect(values.slice(0, FEATURE_NAMES.length)).toEqual(plain[index].values)
    })
    const query = vectors.encoder.embedText(instruction)
    const cosines = features.map(({ id }) =>
      dot(query, vectors.encoder.embedText(denseToolText(sampleTool(id)))),
    )
    const mean = cosines.reduce((sum, value) => sum + value, 0) / cosines.length
    features.forEach(({ values }, index) => {
      expect(at(values, 'dense_whole')).toBeCloseTo(cosines[index], 5)
      expect(at(values, 'dense_whole_dev')).toBeCloseTo(cosines[index] - mean, 5)
      expect(at(values, 'dense_step')).toBeGreaterThanOrEqual(-1)
      expect(at(values, 'dense_step')).toBeLessThanOrEqual(1)
    })
    const best = cosines.indexOf(Math.max(...cosines))
    expect(features.map(({ values }) => at(values, 'dense_whole_top1'))).toEqual(
      features.map((_feature, index) => (index === best ? 1 : 0)),
    )
    // Each clause has one dense best among its own candidates.
    const stepTop1 = features.filter(({ values }) => at(values, 'dense_step_top1') === 1)
    expect(stepTop1.length).toBeGreaterThanOrEqual(1)
    expect(stepTop1.length).toBeLessThanOrEqual(input.steps.length)
  })

  it('ranks a tool that shares no word with the request above unrelated candidates', () => {
    const candidates = ['sms.send', 'weather.forecast', 'finance.convert_currency']
    const tools = new Map<string, Tool>([
      ['sms.send', tool('sms.send', 'send_sms', 'Send an SMS text message to a phone number')],
      [
        'weather.forecast',
        tool('weather.forecast', 'get_forecast', 'Get the weather forecast for a city'),
      ],
      [
        'finance.convert_currency',
        tool('finance.convert_currency', 'convertCurrency', 'Convert an amount between currencies'),
      ],
    ])
    const values = denseFeatureValues(
      vectors.input((id) => tools.get(id)!),
      'will it rain tomorrow in Oslo',
      [{ text: 'will it rain tomorrow in Oslo', ids: candidates }],
      candidates,
    )
    const whole = (id: string) => values[candidates.indexOf(id)][0]
    expect(whole('weather.forecast')).toBeGreaterThan(whole('sms.send'))
    expect(whole('weather.forecast')).toBeGreaterThan(whole('finance.convert_currency'))
    expect(values[candidates.indexOf('weather.forecast')][2]).toBe(1)
  })

  it('gives the same bits as one cosine at a time (repeated ids, clause-only candidates, repeated texts)', () => {
    const input = vectors.input(sampleTool)
    const ids = SAMPLE_TOOLS.slice(0, 7).map((sample) => sample.id)
    const instruction = 'Find the forecast for Berlin and send it by email'
    const steps = [
      { text: 'Find the forecast for Berlin', ids: [ids[2], ids[0], ids[2], ids[5], ids[1]] },
      // A clause may name a candidate the instruction's list lacks.
      { text: 'send it by email', ids: [ids[6], SAMPLE_TOOLS[7].id, ids[3]] },
      { text: instruction, ids: ids.slice(4) },
      { text: 'nothing retrieved', ids: [] },
    ]
    const values = denseFeatureValues(input, instruction, steps, ids)
    expect(values).toEqual(referenceValues(input, instruction, steps, ids))
    expect(values).toHaveLength(ids.length)
  })

  it("with oneClause 'instruction', a one-clause plan's clause features are the instruction's, and only there", () => {
    const input = vectors.input(sampleTool)
    const ids = SAMPLE_TOOLS.slice(0, 6).map((sample) => sample.id)
    const instruction = 'I am going to Berlin next week. Find the forecast for Berlin'
    const clause = [{ text: 'Find the forecast for Berlin', ids: ids.slice(0, 4) }]
    const own = denseFeatureValues(input, instruction, clause, ids)
    const fromInstruction = denseFeatureValues(
      { ...input, oneClause: 'instruction' },
      instruction,
      clause,
      ids,
    )
    // The clause over its own candidates, embedded as the whole instruction.
    const asInstruction = denseFeatureValues(
      input,
      instruction,
      [{ ...clause[0], text: instruction }],
      ids,
    )
    expect(fromInstruction).toEqual(asInstruction)
    expect(fromInstruction).not.toEqual(own)
    // The whole instruction's three features do not change.
    expect(fromInstruction.map((values) => values.slice(0, 3))).toEqual(
      own.map((values) => values.slice(0, 3)),
    )
    // Two clauses keep their own vectors.
    const two = [clause[0], { text: 'send it by email', ids: ids.slice(2) }]
    expect(
      denseFeatureValues({ ...input, oneClause: 'instruction' }, instruction, two, ids),
    ).toEqual(denseFeatureValues(input, instruction, two, ids))
  })

  it('gives the same values from the library memo as from the tool objects', () => {
    const lines = SAMPLE_TOOLS.map((sample) => `${JSON.stringify(sample)}\n`).join('')
    const library = ToolLibrary.fromJsonLines('sample', Buffer.from(lines))
    const input = inputFor('Find the forecast for Berlin and send it by email')
    const fromTools = extractCandidateFeatures({ ...input, dense: vectors.input(sampleTool) })
    for (let pass = 0; pass < 2; pass += 1) {
      const fromLibrary = extractCandidateFeatures({
        ...input,
        library,
        dense: vectors.input(sampleTool, library),
      })
      expect(fromLibrary).toEqual(fromTools)
    }
  })

  it('are learned by `train --dense`, and neutral in the selector without word vectors', async () => {
    const trained = trainLearnedModel([sampleSource(DENSE_SAMPLE_CASES)], {
      bm25: BM25_SETTINGS,
      dense: vectors,
    })
    expect(trained.features).toEqual(DENSE_NAMES)
    const model = parseLearnedModel(JSON.stringify(trained), 'trained in the test')
    expect(usesDenseFeatures(model)).toBe(true)
    expect(
      usesDenseFeatures(
        parseLearnedModel(
          JSON.stringify(
            trainLearnedModel([sampleSource(DENSE_SAMPLE_CASES)], { bm25: BM25_SETTINGS }),
          ),
          'plain',
        ),
      ),
    ).toBe(false)

    const input = inputFor('What is the weather in Paris, and email the forecast to Ann')
    const requests: SelectionRequest[] = [
      ...input.steps.map((step) => ({ step: step.text, candidates: named(step.candidates) })),
      { step: input.instruction, candidates: named(input.whole), whole: true },
    ]
    const options = { instruction: input.instruction, tool: sampleTool, explain: true }
    const withVectors = await new LearnedSelector(model).select(requests, options)
    const without = await new LearnedSelector(model, 'learned', async () => undefined).select(
      requests,
      options,
    )
    expect(without.some((selection) => selection.toolId !== null)).toBe(true)
    const explained = (selections: typeof without) =>
      selections.flatMap((selection) => Object.entries(selection.features ?? {}))
    expect(explained(without).length).toBeGreaterThan(0)
    for (const [id, named] of explained(without)) {
      for (const name of DENSE_FEATURE_NAMES) {
        // Rounded to 4 decimals in explanations.
        expect(named[name]).toBeCloseTo(model.model.mean[DENSE_NAMES.indexOf(name)], 3)
      }
      const other = explained(withVectors).find(([otherId]) => otherId === id)![1]
      for (const name of FEATURE_NAMES) expect(named[name]).toBe(other[name])
    }
  })
})

/** DENSE_FEATURE_NAMES' values the plain way: a Map of cosines per text, one product at a time. */
function referenceValues(
  dense: ReturnType<DenseToolVectors['input']>,
  instruction: string,
  steps: ReadonlyArray<{ text: string; ids: readonly string[] }>,
  ids: readonly string[],
): number[][] {
  const similarities = (text: string, list: readonly string[]) => {
    const query = dense.encoder.embedText(text)
    const cosine = new Map<string, number>()
    let sum = 0
    let best: string | undefined
    let bestValue = Number.NEGATIVE_INFINITY
    for (const id of list) {
      if (cosine.has(id)) continue
      const vector = dense.toolVector(id)
      let value = 0
      for (let index = 0; index < query.length; index += 1) value += query[index] * vector[index]
      cosine.set(id, value)
      sum += value
      if (value > bestValue) [bestValue, best] = [value, id]
    }
    return { cosine, mean: cosine.size === 0 ? 0 : sum / cosine.size, best }
  }
  const whole = similarities(instruction, ids)
  const perStep = steps.map((step) => similarities(step.text, step.ids))
  return ids.map((id) => {
    const cosine = whole.cosine.get(id)!
    let stepCosine = Number.NEGATIVE_INFINITY
    let stepDev = Number.NEGATIVE_INFINITY
    let stepTop1 = 0
    for (const step of perStep) {
      const value = step.cosine.get(id)
      if (value === undefined) continue
      stepCosine = Math.max(stepCosine, value)
      stepDev = Math.max(stepDev, value - step.mean)
      if (step.best === id) stepTop1 = 1
    }
    if (stepCosine === Number.NEGATIVE_INFINITY)
      [stepCosine, stepDev] = [cosine, cosine - whole.mean]
    return [cosine, cosine - whole.mean, whole.best === id ? 1 : 0, stepCosine, stepDev, stepTop1]
  })
}

function tool(id: string, name: string, description: string): Tool {
  return { id, name, description, parameters: { type: 'object', properties: {} } }
}

function named(candidates: ReadonlyArray<{ id: string; score: number }>) {
  return candidates.map((candidate) => ({
    id: candidate.id,
    name: sampleTool(candidate.id).name,
    description: sampleTool(candidate.id).description,
    score: candidate.score,
  }))
}
