import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { learnedToolVectors, probedToolVectors } from '../../src/learn/dense-encoder.ts'
import {
  DENSE_FEATURE_NAMES,
  denseToolText,
  DenseToolVectors,
  type TextEncoder,
} from '../../src/learn/dense-features.ts'
import { spaceProbe } from '../../src/learn/dense-space-probe.ts'
import {
  applyMap,
  denseMapLoss,
  denseTop1,
  MappedEncoder,
  trainDenseMap,
  type DenseMapSet,
} from '../../src/learn/dense-map.ts'
import {
  loadDefaultModel,
  parseLearnedModel,
  usesDenseFeatures,
} from '../../src/learn/learned-model.ts'
import { trainLearnedModel } from '../../src/learn/train-model.ts'
import { LearnedSelector } from '../../src/select/learned-selector.ts'
import { featureNames } from '../../src/learn/candidate-features.ts'
import type { SelectionRequest } from '../../src/contracts.ts'
import { BM25_SETTINGS, featureInputFor } from '../helpers/feature-input.ts'
import { SAMPLE_TOOLS, sampleTool } from '../helpers/sample-tools.ts'
import { DENSE_SAMPLE_CASES, sampleSource } from '../helpers/training-cases.ts'
import { DENSE_LOAD_TIMEOUT_MS, requireDenseVectors } from '../helpers/dense-vectors.ts'

const unit = (values: number[]) => {
  const norm = Math.hypot(...values)
  return Float32Array.from(values, (value) => value / norm)
}
const dot = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, value, index) => sum + value * b[index], 0)

/**
 * A fixture where the base space is misleading: words that mean the same thing ("car" and
 * "automobile") have orthogonal base vectors, while an unrelated tool ("cart", a shopping cart)
 * lies close to the request word. Training pairs teach car → automobile and bike → bicycle.
 */
const BASE: Record<string, Float32Array> = {
  'hire a car': unit([1, 0, 0, 0, 0.1, 0]),
  'rent a car for the weekend': unit([1, 0, 0, 0, 0, 0.1]),
  'car rental near me': unit([1, 0.05, 0, 0, 0.1, 0.1]),
  'ride a bike': unit([0, 0, 1, 0, 0.1, 0]),
  'bike hire downtown': unit([0, 0, 1, 0.05, 0, 0.1]),
  'automobile rental': unit([0, 1, 0, 0, 0, 0]),
  'shopping cart': unit([0.9, 0, 0.1, 0, 0, 0.3]),
  'bicycle sharing': unit([0, 0, 0, 1, 0, 0]),
  'spoke wheel shop': unit([0, 0, 0.9, 0, 0.3, 0]),
}
const fixtureEncoder: TextEncoder = {
  modelId: 'fixture',
  embedText: (text) => {
    const vector = BASE[text]
    if (vector === undefined) throw new Error(`no fixture vector for "${text}"`)
    return vector
  },
}
const TOOL_TEXTS = ['automobile rental', 'shopping cart', 'bicycle sharing', 'spoke wheel shop']
const fixtureSet = (queries: Array<[string, number]>): DenseMapSet => ({
  name: 'fixture',
  tools: TOOL_TEXTS.map((text) => fixtureEncoder.embedText(text)),
  queries: queries.map(([text, gold]) => ({
    vector: fixtureEncoder.embedText(text),
    gold: [gold],
  })),
})
const TRAIN = fixtureSet([
  ['hire a car', 0],
  ['rent a car for the weekend', 0],
  ['ride a bike', 2],
])
const HELD = fixtureSet([
  ['car rental near me', 0],
  ['bike hire downtown', 2],
])
const OPTIONS = { epochs: 60, batch: 2, learningRate: 0.05, temperature: 0.1 }

