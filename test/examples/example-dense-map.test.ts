import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import {
  decideWithExamples,
  DENSE_POOL,
  EXAMPLE_DECISION_FEATURES,
  EXAMPLE_DENSE_FEATURES,
  EXAMPLE_SET_FEATURES,
  exampleDecisionRows,
  readsDense,
  type ExampleDecisionInput,
} from '../../src/examples/example-decision.ts'
import { ExampleDenseSpace, learnExampleMap } from '../../src/examples/example-dense-map.ts'
import { ExampleMemory } from '../../src/examples/example-memory.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import { exampleMemoryFor } from '../../src/examples/memory-selection.ts'
import type { UsageExample } from '../../src/examples/usage-example.ts'
import type { DenseToolVectors } from '../../src/learn/dense-features.ts'
import { trainDenseMap, trainDenseMapAsync } from '../../src/learn/dense-map.ts'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { buildIndexedLibrary } from '../../src/store/build-index.ts'
import { loadIndexedLibrary, saveIndexedLibrary } from '../../src/store/index-store.ts'
import { DENSE_LOAD_TIMEOUT_MS, requireDenseVectors } from '../helpers/dense-vectors.ts'

/**
 * A back office whose tools say nothing of what they are for ("Back-office service 3"): only the
 * usage examples tell which requests each one serves. Each tool has ten requests, written from
 * its topic's words.
 */
const TOPICS: Array<[string, string[]]> = [
  ['billing', ['invoice', 'bill', 'payment', 'charge', 'refund', 'receipt', 'customer', 'owed']],
  ['rooms', ['meeting', 'room', 'reserve', 'conference', 'booking', 'calendar', 'slot', 'floor']],
  ['hiring', ['candidate', 'interview', 'resume', 'applicant', 'recruit', 'job', 'offer', 'hire']],
  ['shipping', ['parcel', 'package', 'courier', 'delivery', 'tracking', 'shipment', 'box', 'send']],
  [
    'laptops',
    ['laptop', 'computer', 'screen', 'keyboard', 'repair', 'broken', 'device', 'charger'],
  ],
  ['travel', ['flight', 'hotel', 'trip', 'airport', 'visa', 'travel', 'ticket', 'abroad']],
]
const TOOLS: Tool[] = TOPICS.map(([topic], index) => ({
  id: `office.${topic}`,
  name: `service_${index + 1}`,
  namespace: 'office',
  description: `Back-office service number ${index + 1}.`,
  parameters: { type: 'object', properties: {} },
}))
const request = (words: string[], at: number) =>
  `please handle the ${words[at % 8]} and the ${words[(at + 3) % 8]} about ${words[(at + 5) % 8]}`
const EXAMPLES: UsageExample[] = TOPICS.flatMap(([topic, words]) =>
  Array.from({ length: 10 }, (_, at) => ({
    instruction: request(words, at),
    tools: [`office.${topic}`],
  })),
)
const SMALL = { minExamples: 8, epochs: 6, learningRate: 0.01 }

let vectors: DenseToolVectors
beforeAll(async () => {
  vectors = await requireDenseVectors()
}, DENSE_LOAD_TIMEOUT_MS)

