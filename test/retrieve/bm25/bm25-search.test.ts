import { describe, expect, it } from 'vitest'
import { importToolsFromFile } from '../../../src/library/importers/index.ts'
import type { Tool } from '../../../src/library/tool.ts'
import { postingsFromEngine, type Bm25Settings } from '../../../src/retrieve/bm25/bm25-postings.ts'
import { Bm25Retriever } from '../../../src/retrieve/bm25/bm25-retriever.ts'
import {
  canPrune,
  queryTerms,
  SearchScratch,
  searchExhaustive,
  searchWindowed,
} from '../../../src/retrieve/bm25/bm25-search.ts'
import { tokenize } from '../../../src/retrieve/bm25/tokenize.ts'
import { TopK } from '../../../src/retrieve/top-k.ts'
import { dataPath, hasData } from '../../helpers/data-dir.ts'
import { winkIndex, weightTable } from '../../helpers/wink-reference.ts'
import { SAMPLE_TOOLS } from '../../helpers/sample-tools.ts'

const SETTINGS: Bm25Settings = {
  k1: 1.2,
  b: 0.75,
  fieldWeights: { name: 3, description: 1, parameters: 1, namespace: 1, examples: 0.5 },
}

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Random queries of 1-`maxWords` words taken from the tools' own text (common and rare words
 * alike).
 */
function randomQueries(
  tools: readonly Tool[],
  count: number,
  next: () => number,
  maxWords = 8,
): string[] {
  const words = tools.flatMap((tool) => `${tool.name} ${tool.description}`.split(/\s+/))
  return Array.from({ length: count }, () =>
    Array.from(
      { length: 1 + Math.floor(next() * maxWords) },
      () => words[Math.floor(next() * words.length)],
    ).join(' '),
  )
}

/** Expansion texts (usage-example instructions) for a third of the tools. */
function randomExpansions(tools: readonly Tool[], next: () => number): Map<string, string> {
  const expansions = new Map<string, string>()
  const texts = randomQueries(tools, tools.length, next)
  for (const [position, tool] of tools.entries()) {
    if (next() < 0.33) expansions.set(tool.id, texts[position])
  }
  return expansions
}

/**
 * Checks windowed MaxScore against exhaustive scoring (same ids, same scores, same order), with
 * windows of 32 and 256 documents (many windows in a test library) and the default; with usage
 * examples for a third of the tools (expansion terms) and without any (the windows whose terms
 * are all summed then take their own loop).
 */
function expectPruningExact(
  tools: readonly Tool[],
  queries: readonly string[],
  next: () => number,
) {
  for (const expansions of [randomExpansions(tools, next), undefined]) {
    const retriever = Bm25Retriever.build(tools, SETTINGS, { expansions })
    const exhaustive = retriever.withoutPruning()
    const ids = retriever.ids
    const scratches = [32, 256, undefined].map(
      (window) => new SearchScratch(retriever.size, window),
    )
    let pruned = 0
    for (const query of queries) {
      const k = [1, 3, 5, 10, 50][Math.floor(next() * 5)]
      const minScore = [0, 1, 3, 6][Math.floor(next() * 4)]
      const terms = queryTerms(
        tokenize(query),
        retriever.postings,
        retriever.expansionPostings,
        0.5,
      )
      expect(canPrune(terms)).toBe(true)
      const top = () => new TopK(k, (a, b) => ids[a] > ids[b])
      const expected = searchExhaustive(terms, 0.5, scratches[0], top(), minScore)
      for (const scratch of scratches) {
        expect(
          searchWindowed(terms, 0.5, scratch, top(), minScore),
          `${query} (k ${k}, > ${minScore}, windows of ${scratch.windowTool.length}, ${expansions ? 'with' : 'without'} expansions)`,
        ).toEqual(expected)
      }
      expect(retriever.search(query, k, minScore)).toEqual(exhaustive.search(query, k, minScore))
      if (expected.length > 0) pruned += 1
    }
    // The comparison means something only if most queries found tools.
    expect(pruned).toBeGreaterThan(queries.length / 2)
  }
}