describe('learned dense map (InfoNCE over the library)', () => {
  it('lowers the training loss and is deterministic for a seed', () => {
    const first = trainDenseMap([TRAIN], { ...OPTIONS, seed: 3 })
    expect(first.losses).toHaveLength(OPTIONS.epochs)
    expect(first.losses.at(-1)!).toBeLessThan(first.losses[0] * 0.5)
    expect(denseMapLoss([TRAIN], first, OPTIONS.temperature)).toBeLessThan(
      denseMapLoss([TRAIN], undefined, OPTIONS.temperature),
    )
    const again = trainDenseMap([TRAIN], { ...OPTIONS, seed: 3 })
    expect(Array.from(again.query)).toEqual(Array.from(first.query))
    expect(Array.from(again.tool)).toEqual(Array.from(first.tool))
    expect(again.losses).toEqual(first.losses)
    const other = trainDenseMap([TRAIN], { ...OPTIONS, seed: 4 })
    expect(Array.from(other.query)).not.toEqual(Array.from(first.query))
  })

  it('ranks a synonym pair the base space ranks wrong, on requests it was not trained on', () => {
    // Untrained: "car rental near me" is closest to "shopping cart", the bike request to the shop.
    expect(denseTop1([HELD])).toBe(0)
    const map = trainDenseMap([TRAIN], { ...OPTIONS, seed: 1 })
    expect(denseTop1([HELD], map)).toBe(100)
    const query = new MappedEncoder(fixtureEncoder, map.query, map.size, 'query')
    const tools = new MappedEncoder(fixtureEncoder, map.tool, map.size, 'tool')
    const request = query.embedText('car rental near me')
    expect(dot(request, tools.embedText('automobile rental'))).toBeGreaterThan(
      dot(request, tools.embedText('shopping cart')),
    )
    expect(query.modelId).toBe('fixture+learned-query')
    expect(Math.hypot(...request)).toBeCloseTo(1, 5)
  })

  it('stays near the identity under a strong identity decay, and diagonal under `diagonal`', () => {
    const distance = (map: { query: Float32Array; size: number }) =>
      Math.hypot(
        ...Array.from(map.query, (value, index) => value - (index % (map.size + 1) === 0 ? 1 : 0)),
      )
    const free = trainDenseMap([TRAIN], { ...OPTIONS, identityDecay: 0 })
    const held = trainDenseMap([TRAIN], { ...OPTIONS, identityDecay: 50 })
    expect(distance(held)).toBeLessThan(distance(free) / 2)
    const diagonal = trainDenseMap([TRAIN], { ...OPTIONS, diagonal: true })
    diagonal.query.forEach((value, index) => {
      if (index % (diagonal.size + 1) !== 0) expect(value).toBe(0)
    })
    expect(distance(diagonal)).toBeGreaterThan(0)
  })

  it('applies a map with the same bits as a product taken one row at a time', () => {
    let state = 12345
    const random = () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0
      return state / 2 ** 32 - 0.5
    }
    // Sizes with and without a remainder after the blocks of five rows.
    for (const size of [1, 4, 7, 12, 100]) {
      const matrix = Float32Array.from({ length: size * size }, random)
      const input = Float32Array.from({ length: size }, random)
      const expected = new Float32Array(size)
      for (let row = 0; row < size; row++) {
        let sum = 0
        for (let column = 0; column < size; column++)
          sum += matrix[row * size + column] * input[column]
        expected[row] = sum
      }
      let norm = 0
      for (const value of expected) norm += value * value
      const scale = 1 / Math.sqrt(norm)
      for (let row = 0; row < size; row++) expected[row] *= scale
      expect(Array.from(applyMap(matrix, size, input))).toEqual(Array.from(expected))
    }
  })

  it('applies a map as a matrix product scaled to unit length', () => {
    // [[0, 2], [1, 0]] · [3, 4] = [8, 3].
    const out = applyMap(Float32Array.from([0, 2, 1, 0]), 2, Float32Array.from([3, 4]))
    expect(Array.from(out)).toEqual(Array.from(unit([8, 3])))
    expect(() => new MappedEncoder(fixtureEncoder, new Float32Array(3), 2, 'query')).toThrow(
      /size 2 needs 4 values/,
    )
    // A map whose size is not the base vectors' dimension is refused, not applied to part of them.
    const dimension = fixtureEncoder.embedText('automobile rental').length
    const wrong = new MappedEncoder(
      fixtureEncoder,
      new Float32Array((dimension + 1) ** 2),
      dimension + 1,
      'tool',
    )
    expect(() => wrong.embedText('automobile rental')).toThrow(
      `A dense map of size ${dimension + 1} can't map fixture's ${dimension}-dimensional vectors.`,
    )
  })
})

