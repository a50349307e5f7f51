import { describe, expect, it } from 'vitest'
import { ExampleMemory, withWordPairs } from '../../src/examples/example-memory.ts'
import { exampleExpansions } from '../../src/examples/example-expansion.ts'
import {
  DEFAULT_EXAMPLE_MEMORY_OPTIONS,
  memorySelfCheck,
  proposeToolSet,
  rescoreByVote,
  selfCheckPrecision,
} from '../../src/examples/memory-selection.ts'

const examples = [
  { instruction: 'book a table for two at an italian restaurant', tools: ['food.book'] },
  { instruction: 'reserve a table at a sushi restaurant tonight', tools: ['food.book'] },
  {
    instruction: 'what is the weather in Paris and email it to Ann',
    tools: ['weather.get', 'mail.send'],
  },
  {
    instruction: 'weather in Rome, then email the forecast to Bo',
    tools: ['weather.get', 'mail.send'],
  },
  { instruction: 'convert 20 euros to dollars', tools: ['finance.convert'] },
]

describe('ExampleMemory', () => {
  const memory = ExampleMemory.build(examples)

  it('finds the most similar examples by TF-IDF cosine, in [0, 1]', () => {
    const neighbors = memory.neighbors('weather in Oslo and email it to Cy', 3)
    expect(neighbors.map((neighbor) => neighbor.example.tools)).toEqual([
      ['weather.get', 'mail.send'],
      ['weather.get', 'mail.send'],
    ])
    expect(neighbors[0].similarity).toBeGreaterThan(neighbors[1].similarity)
    expect(neighbors[0].similarity).toBeLessThanOrEqual(1)
    expect(memory.neighbors(examples[4].instruction, 1)[0].similarity).toBe(1)
    expect(memory.neighbors('zzz qqq', 3)).toEqual([])
    expect(ExampleMemory.build([]).vote('anything')).toMatchObject({ topSimilarity: 0 })
  })

  it('with word pairs, ranks first the example that repeats the phrasing (built once per memory)', () => {
    const phrased = ExampleMemory.build([
      { instruction: 'send the report then book a flight', tools: ['mail.send', 'travel.book'] },
      { instruction: 'book the report then send a flight', tools: ['doc.book', 'air.send'] },
    ])
    const query = 'please send the report then book a flight'
    // Same words: the word memory cannot tell them apart (ties go to the older one).
    const words = phrased.neighbors(query, 2)
    expect(words[0].similarity).toBe(words[1].similarity)
    const pairs = withWordPairs(phrased)
    expect(pairs.wordPairs).toBe(true)
    expect(withWordPairs(phrased)).toBe(pairs)
    expect(withWordPairs(pairs)).toBe(pairs)
    expect(pairs.examples).toBe(phrased.examples)
    const ranked = pairs.neighbors(query, 2)
    expect(ranked[0].example.tools).toEqual(['mail.send', 'travel.book'])
    expect(ranked[0].similarity).toBeGreaterThan(ranked[1].similarity)
    expect(pairs.neighbors(phrased.examples[1].instruction, 1)[0].similarity).toBe(1)
  })

  it('votes: the share of neighbour similarity that used each tool', () => {
    const vote = memory.vote('book a restaurant table and convert euros', { neighbors: 10 })
    const total = [...vote.scores.values()].reduce((sum, score) => sum + score, 0)
    expect(vote.scores.get('food.book')! + vote.scores.get('finance.convert')!).toBeCloseTo(1, 6)
    expect(total).toBeCloseTo(1, 6)
    expect(vote.scores.get('food.book')).toBeGreaterThan(vote.scores.get('finance.convert')!)
    expect(vote.scores.has('mail.send')).toBe(false)
  })

  it('proposes the set neighbours agree on, only when similar enough and backed by two', () => {
    const options = DEFAULT_EXAMPLE_MEMORY_OPTIONS
    const agreed = proposeToolSet(memory, 'weather in Oslo and email it to Cy', options)
    expect(agreed).toMatchObject({ tools: ['weather.get', 'mail.send'], agreeing: 2 })
    // One example alone: not enough unless it is a near-paraphrase.
    expect(proposeToolSet(memory, 'convert 20 euros to pounds please', options)).toMatchObject({
      tools: ['finance.convert'],
      agreeing: 1,
    })
    expect(proposeToolSet(memory, 'convert my pounds', options)).toBeUndefined()
    expect(proposeToolSet(memory, 'play some jazz', options)).toBeUndefined()
  })

  it('abstains in a library where its answers to its own examples were wrong (CRAFT-like)', () => {
    // Every tool has one example, as in CRAFT (each tool made from one problem): a request's
    // closest past request is a near-paraphrase about ANOTHER tool.
    const problems = [
      ['find the area of a circle with radius 3', 'geo.circle_area'],
      ['find the area of a circle with diameter 3', 'geo.circle_area_from_diameter'],
      ['solve the quadratic equation x^2 - 5x + 6 = 0', 'algebra.solve_quadratic'],
      ['solve the linear equation 5x + 6 = 0', 'algebra.solve_linear'],
      ['how many ways to choose 3 books out of 7', 'counting.combinations'],
      ['how many ways to arrange 3 books out of 7', 'counting.permutations'],
    ]
    const single = ExampleMemory.build(
      problems.map(([instruction, id]) => ({ instruction, tools: [id] })),
    )
    const options = DEFAULT_EXAMPLE_MEMORY_OPTIONS
    const check = memorySelfCheck(single, options)
    expect(check.proposed).toBeGreaterThanOrEqual(4)
    expect(check.right).toBe(0)
    expect(selfCheckPrecision(check)).toBeLessThan(options.minPrecision)
    const request = 'find the area of a circle with radius 5'
    expect(proposeToolSet(single, request, { ...options, minPrecision: 0 })).toMatchObject({
      tools: ['geo.circle_area'],
    })
    expect(proposeToolSet(single, request, options)).toBeUndefined()

    // The same wording where past requests repeat their tools: the replay is right, it answers.
    const repeated = ExampleMemory.build(
      problems.map(([instruction, id]) => ({ instruction, tools: [id.split('.')[0]] })),
    )
    expect(memorySelfCheck(repeated, options)).toMatchObject({ right: check.proposed })
    expect(proposeToolSet(repeated, request, options)).toMatchObject({ tools: ['geo'] })
    // One replayed answer, wrong, is too little evidence to silence the memory (add-one smoothing).
    expect(selfCheckPrecision({ proposed: 1, right: 0 })).toBeGreaterThan(options.minPrecision)
  })

  it('re-scores candidates by the vote', () => {
    const vote = memory.vote('email the weather', { neighbors: 10 })
    const candidates = [
      { id: 'mail.draft', score: 5 },
      { id: 'mail.send', score: 4 },
    ]
    expect(rescoreByVote(candidates, vote, 0)).toEqual(candidates)
    expect(rescoreByVote(candidates, vote, 2).map((candidate) => candidate.id)).toEqual([
      'mail.send',
      'mail.draft',
    ])
  })
})

describe('exampleExpansions', () => {
  it('gives each tool with at least `minExamples` examples its newest instructions', () => {
    const expansions = exampleExpansions(examples, 1, 2)
    expect(expansions).toEqual(
      new Map([
        ['food.book', 'reserve a table at a sushi restaurant tonight'],
        ['weather.get', 'weather in Rome, then email the forecast to Bo'],
        ['mail.send', 'weather in Rome, then email the forecast to Bo'],
      ]),
    )
    expect(exampleExpansions(examples, 32, 1).get('finance.convert')).toBe(examples[4].instruction)
  })
})
