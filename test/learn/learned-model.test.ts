import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { FEATURE_NAMES } from '../../src/learn/candidate-features.ts'
import { COUNT_FEATURE_NAMES } from '../../src/learn/count-model.ts'
import {
  DEFAULT_MODEL_PATH,
  formatLearnedModel,
  loadDefaultModel,
  parseLearnedModel,
} from '../../src/learn/learned-model.ts'
import { G3_TEST_FILES } from '../../src/learn/training-data.ts'

describe('the shipped learned model', () => {
  it('is small, computes the current features and carries its data card', () => {
    expect(readFileSync(DEFAULT_MODEL_PATH).length).toBeLessThan(50_000)
    const model = loadDefaultModel()
    expect(model.features).toEqual([...FEATURE_NAMES])
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
    // A model from before the count model still loads: the rule decides alone.
    const { count: _count, ...withoutCount } = loadDefaultModel()
    expect(parseLearnedModel(JSON.stringify(withoutCount), 'old.json').count).toBeUndefined()
  })
})

describe('formatLearnedModel', () => {
  it('writes number arrays on one line, leaves strings alone, and parses back to the model', () => {
    const shipped = loadDefaultModel()
    const model = {
      ...shipped,
      dataCard: {
        ...shipped.dataCard,
        notes: ['rule [0.15, 0.2]', 'a\nb', ...shipped.dataCard.notes],
      },
    }
    const text = formatLearnedModel(model)
    expect(text.endsWith('}\n')).toBe(true)
    expect(parseLearnedModel(text, 'formatted')).toEqual(
      parseLearnedModel(JSON.stringify(model), 'plain'),
    )
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(model)))
    expect(text).toContain(`"weights": ${JSON.stringify(model.model.weights)}`)
    expect(text).toContain('"rule [0.15, 0.2]"')
    // No line holds a lone number (JSON.stringify(…, null, 2) writes one per line).
    expect(text.split('\n').filter((line) => /^\s*-?\d[\d.eE+-]*,?$/.test(line))).toEqual([])
    expect(JSON.stringify(model, null, 2)).toMatch(/^\s*-?\d[\d.eE+-]*,?$/m)
  })
})