describe('learnExampleMap', () => {
  it('ranks a paraphrase of an example first where the untrained space does not', async () => {
    const { map, check } = await learnExampleMap(TOOLS, EXAMPLES, vectors, SMALL)
    expect(map).toBeDefined()
    expect(check!.held).toBeGreaterThan(0)
    expect(check!.trained).toBeGreaterThan(check!.untrained)
    const space = new ExampleDenseSpace(TOOLS, map!, vectors)
    const paraphrases: Array<[string, string]> = [
      ['the customer wants a refund of the invoice', 'office.billing'],
      ['can I reserve a conference room for the meeting', 'office.rooms'],
      ['my laptop screen is broken, it needs a repair', 'office.laptops'],
      ['book a flight and a hotel for the trip', 'office.travel'],
    ]
    const identity = { size: 100, query: eye(100), tool: eye(100) }
    const untrained = new ExampleDenseSpace(TOOLS, identity, vectors)
    let trainedHits = 0
    let untrainedHits = 0
    for (const [text, gold] of paraphrases) {
      if (space.score(text, 1).top[0] === gold) trainedHits += 1
      if (untrained.score(text, 1).top[0] === gold) untrainedHits += 1
    }
    expect(trainedHits).toBe(paraphrases.length)
    expect(untrainedHits).toBeLessThan(paraphrases.length)
    // Scores: top is best first, the cosine of an unknown id is 0.
    const scores = space.score(paraphrases[0][0], 3)
    expect(scores.top).toHaveLength(3)
    expect(scores.cosine(scores.top[0])).toBeGreaterThanOrEqual(scores.cosine(scores.top[1]))
    expect(scores.cosine('office.nope')).toBe(0)
  })

  it('is deterministic, and the yielding trainer learns the same maps', async () => {
    const first = await learnExampleMap(TOOLS, EXAMPLES, vectors, SMALL)
    const second = await learnExampleMap(TOOLS, EXAMPLES, vectors, SMALL)
    expect(second.check).toEqual(first.check)
    expect(Array.from(second.map!.query)).toEqual(Array.from(first.map!.query))
    expect(Array.from(second.map!.tool)).toEqual(Array.from(first.map!.tool))
    const set = {
      name: 'x',
      tools: TOOLS.map((tool) => vectors.toolEncoder.embedText(tool.description)),
      queries: EXAMPLES.slice(0, 20).map((example) => ({
        vector: vectors.encoder.embedText(example.instruction),
        gold: [TOOLS.findIndex((tool) => example.tools.includes(tool.id))],
      })),
    }
    const sync = trainDenseMap([set], { epochs: 2 })
    const async = await trainDenseMapAsync([set], { epochs: 2 })
    expect(Array.from(async.query)).toEqual(Array.from(sync.query))
    expect(async.losses).toEqual(sync.losses)
  })

  it('abstains in a library whose every tool has one example (nothing to learn for a new tool)', async () => {
    // 48 tools, each made from one request about it (CRAFT-like): a held-out example's tool has
    // no example left to learn it from.
    const words = TOPICS.flatMap(([, topicWords]) => topicWords)
    const tools: Tool[] = words.map((word, index) => ({
      id: `kit.${word}`,
      name: `${word}_tool`,
      namespace: 'kit',
      description: `Works with a ${word}.`,
      parameters: { type: 'object', properties: {} },
    }))
    const examples = words.map((word, index) => ({
      instruction: `what about the ${word} and the ${words[(index + 17) % words.length]}`,
      tools: [`kit.${word}`],
    }))
    const { map, check } = await learnExampleMap(tools, examples, vectors, SMALL)
    expect(check!.held).toBeGreaterThan(0)
    expect(map).toBeUndefined()
  })

  it('learns nothing from too few examples', async () => {
    const { map, check } = await learnExampleMap(TOOLS, EXAMPLES.slice(0, 5), vectors, SMALL)
    expect(map).toBeUndefined()
    expect(check).toBeUndefined()
  })
})

describe('the example-aware decision with a dense space', () => {
  const neighbors = ExampleMemory.build(EXAMPLES).neighbors('refund the invoice', 20)
  const input = (dense?: ExampleDecisionInput['dense']): ExampleDecisionInput => ({
    chosen: ['office.rooms'],
    probabilities: new Map([['office.rooms', 0.6]]),
    stepTops: new Set(['office.rooms']),
    neighbors,
    proposal: undefined,
    examples: EXAMPLES.length,
    steps: 1,
    words: 3,
    namespaceOf: () => 'office',
    ...(dense && { dense }),
  })
  const dense = {
    top: ['office.laptops', 'office.billing', 'office.rooms'],
    cosine: (id: string) => ({ 'office.laptops': 0.9, 'office.billing': 0.5 })[id] ?? 0.1,
  }

  it('adds the dense columns and pool only for a model that reads them', () => {
    const plain = exampleDecisionRows(input(dense))
    expect(plain.x[0]).toHaveLength(EXAMPLE_DECISION_FEATURES.length)
    expect(plain.ids).not.toContain('office.laptops')
    expect(exampleDecisionRows(input())).toEqual(plain)
    const rows = exampleDecisionRows(input(dense), true)
    expect(rows.x[0]).toHaveLength(EXAMPLE_DECISION_FEATURES.length + EXAMPLE_DENSE_FEATURES.length)
    expect(rows.ids).toEqual(expect.arrayContaining(dense.top.slice(0, DENSE_POOL)))
    const laptops = rows.x[rows.ids.indexOf('office.laptops')]
    const base = EXAMPLE_DECISION_FEATURES.length
    expect(laptops.slice(base)).toEqual([0.9, 1, 1, 1])
    // A library without a space: the dense columns are 0, the pool is the plain one.
    const without = exampleDecisionRows(input(), true)
    expect(without.ids).toEqual(plain.ids)
    for (const row of without.x) expect(row.slice(base)).toEqual([0, 0, 0, 0])
  })

  it("a model weighing the dense cosine picks the dense space's tool", () => {
    const width = EXAMPLE_DECISION_FEATURES.length + EXAMPLE_DENSE_FEATURES.length
    const weights = Array.from({ length: width }, (_, index) =>
      index === EXAMPLE_DECISION_FEATURES.length ? 10 : 0,
    )
    const model = {
      features: [...EXAMPLE_DECISION_FEATURES, ...EXAMPLE_DENSE_FEATURES],
      model: { mean: weights.map(() => 0), scale: weights.map(() => 1), weights, bias: 0 },
      // The set model prefers the set with the highest mean tool probability.
      setFeatures: [...EXAMPLE_SET_FEATURES],
      setModel: {
        mean: EXAMPLE_SET_FEATURES.map(() => 0),
        scale: EXAMPLE_SET_FEATURES.map(() => 1),
        weights: EXAMPLE_SET_FEATURES.map((name) => (name === 'mean_probability' ? 10 : 0)),
        bias: 0,
      },
      minExamples: 0,
    }
    expect(readsDense(model)).toBe(true)
    expect(decideWithExamples(model, input(dense))).toEqual(['office.laptops'])
    // Without a space the same model has nothing dense to go by: the dense tool is not even in the pool.
    expect(decideWithExamples(model, input())).not.toContain('office.laptops')
  })
})

