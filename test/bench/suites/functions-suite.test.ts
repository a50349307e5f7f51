import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveSuites } from '../../../src/bench/suites/index.ts'
import { runFixtureBench } from '../fixture-bench.ts'

const FUNCTION_CALLING = fileURLToPath(
  new URL('../../../bench/fixtures/function-calling/queries.jsonl', import.meta.url),
)
const REQUEST_SHAPES = fileURLToPath(
  new URL('../../../bench/fixtures/request-shapes/queries.jsonl', import.meta.url),
)
const FUNCTION_CALLING_2 = fileURLToPath(
  new URL('../../../bench/fixtures/function-calling-2/queries.jsonl', import.meta.url),
)

const load = (path: string, options: { tools?: string; unmappable?: 'drop' | 'keep' } = {}) =>
  resolveSuites(`file:${path}`)[0].load({
    dataDir: '/nonexistent',
    libraryMode: 'union',
    unmappable: options.unmappable ?? 'drop',
    tools: options.tools,
  })

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-file-suite-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const weather = {
  name: 'get_weather',
  description: 'Current weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
}
const sms = {
  type: 'function',
  function: {
    name: 'send_sms',
    description: 'Send a text message.',
    parameters: { type: 'object', properties: { phone: { type: 'string' } } },
  },
}

