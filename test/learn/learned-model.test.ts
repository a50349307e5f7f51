import { readFileSync } from 'node:fs'
import * as prettier from 'prettier'
import { describe, expect, it } from 'vitest'
import { FEATURE_NAMES, featureNames } from '../../src/learn/candidate-features.ts'
import { COUNT_FEATURE_NAMES } from '../../src/learn/count-model.ts'
import {
  DEFAULT_MODEL_PATH,
  formatLearnedModel,
  loadDefaultModel,
  parseLearnedModel,
} from '../../src/learn/learned-model.ts'
import { formatJson } from '../../src/learn/format-json.ts'
import { G3_TEST_FILES } from '../../src/learn/training-data.ts'

describe('the shipped learned model', () => {
  it('is small, computes the current features and carries its data card', () => {
    // About 590 KB since round 18: the learned dense space's two 100 × 100 maps (about 480 KB),
    // and 200 boosted trees of depth 4 in the example-aware decision (about 110 KB).
    expect(readFileSync(DEFAULT_MODEL_PATH).length).toBeLessThan(650_000)
    const model = loadDefaultModel()
    // Since round 18: the learned dense features (`toolsel train --learned-dense
    // --one-clause-dense --dense-free-acceptance`), and the dense-free acceptance model.
    expect(model.features).toEqual(featureNames(true))
    expect(model.denseMap?.base).toBe('static:glove-100d')
    expect(model.oneClauseDense).toBe('instruction')
    expect(model.acceptance?.weights).toHaveLength(FEATURE_NAMES.length)
    expect(model.count?.features).toEqual([...COUNT_FEATURE_NAMES])
    expect(model.dataCard.trainedOn.map((entry) => entry.split(' ')[0])).toEqual([
      'toolplanner-g3',
      'toolplanner-g3-single',
      'toolplanner-g3-composed',
      'toollens',
    ])
    // Trained on training splits only: the G3 test files are named as excluded, never as sources.
    const notes = model.dataCard.notes.join('\n')
    for (const file of G3_TEST_FILES)
      expect(notes).toContain(`left out because their id or text is in`)
    expect(notes).toContain(G3_TEST_FILES[0])
    expect(notes).toContain('qrels/train.tsv')
    expect(notes).not.toContain('qrels/test.tsv')
    expect(notes).toContain('toolplanner-g3-composed: ')
    expect(model.dataCard.heldOut.splits.map((split) => split.name)).toEqual([
      'toolplanner-g3',
      'toolplanner-g3-single',
      'toolplanner-g3-composed',
      'toollens',
    ])
  })

  it('refuses a file that is not a model, naming the fix', () => {
    expect(() => parseLearnedModel('{', 'x.json')).toThrow(/not JSON/)
    expect(() => parseLearnedModel('{"format":"other"}', 'x.json')).toThrow(/toolsel train/)
    const stale = { ...loadDefaultModel(), features: ['whole_rel'] }
    expect(() => parseLearnedModel(JSON.stringify(stale), 'old.json')).toThrow(
      /trained on features \[whole_rel\].*Retrain it with `toolsel train`/,
    )
    const count = loadDefaultModel().count!
    const staleCount = { ...loadDefaultModel(), count: { ...count, features: ['clauses'] } }
    expect(() => parseLearnedModel(JSON.stringify(staleCount), 'old.json')).toThrow(
      /count model over \[clauses\].*Retrain it with `toolsel train`/,
    )
    // The one-clause dense vector is a setting of the dense features: refused without them.
    const { denseMap: _map, ...plain } = loadDefaultModel()
    const cut = (values: number[]) => values.slice(0, FEATURE_NAMES.length)
    const { mean, scale, weights, bias } = plain.model
    const oneClause = {
      ...plain,
      features: [...FEATURE_NAMES],
      model: { mean: cut(mean), scale: cut(scale), weights: cut(weights), bias },
      oneClauseDense: 'instruction',
    }
    expect(() => parseLearnedModel(JSON.stringify(oneClause), 'x.json')).toThrow(
      /oneClauseDense but has no dense features/,
    )
    // The acceptance model is over the features without the dense ones, in a dense model only.
    const { oneClauseDense: _oneClause, ...linear } = plain
    const acceptance = {
      ...linear,
      features: [...FEATURE_NAMES],
      model: oneClause.model,
      acceptance: oneClause.model,
    }
    expect(() => parseLearnedModel(JSON.stringify(acceptance), 'x.json')).toThrow(
      /acceptance model that is not over the 32 features/,
    )
    const dense = loadDefaultModel()
    const short = { ...dense, acceptance: { ...dense.acceptance!, weights: [1] } }
    expect(() => parseLearnedModel(JSON.stringify(short), 'x.json')).toThrow(
      /acceptance model that is not over the 32 features/,
    )
    // A model from before the count model still loads: the rule decides alone.
    const { count: _count, ...withoutCount } = loadDefaultModel()
    expect(parseLearnedModel(JSON.stringify(withoutCount), 'old.json').count).toBeUndefined()
  })

  it('reads boosted trees from a version-2 file only, and checks their shape', () => {
    const tree = { split: [0, -1, 5], threshold: [0.5, 0, 0.25], leaf: [0.1, -0.1, 0, 0.2] }
    const { acceptance: _acceptance, ...shippedWithout } = loadDefaultModel()
    const withTrees = {
      ...shippedWithout,
      formatVersion: 2,
      trees: { depth: 2, trees: [tree] },
    }
    expect(parseLearnedModel(JSON.stringify(withTrees), 'gbt.json').trees?.trees).toEqual([tree])
    expect(() =>
      parseLearnedModel(JSON.stringify({ ...withTrees, formatVersion: 1 }), 'gbt.json'),
    ).toThrow(/trees in a version-1 file.*toolsel train/)
    const short = { ...withTrees, trees: { depth: 2, trees: [{ ...tree, leaf: [0, 0, 0] }] } }
    expect(() => parseLearnedModel(JSON.stringify(short), 'gbt.json')).toThrow(/malformed tree 0/)
    const farFeature = {
      ...withTrees,
      trees: { depth: 2, trees: [{ ...tree, split: [0, 99, 1] }] },
    }
    expect(() => parseLearnedModel(JSON.stringify(farFeature), 'gbt.json')).toThrow(
      /malformed tree 0/,
    )
    expect(() =>
      parseLearnedModel(JSON.stringify({ ...loadDefaultModel(), formatVersion: 4 }), 'new.json'),
    ).toThrow(/not a toolsel-learned-selector v1 to v3 file/)
  })

  it('reads a dense-free acceptance model from a version-3 file only', () => {
    const shipped = loadDefaultModel()
    expect(shipped.formatVersion).toBe(3)
    expect(shipped.acceptance).toBeDefined()
    for (const formatVersion of [1, 2]) {
      expect(() =>
        parseLearnedModel(JSON.stringify({ ...shipped, formatVersion }), 'old.json'),
      ).toThrow(new RegExp(`acceptance model in a version-${formatVersion} file`))
    }
  })

  it("reads the example-aware decision's trees from a version-2 file only, checking their features", () => {
    const { acceptance: _acceptance, ...shipped } = loadDefaultModel()
    const tree = { split: [0, -1, 5], threshold: [0.5, 0, 0.25], leaf: [0.1, -0.1, 0, 0.2] }
    const examples = shipped.examples!
    const withTrees = {
      ...shipped,
      formatVersion: 2,
      examples: {
        ...examples,
        trees: { depth: 2, trees: [tree] },
        setTrees: { depth: 2, trees: [tree] },
      },
    }
    const parsed = parseLearnedModel(JSON.stringify(withTrees), 'gbt.json').examples!
    expect(parsed.trees?.trees).toEqual([tree])
    expect(parsed.setTrees?.trees).toEqual([tree])
    expect(() =>
      parseLearnedModel(JSON.stringify({ ...withTrees, formatVersion: 1 }), 'gbt.json'),
    ).toThrow(/example-decision trees in a version-1 file.*toolsel train/)
    // A split past the set model's features (the per-tool model has fewer features than 99 too).
    const far = { ...tree, split: [0, 99, 1] }
    for (const key of ['trees', 'setTrees']) {
      const bad = {
        ...withTrees,
        examples: { ...withTrees.examples, [key]: { depth: 2, trees: [far] } },
      }
      expect(() => parseLearnedModel(JSON.stringify(bad), 'gbt.json')).toThrow(
        /malformed tree 0 in its example-(decision|set) trees/,
      )
    }
  })
})