describe('examples.denseMap in an index', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolsel-exmap-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('learns the space at build and again at load, with the same answers; off by default', async () => {
    const config = parseConfig({ examples: { denseMap: true } })
    const library = new ToolLibrary('office', TOOLS)
    // A hundred examples: the default settings' minimum is 40.
    const examples = ExampleSet.of(
      TOPICS.flatMap(([topic, words]) =>
        Array.from({ length: 20 }, (_, at) => ({
          instruction: `${request(words, at)} number ${at}`,
          tools: [`office.${topic}`],
        })),
      ),
    )
    const built = await buildIndexedLibrary(library, config, { retriever: 'bm25', examples })
    expect(built.examples?.dense).toBeDefined()
    expect(exampleMemoryFor(built.examples, config.examples)?.dense).toBe(built.examples?.dense)
    const saved = await saveIndexedLibrary(dir, built)
    const loaded = await loadIndexedLibrary(saved, config)
    const text = 'the customer wants a refund of the invoice'
    expect(loaded.examples?.dense?.score(text, 6).top).toEqual(
      built.examples!.dense!.score(text, 6).top,
    )
    // Off (the default), loading reads no tool: a large library's tools stay out of the heap.
    const toolsRead = vi.spyOn(ToolLibrary.prototype, 'tools', 'get')
    try {
      const plain = await loadIndexedLibrary(saved, parseConfig({}))
      expect(plain.examples?.set.size).toBe(examples.size)
      expect(plain.examples?.dense).toBeUndefined()
      expect(toolsRead).not.toHaveBeenCalled()
    } finally {
      toolsRead.mockRestore()
    }
  }, 120_000)
})

describe('examples.denseMap in a serving library', () => {
  // Slang that shares no word with the sample tools: only the examples tie it to them.
  const SLANG: Array<[string, string[]]> = [
    ['sms.send_sms', ['holler', 'crew', 'gig', 'ping', 'buzz', 'pals', 'shout', 'yo']],
    [
      'weather.get_forecast',
      ['brolly', 'drizzle', 'sunny', 'chilly', 'muggy', 'tomorrow', 'outdoors', 'picnic'],
    ],
    [
      'travel.search_flights',
      ['jet', 'plane', 'hop', 'layover', 'runway', 'nonstop', 'airline', 'redeye'],
    ],
    [
      'finance.get_stock_quote',
      ['ticker', 'shares', 'nasdaq', 'portfolio', 'bull', 'dividend', 'invest', 'market'],
    ],
    ['mail.search_inbox', ['dig', 'thread', 'message', 'old', 'look', 'inbox', 'boss', 'find']],
    ['travel.book_hotel', ['crash', 'bed', 'motel', 'sleep', 'night', 'lodge', 'suite', 'inn']],
  ]
  const slangExamples = SLANG.flatMap(([tool, words]) =>
    Array.from({ length: 12 }, (_, at) => ({
      instruction: `${request(words, at)} ${at}`,
      tools: [tool],
    })),
  )

  it('a POST of examples publishes the new version with its space; a restart learns the same one', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-exmap-serve-'))
    try {
      const toolFile = join(indexDir, 'sample.json')
      await writeFile(toolFile, JSON.stringify(SAMPLE_TOOLS))
      // First from the tool file; after the write, the saved index (as a restart finds it).
      const started = async (library: string) => {
        const config = parseConfig({
          library: { default: library, indexDir },
          examples: { denseMap: true },
        })
        const logger = createMemoryLogger()
        const service = new ToolselService(config, logger, createComponents(config, logger))
        await service.start()
        return service
      }
      const service = await started(toolFile)
      expect(service.library().examples).toBeUndefined()
      const result = await service.addExamples('sample', slangExamples)
      expect(result.version).toBe(1)
      const examples = service.library().examples
      expect(examples?.set.version).toBe(1)
      expect(examples?.dense).toBeDefined()
      const text = 'yo holler at my pals about the gig'
      const top = examples!.dense!.score(text, 3).top
      expect(top).toHaveLength(3)
      const restarted = await started('sample')
      expect(restarted.library().examples?.dense?.score(text, 3).top).toEqual(top)
    } finally {
      await rm(indexDir, { recursive: true, force: true })
    }
  }, 120_000)
})

function eye(size: number): Float32Array {
  const out = new Float32Array(size * size)
  for (let index = 0; index < size; index++) out[index * size + index] = 1
  return out
}
