import { describe, expect, it } from 'vitest'
import { postingsFromEngine } from '../../../src/retrieve/bm25/bm25-postings.ts'
import { Bm25Retriever, type Bm25Settings } from '../../../src/retrieve/bm25/bm25-retriever.ts'
import type { Tool } from '../../../src/library/tool.ts'
import { defaultConfig } from '../../../src/config/schema.ts'
import { ToolLibrary } from '../../../src/library/tool-library.ts'
import { buildIndexedLibrary } from '../../../src/store/library-lifecycle.ts'
import { winkIndex, weightTable } from '../../helpers/wink-reference.ts'
import { SAMPLE_TOOLS } from '../../helpers/sample-tools.ts'
import { runRetrieverContract } from '../retriever.contract.ts'

const SETTINGS: Bm25Settings = {
  k1: 1.2,
  b: 0.75,
  fieldWeights: { name: 3, description: 1, parameters: 1, namespace: 1 },
}

// BM25 on its own (it is also an input of the hybrid suite), with the configured tau of 0.
runRetrieverContract({
  name: 'Bm25Retriever',
  create: async (tools) =>
    Bm25Retriever.build(tools, SETTINGS).withQueryOptions({ defaultMinScore: 0 }),
})

// …and as the service builds it: default config (tau 3, head-verb expansion).
runRetrieverContract({
  name: 'Bm25Retriever (default config: tau 3, head-verb expansion)',
  create: async (tools) =>
    (await buildIndexedLibrary(new ToolLibrary('contract', tools), defaultConfig())).retrievers.get(
      'bm25',
    )!,
})

/** Every (term, tool id) → weight of an index, whatever its document order. */
function weightsById(retriever: Bm25Retriever): Map<string, number> {
  return weightTable(retriever.postings, retriever.ids)
}

describe('Bm25Retriever', () => {
  const retriever = Bm25Retriever.build(SAMPLE_TOOLS, SETTINGS)
  const wink = winkIndex(SAMPLE_TOOLS, SETTINGS)

  it('ranks the tool whose name and description match first', async () => {
    const [first] = await retriever.retrieve('weather forecast for Paris', { k: 3, minScore: 0 })
    expect(first.id).toBe('weather.get_forecast')
  })

  it('scores exactly as wink-bm25-text-search does', () => {
    for (const query of [
      'send an email',
      'weather now',
      'stock price AAPL',
      'book hotel flights',
    ]) {
      const fast = retriever
        .search(query, 10, Number.NEGATIVE_INFINITY)
        .map(({ id, score }) => [id, score])
      const reference = wink
        .search(query, 10)
        .map(([id, score]) => [id, Math.round(score * 1e6) / 1e6] as const)
      expect(new Set(fast.map(([id]) => id))).toEqual(new Set(reference.map(([id]) => id)))
      for (const [id, score] of reference)
        expect(fast.find(([other]) => other === id)?.[1]).toBeCloseTo(score as number, 5)
    }
  })

  it('keeps only candidates above the threshold, at most k, best first', async () => {
    const all = await retriever.retrieve('send email message text', { k: 10, minScore: 0 })
    expect(all.length).toBeGreaterThan(2)
    const threshold = all[1].score
    const above = await retriever.retrieve('send email message text', {
      k: 10,
      minScore: threshold,
    })
    expect(above.every((candidate) => candidate.score > threshold)).toBe(true)
    expect(await retriever.retrieve('send email message text', { k: 1, minScore: 0 })).toEqual([
      all[0],
    ])
    for (let index = 1; index < all.length; index += 1)
      expect(all[index - 1].score).toBeGreaterThanOrEqual(all[index].score)
  })

  it('uses its default threshold (tau) when the call gives none', async () => {
    const strict = retriever.withQueryOptions({ defaultMinScore: 1000 })
    expect(await strict.retrieve('weather forecast', { k: 5 })).toEqual([])
    expect((await retriever.retrieve('weather forecast', { k: 5 })).length).toBeGreaterThan(0)
  })

  it('builds exactly the index wink-bm25-text-search builds, without wink', () => {
    const reference = postingsFromEngine(wink)
    expect(retriever.postings.termIndex).toEqual(reference.postings.termIndex)
    expect(weightsById(retriever)).toEqual(weightTable(reference.postings, reference.ids))
    expect(retriever.postings.totalCorpusLength).toBe(reference.postings.totalCorpusLength)
    // Under wink's three-document minimum (padding documents count in the IDF).
    const tiny = Bm25Retriever.build(SAMPLE_TOOLS.slice(0, 1), SETTINGS)
    const tinyReference = postingsFromEngine(winkIndex(SAMPLE_TOOLS.slice(0, 1), SETTINGS))
    expect(weightsById(tiny)).toEqual(weightTable(tinyReference.postings, tinyReference.ids))
  })

  it('builds the same index past a block of 65,536 (tool, term) pairs, and from a library walked one tool at a time', async () => {
    // 2,400 tools of ~40 terms (some repeated): ~100k pairs, past the builder's first block;
    // a tool's repeated term adds to a pair that may lie in the block before.
    const tools: Tool[] = Array.from({ length: 2400 }, (_, i) => ({
      id: `gen.tool_${i}`,
      name: `tool_${i} lookup${i % 97}`,
      description: `${Array.from({ length: 36 }, (_, w) => `word${(i * 7 + w * 13) % 1500}`).join(' ')} again word${(i * 7) % 1500} again`,
      parameters: {
        type: 'object',
        properties: { q: { type: 'string', description: `query ${i % 11}` } },
      },
    }))
    const built = Bm25Retriever.build(tools, SETTINGS)
    expect(built.postings.docs.length).toBeGreaterThan(65_536)
    const reference = postingsFromEngine(winkIndex(tools, SETTINGS))
    expect(weightsById(built)).toEqual(weightTable(reference.postings, reference.ids))
    // A buffer-backed library (an upload's) walked: each tool parsed when its turn comes.
    const library = ToolLibrary.fromJsonLines(
      'walked',
      new ToolLibrary('walked', tools).toJsonLines(),
    )
    const walked = await Bm25Retriever.buildAsync(library.walk, SETTINGS, { ids: library.idList })
    expect(walked.postings).toEqual(built.postings)
    for (const query of ['word12 lookup5', 'again query 3', 'tool_77'])
      expect(await walked.retrieve(query, { k: 10 })).toEqual(
        await built.retrieve(query, { k: 10 }),
      )
  })

  it('reads indexes saved by earlier versions (wink’s JSON export) with identical results', async () => {
    const restored = Bm25Retriever.fromWinkJson(wink.exportJSON(), SETTINGS)
    for (const query of ['email', 'hotel in Rome', 'ticker quote']) {
      expect(await restored.retrieve(query, { k: 5, minScore: 0 })).toEqual(
        await retriever.retrieve(query, { k: 5, minScore: 0 }),
      )
    }
  })

  it('indexes libraries smaller than wink’s three-document minimum', async () => {
    const one = Bm25Retriever.build(SAMPLE_TOOLS.slice(0, 1), SETTINGS)
    expect(one.size).toBe(1)
    expect((await one.retrieve('forecast', { k: 5, minScore: 0 })).map(({ id }) => id)).toEqual([
      'weather.get_forecast',
    ])
  })

  it('breaks score ties by id so results are deterministic', async () => {
    const twins: Tool[] = ['b', 'a', 'c'].map((id) => ({
      id,
      name: 'lookup',
      description: 'lookup',
      parameters: {},
    }))
    const result = await Bm25Retriever.build(twins, SETTINGS).retrieve('lookup', {
      k: 3,
      minScore: -1,
    })
    expect(result.map(({ id }) => id)).toEqual(['a', 'b', 'c'])
  })

  it('rejects with ABORTED when the signal has fired', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(
      retriever.retrieve('email', { k: 5, signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'ABORTED' })
  })
})