describe('formatLearnedModel', () => {
  it('writes the committed model byte for byte (the layout prettier prints) and parses back to it', () => {
    const committed = readFileSync(DEFAULT_MODEL_PATH, 'utf8')
    expect(formatLearnedModel(JSON.parse(committed))).toBe(committed)
    const shipped = loadDefaultModel()
    const model = {
      ...shipped,
      dataCard: {
        ...shipped.dataCard,
        notes: ['rule [0.15, 0.2]', 'a\nb', ...shipped.dataCard.notes],
      },
    }
    const text = formatLearnedModel(model)
    expect(parseLearnedModel(text, 'formatted')).toEqual(
      parseLearnedModel(JSON.stringify(model), 'plain'),
    )
    expect(text).toContain('"rule [0.15, 0.2]"')
  })
})

describe('formatJson', () => {
  const options = async () => ({
    ...(await prettier.resolveConfig(DEFAULT_MODEL_PATH)),
    parser: 'json',
  })
  /** Numbers of every sign and size JSON.stringify writes. */
  const numbers = (count: number, seed: number) =>
    Array.from({ length: count }, (_, at) => {
      const x = Math.sin(seed * 7919 + at * 104729)
      return [Math.round(x * 1e6) / 1e6, Math.round(x * 100), x * 1e-9, x * 1e22, 0][at % 5]
    })

  it.each([
    ['the shipped model', () => loadDefaultModel()],
    [
      'a --learned-dense-like model: number matrices, mixed and nested arrays, empty values',
      () => ({
        map: Array.from({ length: 12 }, (_, row) => numbers(100, row)),
        pair: [numbers(2, 1), numbers(1, 2)],
        single: [[1, 2]],
        objects: [{ a: 1, b: [1, 2] }, { c: 'x' }],
        mixed: ['x', 1, null, true, [], {}, [0.5, 'y']],
        long: ['a'.repeat(60), 'b'.repeat(60)],
        empty: { list: [], object: {} },
        nested: { deeper: { deepest: numbers(40, 3), text: 'é → ü'.repeat(5) } },
      }),
    ],
    // Arrays whose flat form ends at column 99, 100 and 101 (with and without a comma after).
    ...[97, 98, 99].map((length) => [
      `an array ${length} columns wide`,
      () => ({
        first: ['x'.repeat(length - 14)],
        second: { a: [1, 'y'.repeat(length - 19)] },
        fill: [numbers(30, length), 'z'.repeat(length - 12)],
        z: ['x'.repeat(length - 10)],
      }),
    ]),
  ] as Array<[string, () => unknown]>)('is what prettier prints: %s', async (_, make) => {
    const value = make()
    const text = formatJson(value)
    expect(await prettier.format(text, await options())).toBe(text)
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
  })
})