describe('a model trained with --learned-dense', () => {
  let vectors: DenseToolVectors
  beforeAll(async () => {
    vectors = await requireDenseVectors()
  }, DENSE_LOAD_TIMEOUT_MS)

  const train = () =>
    trainLearnedModel([sampleSource(DENSE_SAMPLE_CASES)], {
      bm25: BM25_SETTINGS,
      dense: vectors,
      learnDense: { epochs: 3 },
    })

  it('stores the maps, round-trips, and scores in the learned space; neutral without vectors', async () => {
    const trained = train()
    expect(trained.features).toEqual(featureNames(true))
    expect(trained.denseMap?.size).toBe(100)
    expect(trained.denseMap?.query).toHaveLength(100 * 100)
    expect(trained.dataCard.notes.some((note) => note.startsWith('dense map (100×100'))).toBe(true)
    // Deterministic: the same model again.
    expect(JSON.stringify(train())).toBe(JSON.stringify(trained))
    const model = parseLearnedModel(JSON.stringify(trained), 'trained in the test')
    expect(model.denseMap).toEqual(trained.denseMap)
    expect(usesDenseFeatures(model)).toBe(true)
    expect(() =>
      parseLearnedModel(
        JSON.stringify({ ...trained, denseMap: { ...trained.denseMap, tool: [1] } }),
        'cut',
      ),
    ).toThrow(/size × size/)
    expect(() =>
      parseLearnedModel(
        JSON.stringify({
          ...trained,
          denseMap: {
            ...trained.denseMap,
            size: 10,
            query: Array(100).fill(0),
            tool: Array(100).fill(0),
          },
        }),
        'resized',
      ),
    ).toThrow(/size must be 100/)

    // The selector's tool vectors are the learned ones, not GloVe's.
    const learned = (await learnedToolVectors(model.denseMap!))!
    const tool = sampleTool('weather.get_forecast')
    const stored = learned.input(sampleTool).toolVector(tool.id)
    const expected = applyMap(
      Float32Array.from(model.denseMap!.tool),
      100,
      vectors.encoder.embedText(denseToolText(tool)),
    )
    expect(Array.from(stored)).toEqual(Array.from(expected))
    expect(await learnedToolVectors(model.denseMap!)).toBe(learned)

    const input = featureInputFor('What is the weather in Paris, and email the forecast to Ann', [
      ...SAMPLE_TOOLS,
    ])
    const named = (candidates: ReadonlyArray<{ id: string; score: number }>) =>
      candidates.map((candidate) => ({
        ...candidate,
        name: sampleTool(candidate.id).name,
        description: sampleTool(candidate.id).description,
      }))
    const requests: SelectionRequest[] = [
      ...input.steps.map((step) => ({ step: step.text, candidates: named(step.candidates) })),
      { step: input.instruction, candidates: named(input.whole), whole: true },
    ]
    const options = { instruction: input.instruction, tool: sampleTool, explain: true }
    const withVectors = await new LearnedSelector(model).select(requests, options)
    const explainedWith = withVectors.flatMap((selection) =>
      Object.entries(selection.features ?? {}),
    )
    const query = learned.encoder.embedText(input.instruction)
    for (const [id, values] of explainedWith) {
      expect(values.dense_whole).toBeCloseTo(
        dot(query, learned.input(sampleTool).toolVector(id)),
        3,
      )
    }
    const without = await new LearnedSelector(model, 'learned', async () => undefined).select(
      requests,
      options,
    )
    const names = featureNames(true)
    for (const [, values] of without.flatMap((selection) =>
      Object.entries(selection.features ?? {}),
    )) {
      for (const name of DENSE_FEATURE_NAMES)
        expect(values[name]).toBeCloseTo(model.model.mean[names.indexOf(name)], 3)
    }
  }, 120_000)

  it('loads the word vectors at start-up (prepare), not on the first request', async () => {
    const model = parseLearnedModel(JSON.stringify(train()), 'trained in the test')
    let loads = 0
    const loader = async () => {
      loads += 1
      return undefined
    }
    await new LearnedSelector(model, 'learned', loader).prepare()
    expect(loads).toBe(1)
    // The shipped model has the learned dense features since round 18: loaded too.
    await new LearnedSelector(loadDefaultModel(), 'learned', loader).prepare()
    expect(loads).toBe(2)
    // A model without dense features: nothing to load.
    const linear = { ...loadDefaultModel(), features: featureNames(false) }
    await new LearnedSelector(linear, 'learned', loader).prepare()
    expect(loads).toBe(2)

    // The service's start-up (Components.ready) prepares the configured selector.
    const directory = await mkdtemp(join(tmpdir(), 'toolsel-dense-prepare-'))
    try {
      const file = join(directory, 'dense.json')
      await writeFile(file, JSON.stringify(model))
      const prepare = vi.spyOn(LearnedSelector.prototype, 'prepare')
      const components = createComponents(
        parseConfig({ select: { selector: `learned:${file}` } }),
        createMemoryLogger(),
      )
      components.selector()
      await components.ready()
      expect(prepare).toHaveBeenCalledTimes(1)
      prepare.mockRestore()
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('the space a learned dense map was trained over', () => {
  let vectors: DenseToolVectors
  beforeAll(async () => {
    vectors = await requireDenseVectors()
  }, DENSE_LOAD_TIMEOUT_MS)

  it('is recorded by content, and a map over other vectors of the same name is skipped, saying so', async () => {
    const trained = trainLearnedModel([sampleSource(DENSE_SAMPLE_CASES)], {
      bm25: BM25_SETTINGS,
      dense: vectors,
      learnDense: { epochs: 1 },
    })
    const probe = spaceProbe(vectors.encoder)
    expect(probe).toMatch(/^sha256:[0-9a-f]{16}$/)
    expect(trained.denseMap).toMatchObject({ base: 'static:glove-100d', baseProbe: probe })
    // The shipped model was trained over the vectors this install loads.
    expect(loadDefaultModel().denseMap?.baseProbe).toBe(probe)

    // Other vectors under the same id and dimension (another release of the word-vector
    // package): every value scaled and shifted, as a retrained file's would differ.
    const other = new DenseToolVectors({
      modelId: 'static:glove-100d',
      embedText: (text) => vectors.encoder.embedText(text).map((value) => value * 0.5 + 0.01),
    })
    expect(spaceProbe(other.encoder)).not.toBe(probe)
    const warnings: string[] = []
    const map = parseLearnedModel(JSON.stringify(trained), 'trained').denseMap!
    const overOther = (stored: typeof map) =>
      learnedToolVectors(
        stored,
        (line) => warnings.push(line),
        async () => other,
      )
    // Was: the map applied to the other vectors (tool vectors returned, nothing said).
    expect(await overOther(map)).toBe(undefined)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('dense map skipped, dense features left neutral')
    expect(warnings[0]).toContain(`other static:glove-100d vectors than this process loaded`)
    expect(warnings[0]).toContain(`probe ${probe} vs ${spaceProbe(other.encoder)}`)

    // A map from before round 35 records no probe: applied as before.
    const { baseProbe: _probe, ...older } = map
    expect(await overOther(older)).toBeInstanceOf(DenseToolVectors)
    expect(warnings).toHaveLength(1)
    // Another encoder by name: refused when the model is read.
    expect(() =>
      parseLearnedModel(
        JSON.stringify({ ...trained, denseMap: { ...trained.denseMap, base: 'onnx:bge-small' } }),
        'other-base.json',
      ),
    ).toThrow(
      'Learned model other-base.json has a dense map over "onnx:bge-small" vectors; this version applies dense maps to static:glove-100d vectors only.',
    )
  }, 120_000)

  it('is recorded for plain dense features too (--dense, no map); other vectors leave them neutral', async () => {
    const trained = trainLearnedModel([sampleSource(DENSE_SAMPLE_CASES)], {
      bm25: BM25_SETTINGS,
      dense: vectors,
    })
    const probe = spaceProbe(vectors.encoder)
    // Was: nothing recorded about the vectors the plain dense features were computed over.
    expect(trained.denseMap).toBe(undefined)
    expect(trained.denseProbe).toBe(probe)
    const model = parseLearnedModel(JSON.stringify(trained), 'trained')
    expect(model.denseProbe).toBe(probe)
    const withMap = trainLearnedModel([sampleSource(DENSE_SAMPLE_CASES)], {
      bm25: BM25_SETTINGS,
      dense: vectors,
      learnDense: { epochs: 1 },
    })
    expect(withMap).not.toHaveProperty('denseProbe')

    const other = new DenseToolVectors({
      modelId: 'static:glove-100d',
      embedText: (text) => vectors.encoder.embedText(text).map((value) => value * 0.5 + 0.01),
    })
    const warnings: string[] = []
    const warn = (line: string) => warnings.push(line)
    expect(await probedToolVectors(probe, warn, async () => vectors)).toBe(vectors)
    expect(warnings).toEqual([])
    const otherProbe = spaceProbe(other.encoder)
    // A model trained over other vectors (its probe is the other one's) than this process has.
    expect(await probedToolVectors(otherProbe, warn, async () => vectors)).toBe(undefined)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('dense features left neutral')
    expect(warnings[0]).toContain(`probe ${otherProbe} vs ${probe}`)
    expect(warnings[0]).toContain('toolsel train --dense')

    // The selector reads the model's probe (its default vectors: this process' GloVe): a model
    // whose probe is another's gets neutral dense features, as with no vectors at all.
    const request = {
      step: 'send an SMS text message to Bob',
      candidates: SAMPLE_TOOLS.map((tool, rank) => ({
        id: tool.id,
        name: tool.name,
        score: 1 - rank / 10,
      })),
    } as SelectionRequest
    const select = (selector: LearnedSelector) => selector.select([request], { tool: sampleTool })
    const neutral = await select(new LearnedSelector(model, 'learned', async () => undefined))
    const overOther = await select(new LearnedSelector({ ...model, denseProbe: otherProbe }))
    expect(overOther).toEqual(neutral)
    // Over its own vectors the dense features count (the answer is not the neutral one).
    expect(await select(new LearnedSelector(model))).not.toEqual(neutral)
  }, 120_000)
})