describe('head-verb expansion', () => {
  const retriever = Bm25Retriever.build(SAMPLE_TOOLS, SETTINGS)

  it('retrieves the action for a noun used as a verb ("email the forecast")', async () => {
    const [first] = await retriever.retrieve('email the forecast to Ann', { k: 3, minScore: 0 })
    expect(first.id).toBe('mail.send_email')
    const plain = retriever.withQueryOptions({ expandHeadVerbs: false })
    const [plainFirst] = await plain.retrieve('email the forecast to Ann', { k: 3, minScore: 0 })
    expect(plainFirst.id).toBe('weather.get_forecast')
  })

  it('only looks at the head verb, after fillers', async () => {
    const [first] = await retriever.retrieve('please text my mom', { k: 3, minScore: 0 })
    expect(first.id).toBe('sms.send_sms')
  })
})

describe("Bm25Retriever: parameters' enum values", () => {
  const tool = (name: string, description: string, parameters: Tool['parameters']): Tool => ({
    id: name,
    name,
    description,
    parameters,
  })
  const withEnums = [
    tool('get_horoscope', 'Daily astrological reading for a star sign.', {
      type: 'object',
      properties: { sign: { type: 'string', enum: ['aries', 'scorpio', 'pisces', 'leo'] } },
    }),
    tool('send_email', 'Send an email message.', {
      type: 'object',
      properties: { to: { type: 'string' }, format: { type: 'string', enum: ['text', 'html'] } },
    }),
    tool('send_direct_message', 'Send a direct message to a user.', {
      type: 'object',
      properties: { user: { type: 'string' } },
    }),
  ]
  const stripped = withEnums.map((item) =>
    tool(item.name, item.description, {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(item.parameters.properties as Record<string, { type: string }>).map(
          ([name, value]) => [name, { type: value.type }],
        ),
      ),
    }),
  )
  const retriever = Bm25Retriever.build(withEnums, SETTINGS)

  it('finds a tool by an enum value a request names, at a lower weight than its own words', () => {
    const [first] = retriever.search('what is in store for scorpios today', 3, 0)
    expect(first.id).toBe('get_horoscope')
    const [byValue] = retriever.search('scorpio', 1, 0)
    const [byName] = retriever.search('horoscope', 1, 0)
    expect(byValue.score).toBeLessThan(byName.score)
  })

  it('leaves tool lengths alone: a request naming no enum value scores as without enums', () => {
    const without = Bm25Retriever.build(stripped, SETTINGS)
    for (const query of ['send an email', 'direct message', 'daily reading']) {
      expect(retriever.search(query, 3, 0)).toEqual(without.search(query, 3, 0))
    }
  })
})