describe('MaxScore pruning', () => {
  it('gives exactly the exhaustive top k on random queries (generated library)', () => {
    const next = random(7)
    // 600 tools: the sample tools with words dropped at random, so documents differ in length.
    const tools: Tool[] = Array.from({ length: 600 }, (_, copy) => {
      const tool = SAMPLE_TOOLS[copy % SAMPLE_TOOLS.length]
      const words = tool.description.split(' ').filter(() => next() < 0.7)
      return { ...tool, id: `${tool.id}.${copy}`, description: words.join(' ') }
    })
    expectPruningExact(tools, randomQueries(tools, 300, next), next)
  })

  it('gives exactly the exhaustive top k on long queries (whole instructions)', () => {
    const next = random(5)
    const tools: Tool[] = Array.from({ length: 600 }, (_, copy) => {
      const tool = SAMPLE_TOOLS[copy % SAMPLE_TOOLS.length]
      const words = tool.description.split(' ').filter(() => next() < 0.7)
      // One word in nine tools of ten, like "api" in ToolBench: pruning skips most of its list.
      const common = next() < 0.9 ? ' service' : ''
      return { ...tool, id: `${tool.id}.${copy}`, description: `${words.join(' ')}${common}` }
    })
    const queries = randomQueries(tools, 200, next, 30).map((query) => `${query} service`)
    expectPruningExact(tools, queries, next)
  })

  it('breaks ties at the k-th score by id, as exhaustive scoring does (many equal documents)', () => {
    const next = random(13)
    // 480 copies of the sample tools, ids in an order unrelated to library order: most scores
    // tie, and a later document with a smaller id must displace an earlier one at the k-th score.
    const tools: Tool[] = Array.from({ length: 480 }, (_, copy) => ({
      ...SAMPLE_TOOLS[copy % SAMPLE_TOOLS.length],
      id: `t${String((copy * 7919) % 480).padStart(3, '0')}`,
    }))
    expectPruningExact(tools, randomQueries(tools, 200, next), next)
  })

  it('stays exact when the bounds of a query add up to more than a 32-bit sum holds', () => {
    const next = random(17)
    const tools: Tool[] = Array.from({ length: 600 }, (_, copy) => {
      const tool = SAMPLE_TOOLS[copy % SAMPLE_TOOLS.length]
      const words = tool.description.split(' ').filter(() => next() < 0.7)
      return { ...tool, id: `${tool.id}.${copy}`, description: words.join(' ') }
    })
    // A word repeated thousands of times: its bound (count × largest weight, in millionths) alone
    // passes 2^31, which plain windows' 32-bit sums could not hold.
    const retriever = Bm25Retriever.build(tools, SETTINGS)
    const indexed = (word: string) => {
      const terms = tokenize(word)
      return terms.length === 1 && retriever.postings.termIndex.has(terms[0])
    }
    const queries = randomQueries(tools, 60, next).map((query) => {
      const word = query.split(' ').find(indexed) ?? 'weather'
      return `${query} ${Array.from({ length: 4000 }, () => word).join(' ')}`
    })
    for (const query of queries) {
      const terms = queryTerms(tokenize(query), retriever.postings, undefined, 0.5)
      expect(terms.reduce((sum, term) => sum + term.bound, 0)).toBeGreaterThan(2 ** 31)
    }
    expectPruningExact(tools, queries, next)
  })

  it('looks each query term up in its own index when queries alternate between indexes', () => {
    // Two libraries numbering the same words differently (the second's tools in reverse order,
    // a third of them left out): the query terms' ids, remembered per index, must be each
    // index's own, and a word only one index has must be found in that one alone.
    const first = Bm25Retriever.build(SAMPLE_TOOLS, SETTINGS)
    const second = Bm25Retriever.build(
      [...SAMPLE_TOOLS].reverse().filter((_, position) => position % 3 !== 0),
      SETTINGS,
    )
    const queries = randomQueries(SAMPLE_TOOLS, 40, random(17))
    let different = 0
    for (let round = 0; round < 2; round += 1) {
      for (const query of queries) {
        for (const retriever of [first, second]) {
          const words = tokenize(query)
          const { termIndex } = retriever.postings
          const found = queryTerms(words, retriever.postings, undefined, 0)
          const expected = [...new Set(words)].filter((word) => termIndex.has(word))
          expect(found.map((term) => term.id)).toEqual(expected.map((word) => termIndex.get(word)))
          different += expected.filter(
            (word) => termIndex.get(word) !== first.postings.termIndex.get(word),
          ).length
        }
      }
    }
    // The comparison means something only if the two indexes disagree on many terms.
    expect(different).toBeGreaterThan(queries.length)
  })
})

const G3_CORPUS = ['toolbench', 'COLT', 'datasets', 'ToolBenchG3', 'corpus.jsonl']

describe.skipIf(!hasData(...G3_CORPUS))('BM25 on the ToolBench G3 corpus (needs the data)', () => {
  const tools = importToolsFromFile(dataPath(...G3_CORPUS)).then(({ tools }) => tools)

  it('weighs every (term, tool) exactly as wink-bm25-text-search does', async () => {
    const library = await tools
    const settings = { ...SETTINGS, fieldWeights: { ...SETTINGS.fieldWeights } }
    const engine = winkIndex(library, settings)
    const reference = postingsFromEngine(engine)
    const built = Bm25Retriever.build(library, settings)
    expect(built.postings.termIndex).toEqual(reference.postings.termIndex)
    expect(weightTable(built.postings, built.ids)).toEqual(
      weightTable(reference.postings, reference.ids),
    )
    for (const query of randomQueries(library, 20, random(3))) {
      const expected = engine
        .search(query, 10)
        .map(([id, score]) => [id, Math.round(score * 1e6) / 1e6])
      const got = built
        .search(query, 10, Number.NEGATIVE_INFINITY)
        .map(({ id, score }) => [id, score])
      // wink sorts ties arbitrarily: compare as sets of (id, score) above the 10th score.
      const last = expected.at(-1)?.[1] as number
      expect(new Set(got.filter(([, score]) => (score as number) > last).map(String))).toEqual(
        new Set(expected.filter(([, score]) => (score as number) > last).map(String)),
      )
    }
  })

  it('gives exactly the exhaustive top k on 400 random queries', async () => {
    const library = await tools
    const next = random(11)
    expectPruningExact(library, randomQueries(library, 400, next), next)
    expectPruningExact(library, randomQueries(library, 100, next, 30), next)
  })
})
