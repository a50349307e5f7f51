import { describe, expect, it } from 'vitest'
import { ToolCooccurrence, toolCooccurrence } from '../../src/examples/example-cooccurrence.ts'
import { candidateSets, type ExampleDecisionInput } from '../../src/examples/example-decision.ts'
import { ExampleMemory } from '../../src/examples/example-memory.ts'

const examples = [
  { instruction: 'weather in Paris and email it to Ann', tools: ['weather.get', 'mail.send'] },
  { instruction: 'weather in Rome, mail the forecast to Bo', tools: ['mail.send', 'weather.get'] },
  { instruction: 'weather in Oslo', tools: ['weather.get'] },
  { instruction: 'translate and mail it', tools: ['text.translate', 'mail.send', 'mail.log'] },
]

describe('tool co-occurrence of a library’s usage examples', () => {
  it('counts uses, pairs, set sizes and exact sets', () => {
    const cooc = new ToolCooccurrence(examples)
    expect(cooc.uses('weather.get')).toBe(3)
    expect(cooc.uses('mail.send')).toBe(3)
    expect(cooc.uses('nothing')).toBe(0)
    // Of the 3 examples with weather.get, 2 also used mail.send; of mail.send's 3, 2 used weather.
    expect(cooc.conditional('mail.send', 'weather.get')).toBeCloseTo(2 / 3)
    expect(cooc.conditional('text.translate', 'mail.send')).toBeCloseTo(1 / 3)
    expect(cooc.conditional('weather.get', 'weather.get')).toBe(0)
    expect(cooc.conditional('weather.get', 'nothing')).toBe(0)
    expect(cooc.meanSize('weather.get')).toBeCloseTo(5 / 3)
    expect(cooc.meanSize('nothing')).toBe(0)
    expect(cooc.setUses(['weather.get', 'mail.send'])).toBe(2)
    expect(cooc.setUses(['mail.send'])).toBe(0)
  })

  it('is built once per memory', () => {
    const memory = ExampleMemory.build(examples)
    expect(toolCooccurrence(memory)).toBe(toolCooccurrence(memory))
    expect(toolCooccurrence(ExampleMemory.build(examples))).not.toBe(toolCooccurrence(memory))
  })

  it('gives the set features (cohesion, pairs used together, exact uses, size against usual)', () => {
    const input: ExampleDecisionInput = {
      chosen: ['weather.get', 'mail.send'],
      probabilities: new Map([
        ['weather.get', 0.9],
        ['mail.send', 0.8],
      ]),
      stepTops: new Set(['weather.get']),
      neighbors: [],
      proposal: undefined,
      examples: examples.length,
      steps: 2,
      words: 7,
      namespaceOf: (id) => id.split('.')[0],
      cooccurrence: new ToolCooccurrence(examples),
    }
    const ranked = [
      { id: 'weather.get', p: 0.9 },
      { id: 'mail.send', p: 0.8 },
    ]
    const [pipeline] = candidateSets(input, ranked)
    const tail = pipeline.x.slice(-5)
    expect(tail[0]).toBeCloseTo(2 / 3)
    expect(tail[1]).toBe(1)
    expect(tail[2]).toBeCloseTo(Math.log1p(2))
    // Usual sizes: weather.get 5/3, mail.send 7/3: the mean is 2, the set has 2 tools.
    expect(tail[3]).toBeCloseTo(0)
    expect(tail[4]).toBeCloseTo(0)
    const without = candidateSets({ ...input, cooccurrence: undefined }, ranked)[0].x.slice(-5)
    expect(without).toEqual([0, 0, 0, 0, 0])
  })
})