describe('file:<path> suite (each query with its own tools)', () => {
  it('loads the self-written function-calling set: one split per category, in file order', async () => {
    const { splits, skipped } = await load(FUNCTION_CALLING)
    expect(skipped).toEqual([])
    expect(splits.map((split) => [split.name, split.cases.length])).toEqual([
      ['file:queries/simple', 20],
      ['file:queries/multiple', 20],
      ['file:queries/parallel', 12],
      ['file:queries/parallel_multiple', 12],
      ['file:queries/irrelevance', 16],
    ])
    for (const split of splits) {
      for (const benchCase of split.cases) {
        const ids = benchCase.library!.map((tool) => tool.id)
        expect(ids.length).toBeGreaterThanOrEqual(1)
        expect(ids.length).toBeLessThanOrEqual(5)
        for (const gold of benchCase.gold) expect(ids).toContain(gold)
      }
    }
    expect(splits[4].cases.every((benchCase) => benchCase.gold.length === 0)).toBe(true)
    expect(splits[3].cases.every((benchCase) => benchCase.gold.length >= 2)).toBe(true)
  })

  it('reads BFCL-shaped records (chat turns, function, ground_truth) and resolves gold by name', async () => {
    const file = join(dir, 'bfcl.jsonl')
    const records = [
      {
        id: 'simple_1',
        question: [[{ role: 'user', content: 'Weather in Oslo?' }]],
        function: [weather],
        ground_truth: [{ get_weather: { city: ['Oslo'] } }],
      },
      // OpenAI tools with a namespace-free id; gold given as the name; parallel calls = one tool
      { id: 'p', instruction: 'Text Ann and Bob', tools: [sms], gold: ['send_sms', 'send_sms'] },
      {
        id: 'irr',
        category: 'irrelevance',
        question: 'Tell me a joke',
        tools: [weather],
        gold: [],
      },
    ]
    await writeFile(file, records.map((record) => JSON.stringify(record)).join('\n'))
    const { splits } = await load(file)
    expect(splits.map((split) => split.name)).toEqual(['file:bfcl/all', 'file:bfcl/irrelevance'])
    expect(splits[0].cases).toMatchObject([
      { id: 'simple_1', instruction: 'Weather in Oslo?', gold: ['get_weather'] },
      { id: 'p', instruction: 'Text Ann and Bob', gold: ['send_sms'] },
    ])
    expect(splits[1].cases[0].gold).toEqual([])
  })

  it('resolves gold given as the names of tools toolsel wrote (toolFormat), read back as ids', async () => {
    const file = join(dir, 'exported.jsonl')
    const exported = (name: string) => ({ ...sms, function: { ...sms.function, name } })
    const tools = [exported('sms--send_sms'), exported('mail--send_email')]
    const records = [
      { id: 'a', instruction: 'Text Ann', tools, gold: ['sms--send_sms'] },
      { id: 'b', instruction: 'Mail Ann', tools, gold: ['mail.send_email'] },
      { id: 'c', instruction: 'Mail Bob', tools, gold: ['send_email'] },
    ]
    await writeFile(file, records.map((record) => JSON.stringify(record)).join('\n'))
    const { splits } = await load(file)
    expect(splits[0].cases.map((benchCase) => benchCase.gold)).toEqual([
      ['sms.send_sms'],
      ['mail.send_email'],
      ['mail.send_email'],
    ])
    expect(splits[0].cases[0].library!.map((tool) => tool.id)).toEqual([
      'sms.send_sms',
      'mail.send_email',
    ])
  })

  it('counts the import warnings of the records\' tools in the split notes (BFCL "dict")', async () => {
    const file = join(dir, 'warned.jsonl')
    const dict = { ...weather, parameters: { ...weather.parameters, type: 'dict' } }
    const records = [
      { instruction: 'Weather in Oslo?', function: [dict], gold: ['get_weather'] },
      { instruction: 'Weather in Rome?', function: [weather], gold: ['get_weather'] },
    ]
    await writeFile(file, records.map((record) => JSON.stringify(record)).join('\n'))
    const { splits } = await load(file)
    const note = splits[0].notes.find((line) => line.startsWith('import warnings'))
    expect(note).toMatch(
      /^import warnings: 1 for the tools of 1 of 2 queries \(first: .*warned\.jsonl#1: .*"dict" → "object"\)$/,
    )
    // A set whose tools import cleanly has no such note.
    const clean = await load(FUNCTION_CALLING_2)
    expect(
      clean.splits
        .flatMap((split) => split.notes)
        .some((line) => line.startsWith('import warnings')),
    ).toBe(false)
  })

  it('shares a library file between records ("library", or --tools for records without tools)', async () => {
    await writeFile(join(dir, 'lib.json'), JSON.stringify([weather, sms.function]))
    const file = join(dir, 'shared.jsonl')
    await writeFile(
      file,
      [
        { instruction: 'weather in Rome', library: 'lib.json', gold: ['get_weather'] },
        { instruction: 'text Ann', gold: ['send_sms'] },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    )
    const { splits } = await load(file, { tools: join(dir, 'lib.json') })
    const [first, second] = splits[0].cases
    expect(first.library!.map((tool) => tool.id)).toEqual(['get_weather', 'send_sms'])
    expect(second.library).toBe(first.library)
  })

  it('runs queries sharing a library file against that library, and abstains where no tool fits', async () => {
    const tools = [
      weather,
      sms.function,
      {
        name: 'convert_currency',
        description: 'Convert an amount of money between currencies.',
        parameters: { type: 'object', properties: { amount: { type: 'number' } } },
      },
    ]
    await writeFile(join(dir, 'shared-lib.json'), JSON.stringify(tools))
    const file = join(dir, 'shared-run.jsonl')
    const records = [
      { instruction: 'What is the weather in Rome?', gold: ['get_weather'] },
      { instruction: 'Send a text message to Ann', gold: ['send_sms'] },
      { instruction: 'Convert 20 dollars of money into euros', gold: ['convert_currency'] },
      { instruction: 'Who wrote Hamlet?', gold: [] },
    ].map((record) => ({ ...record, library: 'shared-lib.json' }))
    await writeFile(file, records.map((record) => JSON.stringify(record)).join('\n'))
    const report = await runFixtureBench({ suite: `file:${file}`, selector: 'learned' })
    const [split] = report.suites[0].splits
    expect(split.library.tools).toBe(3)
    expect(split.queries.map((query) => query.predicted)).toEqual([
      ['get_weather'],
      ['send_sms'],
      ['convert_currency'],
      [],
    ])
  })

  it('drops (or keeps) queries whose gold names a tool they were not given', async () => {
    const file = join(dir, 'unmapped.jsonl')
    const records = [
      { category: 'a', instruction: 'weather in Rome', tools: [weather], gold: ['get_weather'] },
      { category: 'b', instruction: 'x', tools: [weather], gold: ['nope'] },
    ]
    await writeFile(file, records.map((record) => JSON.stringify(record)).join('\n'))
    const { splits } = await load(file)
    expect(splits[1].stats).toMatchObject({ queries: 0, unmappedGold: 1 })
    expect((await load(file, { unmappable: 'keep' })).splits[1].cases).toHaveLength(1)
  })

  it('refuses a file whose every query is dropped, saying why (not a table of 0 queries)', async () => {
    const file = join(dir, 'all-unmapped.jsonl')
    await writeFile(
      file,
      [
        { instruction: 'x', tools: [weather], gold: ['get_wether'] },
        { instruction: 'y', tools: [weather], gold: ['nope'] },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    )
    await expect(load(file)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining(
        `all 2 queries are dropped, since each names a gold tool that is not among its tools (first: ${file} record 1 (id "0"): gold "get_wether", its tools: get_weather). Fix the gold names`,
      ),
    })
    expect((await load(file, { unmappable: 'keep' })).splits[0].cases).toHaveLength(2)
  })

  it.each([
    [{ tools: [weather], gold: [] }, /record 1: needs "instruction"/],
    [{ instruction: 'x', gold: [] }, /record 1: needs its tools/],
    [{ instruction: 'x', tools: [], gold: [] }, /"tools" must be a list of 1 to/],
    [{ instruction: 'x', tools: [weather] }, /needs "gold": a list of tool names/],
    [{ instruction: 'x', tools: [weather], gold: [3] }, /"gold" must list tool names/],
    [{ instruction: 'x', tools: [{ description: 'no name' }], gold: [] }, /do not import/],
    // A usage-examples record (tool ids under "tools"): was "cannot tell the tool format; saw a
    // JSON array whose first item is a string" and the list of every format.
    [
      { id: 'q1', instruction: 'text mom', tools: ['send_sms'] },
      /record 1: "tools" is a list of strings, as the tool ids of a usage-examples file are; .* Write the ids the query should select as "gold" and give the tools as "library": "<tool file>" \(relative to this file\) or --tools <tool file>/,
    ],
    [
      { instruction: 'x', library: 'missing.json', gold: [] },
      /record 1: its library "missing\.json" does not import: Cannot read tool path ".*missing\.json"/,
    ],
  ])('refuses a bad record with the file and record: %j', async (record, message) => {
    const file = join(dir, 'bad.jsonl')
    await writeFile(file, JSON.stringify(record))
    // expect.stringMatching: a bare RegExp inside toMatchObject matches any message (vitest
    // compares it as an object with no keys), so these rows checked only the code before.
    await expect(load(file)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(message),
    })
  })

  it('refuses a file without queries, saying what it should hold', async () => {
    const file = join(dir, 'empty.jsonl')
    await writeFile(file, '\n')
    await expect(load(file)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining(`Benchmark file "${file}" holds no queries`),
    })
  })

  it('names the first query whose gold is none of its tools (a typo drops it)', async () => {
    const file = join(dir, 'typo.jsonl')
    await writeFile(
      file,
      [
        { id: 'ok', instruction: 'weather in Rome', tools: [weather], gold: ['get_weather'] },
        { id: 'q2', instruction: 'text Ann', tools: [weather, sms.function], gold: ['send_smss'] },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    )
    const { splits } = await load(file)
    expect(splits[0].cases.map((benchCase) => benchCase.id)).toEqual(['ok'])
    expect(splits[0].notes).toContain(
      `1 gold tools in 1 queries are not in the library; those queries are dropped (--unmappable keep scores them against the raw gold); first: ${file} record 2 (id "q2"): gold "send_smss", its tools: get_weather, send_sms`,
    )
  })

  it('reports a missing file as a skipped split', async () => {
    const { splits, skipped } = await load(join(dir, 'missing.jsonl'))
    expect(splits).toEqual([])
    expect(skipped).toEqual([{ name: 'file:missing', reason: expect.stringMatching(/not found/) }])
  })

  // The default pipeline on the self-written set (bench/fixtures/function-calling/README.md):
  // 51 of 80 exact in round 17, 55 since round 18 indexes enum values; a change that lowers it
  // is a regression. An irrelevance query is exact only when nothing is selected: 12 of 16 in
  // round 17, 11 since enum values are indexed (a request naming a planet now reaches a tool
  // whose parameter lists the planets: right for a multiple query, wrong for an irrelevance one).
  it('keeps the default exact match on the self-written set, abstaining on irrelevance', async () => {
    const report = await runFixtureBench({
      suite: `file:${FUNCTION_CALLING}`,
      selector: 'learned',
    })
    const queries = report.suites[0].splits.flatMap((split) => split.queries)
    const exact = queries.filter((query) => query.metrics.exactMatch === 1)
    expect(queries).toHaveLength(80)
    expect(exact.length).toBeGreaterThanOrEqual(53)
    const irrelevance = report.suites[0].splits.find((split) => split.name.endsWith('irrelevance'))!
    const abstained = irrelevance.queries.filter((query) => query.predicted.length === 0)
    expect(abstained.length).toBe(
      irrelevance.queries.filter((query) => query.metrics.exactMatch === 1).length,
    )
    expect(abstained.length).toBeGreaterThanOrEqual(10)
  })

  // The request-shapes set (bench/fixtures/request-shapes/README.md, round 46): 70 requests over
  // the demo library, shared as a folder of MCP files through "library". 25 exact before round 46
  // kept a verbless first clause ("weather in Paris and email Ann …") as a step (0 of the 16
  // verbless ones), 30 after (5 of 16). A floor under it.
  it('runs the request-shapes set over the demo folder, keeping verbless requests', async () => {
    const { splits } = await load(REQUEST_SHAPES)
    expect(splits.map((split) => [split.name, split.cases.length])).toEqual([
      ['file:queries/verbless', 16],
      ['file:queries/list', 12],
      ['file:queries/mixed', 12],
      ['file:queries/sequence', 10],
      ['file:queries/polite', 8],
      ['file:queries/single', 12],
    ])
    expect(splits[0].cases[0].library).toHaveLength(197)
    const report = await runFixtureBench({ suite: `file:${REQUEST_SHAPES}`, selector: 'learned' })
    const exact = (name: string) =>
      report.suites[0].splits
        .filter((split) => split.name.endsWith(name))
        .flatMap((split) => split.queries)
        .filter((query) => query.metrics.exactMatch === 1).length
    expect(exact('')).toBeGreaterThanOrEqual(29)
    expect(exact('verbless')).toBeGreaterThanOrEqual(4)
  })

  it('loads the second set: OpenAPI files shared through "library", dialogue turns, MCP/Anthropic/OpenAI tools', async () => {
    const { splits, skipped } = await load(FUNCTION_CALLING_2)
    expect(skipped).toEqual([])
    expect(splits.map((split) => [split.name, split.cases.length])).toEqual([
      ['file:queries/simple', 25],
      ['file:queries/multiple', 36],
      ['file:queries/parallel', 10],
      ['file:queries/parallel_multiple', 20],
      ['file:queries/irrelevance', 27],
    ])
    const cases = splits.flatMap((split) => split.cases)
    expect(splits.every((split) => split.stats.unmappedGold === 0)).toBe(true)
    // A ToolAlpaca-style query gets a whole OpenAPI file: one tool per operation.
    const transit = cases.find((benchCase) => benchCase.id === 'm26-alpaca')!
    expect(transit.library!.map((tool) => tool.name)).toEqual([
      'planJourney',
      'getDepartures',
      'searchStops',
      'getServiceAlerts',
    ])
    // An API-Bank-style dialogue: the user's turns, joined; the assistant's left out.
    const dialogue = cases.find((benchCase) => benchCase.id === 's07-apibank')!
    expect(dialogue.instruction.split('\n')).toHaveLength(2)
  })

  // The second self-written set (bench/fixtures/function-calling-2/README.md), written in round 18
  // in other styles than the first: 85 of 118 exact with enum values indexed (79 before). A floor
  // a few queries under it; irrelevance is exact only when nothing is selected (19 of 27).
  it('keeps the default exact match on the second set, abstaining on irrelevance', async () => {
    const report = await runFixtureBench({
      suite: `file:${FUNCTION_CALLING_2}`,
      selector: 'learned',
    })
    const queries = report.suites[0].splits.flatMap((split) => split.queries)
    const exact = queries.filter((query) => query.metrics.exactMatch === 1)
    expect(queries).toHaveLength(118)
    expect(exact.length).toBeGreaterThanOrEqual(82)
    const irrelevance = report.suites[0].splits.find((split) => split.name.endsWith('irrelevance'))!
    const abstained = irrelevance.queries.filter((query) => query.predicted.length === 0)
    expect(abstained.length).toBeGreaterThanOrEqual(17)
  })
})
