import { serialize } from 'node:v8'
import { describe, expect, it } from 'vitest'
import { CANDIDATE_POSITION, type SelectToolsResult } from '../../src/pipeline.ts'
import type { Tool } from '../../src/library/tool.ts'
import {
  MAX_ANSWER_TOOL_BYTES,
  schemasPastBudget,
  ToolLibrary,
} from '../../src/library/tool-library.ts'
import { TOOL_FORMATS, type ToolFormat } from '../../src/library/provider-tools.ts'
import {
  CANDIDATE_JSON_KEPT,
  CandidatePrefixes,
  numberJson,
  oneByteWhereItCan,
  selectResponseJson,
  selectResponseObject,
} from '../../src/server/select-response.ts'
import { buildIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { describedTool } from '../helpers/oversized-tools.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp, postJson } from './test-service.ts'

/** What the route answered before: `c.json` of the result with each tool's public fields. */
function objectPath(
  result: SelectToolsResult,
  includeSchemas: boolean,
  format: ToolFormat = 'toolsel',
): string {
  return JSON.stringify(selectResponseObject(result, includeSchemas, format))
}

/** An answer around `steps`, with the other fields of a result (`extra` replaces some). */
function answerOf(
  steps: SelectToolsResult['steps'],
  extra: Partial<SelectToolsResult> = {},
): SelectToolsResult {
  return {
    tools: [],
    steps,
    timings: { planMs: 0, retrieveMs: 0, rerankMs: 0, selectMs: 0, totalMs: 0 },
    components: {
      library: 'x',
      planner: 'rule',
      retriever: 'bm25',
      reranker: 'identity',
      selector: 'top1',
      fallbacks: [],
    },
    usage: { inputTokens: 0, outputTokens: 0 },
    ...extra,
  }
}

/** The body as text (a buffer after checking that its bytes are the text's UTF-8). */
function bodyText(body: Buffer | string): string {
  if (typeof body === 'string') return body
  const text = body.toString()
  expect(body.equals(Buffer.from(text))).toBe(true)
  return text
}

/** Tools whose text needs escaping in JSON, and one without a namespace. */
const AWKWARD_TOOLS: Tool[] = [
  {
    id: 'quote."tool"',
    name: 'say "hello" \\ back',
    namespace: 'ns\u2028line',
    description: 'Send a "quoted" greeting\nwith a back\\slash and a tab\t.',
    parameters: { type: 'object', properties: { text: { type: 'string', description: 'é ✓ 😀' } } },
  },
  {
    id: 'unicode.tool',
    name: 'grüße_senden',
    description: 'Send greetings (Grüße) to a friend 😀, café style, lone \ud800 surrogate.',
    parameters: { type: 'object', properties: {} },
  },
  {
    id: 'control.tool',
    name: 'control\u0001char',
    namespace: 'control',
    description: 'Send a greeting with a control character \u0007 to a friend.',
    parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
  },
]

const INSTRUCTIONS = [
  'Get the weather forecast for Paris, and email the forecast to Ann',
  'What is the weather right now in Oslo?',
  'send a greeting to my friend, then tell me the weather forecast for Rome',
  'Send a "quoted" greeting with a back\\slash to café friends 😀',
  'convert 20 euros to dollars and send an email about it',
  'nothing here matches anything zzzz',
]

describe('selectResponseJson', () => {
  it('writes the same bytes as JSON.stringify of the response object, over real selections', async () => {
    const { service } = await createTestApp({ start: false })
    await service.start([
      await buildIndexedLibrary(
        new ToolLibrary('sample', [...SAMPLE_TOOLS, ...AWKWARD_TOOLS]),
        service.config,
      ),
    ])
    let compared = 0
    let withFeatures = 0
    for (const selector of ['learned', 'top1'] as const) {
      for (const explain of [false, true]) {
        for (const instruction of INSTRUCTIONS) {
          const result = await service.select({ instruction, explain, selector, tau: 0 })
          withFeatures += result.steps
            .flatMap((step) => step.candidates)
            .filter((c) => c.features).length
          // Twice: the second call reads what the first one cached.
          for (let pass = 0; pass < 2; pass++) {
            for (const includeSchemas of [true, false]) {
              expect(bodyText(selectResponseJson(result, includeSchemas))).toBe(
                objectPath(result, includeSchemas),
              )
              compared += 1
            }
            for (const format of TOOL_FORMATS.slice(1)) {
              expect(bodyText(selectResponseJson(result, true, format))).toBe(
                objectPath(result, true, format),
              )
              compared += 1
            }
          }
        }
      }
    }
    expect(compared).toBe(2 * 2 * INSTRUCTIONS.length * 2 * 5)
    expect(withFeatures).toBeGreaterThan(0)
  })

  it('gives each step candidate its library position, which no answer shows', async () => {
    const { service } = await createTestApp({ start: false })
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    await service.start([await buildIndexedLibrary(library, service.config)])
    const result = await service.select({ instruction: INSTRUCTIONS[0], selector: 'top1' })
    const candidates = result.steps.flatMap((step) => step.candidates)
    expect(candidates.length).toBeGreaterThan(1)
    for (const candidate of candidates) {
      expect(library.idList.at(candidate[CANDIDATE_POSITION]!)).toBe(candidate.id)
      expect(Object.keys(candidate)).toEqual(['id', 'name', 'score'])
    }
    expect(JSON.stringify(result.steps)).not.toContain('osition')
  })

  it('finds a candidate by its position, checked against its id and name, or by id without one', () => {
    const prefixes = new CandidatePrefixes(8)
    const first = prefixes.entry('tool.a', 'A', 5)
    expect(first.json).toBe('{"id":"tool.a","name":"A","score":')
    expect(prefixes.entry('tool.a', 'A', 5)).toBe(first)
    expect(prefixes.made).toBe(1)
    // Another library's tool at the same place, or the tool renamed: its own, in that place.
    const other = prefixes.entry('tool.b', 'B', 5)
    expect(other.json).toBe('{"id":"tool.b","name":"B","score":')
    expect(prefixes.entry('tool.b', 'B renamed', 5).json).toBe(
      '{"id":"tool.b","name":"B renamed","score":',
    )
    expect([prefixes.made, prefixes.size]).toEqual([3, 1])
    // Without a position (or an unusable one), by id.
    const byId = prefixes.entry('tool.c', 'C')
    for (const position of [undefined, -1, 0.5, 2 ** 40, Number.NaN]) {
      expect(prefixes.entry('tool.c', 'C', position)).toBe(byId)
    }
    expect([prefixes.made, prefixes.size]).toEqual([4, 2])
    // A position past the first page.
    expect(prefixes.entry('far', 'F', 70_000).json).toBe('{"id":"far","name":"F","score":')
    expect(prefixes.entry('far', 'F', 70_000).json).toBe('{"id":"far","name":"F","score":')
    expect([prefixes.made, prefixes.size]).toEqual([5, 3])
  })

  it('writes an answer one byte a character when its characters allow, from pieces stored two', () => {
    // V8's structured clone writes a one-byte string with the tag '"' (0x22) after its 2-byte
    // header, a two-byte one with 'c' (or a padding byte first): how the string is stored.
    const oneByte = (text: string) => {
      const cloned = serialize(text)
      expect([cloned[0], cloned[1] < 0x80]).toEqual([0xff, true])
      return cloned[2] === 0x22
    }
    // The same characters stored two bytes each: a slice of a string holding a CJK character.
    const twoByte = (text: string) => `\u4e00${text}`.slice(1)
    expect(oneByte(twoByte('a description of thirty chars'))).toBe(false)
    const tool: Tool = {
      id: twoByte('two.byte.tool.id'),
      name: twoByte('two_byte_tool_name'),
      description: twoByte('Send a greeting, café style, to a friend.'),
      parameters: {
        type: 'object',
        properties: { [twoByte('recipient_name')]: { type: 'string' } },
      },
    }
    const made = answerOf(
      [
        {
          text: 'send a greeting',
          candidates: [{ id: tool.id, name: tool.name, score: 2.5 }],
          selected: tool.id,
        },
      ],
      {
        tools: [tool],
        components: { ...answerOf([]).components, library: twoByte('a library named two') },
      },
    )
    for (const includeSchemas of [true, false]) {
      const json = selectResponseJson(made, includeSchemas)
      expect(json).toBe(objectPath(made, includeSchemas))
      expect(oneByte(json)).toBe(true)
    }
    // Past Latin-1: the same text, stored as it must be.
    expect(oneByteWhereItCan('a ✓ mark')).toBe('a ✓ mark')
    expect(oneByte(oneByteWhereItCan(twoByte('grüße, twenty characters')))).toBe(true)
  })

  it('keys a cached candidate by id and name, and writes non-finite scores as null', () => {
    const result = (name: string, score: number, whole?: true): SelectToolsResult =>
      answerOf(
        [
          {
            text: 'a step',
            candidates: [{ id: 'same.id', name, score }],
            selected: null,
            ...(whole && { whole }),
          },
        ],
        {
          timings: { planMs: 0, retrieveMs: 0.5, rerankMs: 0, selectMs: -0, totalMs: 1e21 },
          examples: { similarity: 0.25, applied: false },
        },
      )
    for (const [name, score, whole] of [
      ['first name', 1.5, undefined],
      ['renamed', -0, true],
      ['first name', Number.NaN, undefined],
      ['renamed', Number.POSITIVE_INFINITY, true],
      ['renamed', 1e-7, undefined],
    ] as const) {
      const made = result(name, score, whole)
      expect(bodyText(selectResponseJson(made, true))).toBe(objectPath(made, true))
    }
  })

  it('writes numbers as JSON.stringify does: scores in millionths and any other number', () => {
    const values = [0, -0, 1e-6, -1e-6, 5e-7, 1e-7, 0.1, 0.3, 0.1 + 0.2, 1 / 3, 4.35, 8.888515]
    values.push(1e15 / 1e6, 999_999_999.999999, 123_456_789.123456, 2 ** 53, -(2 ** 31), 1e20, 1e21)
    values.push(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)
    // A fixed pseudo-random walk over magnitudes 1e-5 to 1e8, each value also rounded to
    // millionths, thousandths and a whole number (the shapes scores and timings take).
    let seed = 12_345
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
    for (let index = 0; index < 50_000; index++) {
      const value = (random() - 0.3) * 10 ** Math.floor(random() * 14 - 5)
      values.push(value, Math.round(value * 1e6) / 1e6, Math.round(value * 1e3) / 1e3)
      values.push(Math.round(value))
    }
    const wrong = values.filter((value) => numberJson(value) !== JSON.stringify(value))
    expect(wrong).toEqual([])
  })

  it('keeps answering right when its candidate cache is full', () => {
    const count = CANDIDATE_JSON_KEPT + 100
    const candidates = Array.from({ length: count }, (_, index) => ({
      id: `tool.${index}`,
      name: `name ${index}`,
      score: index / 7,
    }))
    const made = answerOf([{ text: 'many', candidates, selected: 'tool.3' }])
    expect(bodyText(selectResponseJson(made, false))).toBe(objectPath(made, false))
    candidates.reverse()
    expect(bodyText(selectResponseJson(made, false))).toBe(objectPath(made, false))
  })

  it('keeps most of its candidates when more come in turn than it holds, and takes in new ones', () => {
    const prefixes = new CandidatePrefixes(64)
    const pass = (from: number, count: number) => {
      const made = prefixes.made
      for (let index = from; index < from + count; index++) {
        const prefix = prefixes.prefix(`tool.${index}`, `name ${index}`)
        expect(prefix).toBe(`{"id":"tool.${index}","name":"name ${index}","score":`)
      }
      return prefixes.made - made
    }
    // 80 candidates in turn, 64 kept: later passes make about the 16 it has no room for (two
    // generations of 32 made all 80 again on every pass).
    expect(pass(0, 80)).toBe(80)
    for (let turn = 0; turn < 20; turn++) expect(pass(0, 80)).toBeLessThanOrEqual(20)
    expect(prefixes.size).toBe(64)
    // Other candidates from now on: one miss in 8 is kept, in the place of the oldest, so the
    // misses of a pass fall by about an eighth each pass.
    const made = Array.from({ length: 40 }, () => pass(1000, 64))
    expect(made[0]).toBe(64)
    expect(made[8]).toBeLessThan(32)
    expect(made.at(-1)).toBe(0)
    expect(prefixes.size).toBe(64)
    // A renamed tool is answered with its new name.
    expect(prefixes.prefix('tool.1000', 'renamed')).toBe(
      '{"id":"tool.1000","name":"renamed","score":',
    )
  })

  it("writes a step's selected id from its candidate's entry, and any other id as JSON.stringify does", () => {
    const prefixes = new CandidatePrefixes(4)
    const entry = prefixes.entry('tool.1', 'one')
    expect(entry.idJson).toBe('"tool.1"')
    expect(prefixes.entry('tool.1', 'one')).toBe(entry)
    // Through the answer: a selected id among the candidates and one that is not (two-byte
    // stored, as in the test above), each as the object's JSON writes it, one byte a character.
    const twoByte = (text: string) => `\u4e00${text}`.slice(1)
    const steps = [
      { text: 'a', candidates: [{ id: twoByte('x.1'), name: 'x', score: 1 }], selected: 'x.1' },
      { text: 'b', candidates: [{ id: 'x.1', name: 'x', score: 1 }], selected: twoByte('y "2"') },
      { text: 'c', candidates: [], selected: null },
    ]
    const answer = answerOf(steps)
    const json = selectResponseJson(answer, false)
    expect(json).toBe(objectPath(answer, false))
    expect(serialize(json)[2]).toBe(0x22)
  })

  it('is what POST /v1/select-tools answers, as application/json with its length', async () => {
    const { app } = await createTestApp()
    for (const includeSchemas of [true, false]) {
      const response = await app.request(
        '/v1/select-tools',
        postJson({ instruction: INSTRUCTIONS[0], includeSchemas, explain: true }),
      )
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/json')
      const body = JSON.parse(await response.text())
      expect(body.tools.map((tool: { id: string }) => tool.id)).toEqual([
        'weather.get_forecast',
        'mail.send_email',
      ])
      expect('parameters' in body.tools[0]).toBe(includeSchemas)
      expect(body.steps[0].candidates[0].features).toBeDefined()
    }
  })
})

/** A library of lines (as a saved index serves it): tools a and b of 4.3 MB, small c. */
function linesLibrary(): ToolLibrary {
  const tools = [
    // About 4.3 MB each: the two are past MAX_ANSWER_TOOL_BYTES together.
    describedTool('a', 300, 14_500, 'Send an email message to a recipient.'),
    describedTool('b', 300, 14_500, 'Book a flight ticket to a city.'),
    { id: 'c', name: 'c', description: 'Send an SMS.', parameters: { type: 'object' } },
  ]
  const lines = tools.map((tool) => `${JSON.stringify(tool)}\n`).join('')
  return ToolLibrary.fromJsonLines('big', Buffer.from(lines))
}

/** An answer of `tools`, each the choice of its own step. */
function answerWith(tools: Tool[]): SelectToolsResult {
  return answerOf(
    tools.map((tool) => ({
      text: tool.description,
      candidates: [{ id: tool.id, name: tool.name, score: 1 }],
      selected: tool.id,
    })),
    { tools },
  )
}

interface Answer {
  tools: Array<{ id?: string; name?: string; parameters?: unknown }>
  toolIds?: Record<string, string>
  warnings?: string[]
}

describe('selectResponseJson: at most MAX_ANSWER_TOOL_BYTES of schemas', () => {
  it('keeps the first tool whole, leaves out the next past the budget, keeps a small one after it', () => {
    const library = linesLibrary()
    const [a, b, c] = ['a', 'b', 'c'].map((id) => library.require(id))
    expect(library.jsonBytes(0) + library.jsonBytes(1)).toBeGreaterThan(MAX_ANSWER_TOOL_BYTES)
    expect(schemasPastBudget([a, b, c])).toEqual([b])
    expect(schemasPastBudget([b, a])).toEqual([a])
    expect(schemasPastBudget([a, c])).toEqual([])
    expect(schemasPastBudget([a])).toEqual([])

    const result = answerWith([a, b, c])
    const text = selectResponseJson(result, true)
    expect(text).toBe(JSON.stringify(selectResponseObject(result, true)))
    const answer = JSON.parse(text) as Answer
    expect(answer.tools.map((tool) => [tool.id, 'parameters' in tool])).toEqual([
      ['a', true],
      ['b', false],
      ['c', true],
    ])
    expect(answer.warnings).toEqual([
      expect.stringMatching(
        /^Schemas left out for 1 tool: "b" \(4,\d{3},\d{3} bytes\)\. An answer holds at most 8,388,608 bytes .* GET \/v1\/libraries\/x\/tools\/<id>/,
      ),
    ])
    expect(text.length).toBeLessThan(MAX_ANSWER_TOOL_BYTES + 10_000)
    // Without schemas nothing is left out and nothing is said.
    const bare = selectResponseJson(result, false)
    expect(bare).toBe(JSON.stringify(selectResponseObject(result, false)))
    expect(JSON.parse(bare)).not.toHaveProperty('warnings')

    // A provider's shape needs the schema: the tool is not in tools nor toolIds.
    for (const format of TOOL_FORMATS.slice(1)) {
      const provider = selectResponseJson(result, true, format)
      expect(provider).toBe(JSON.stringify(selectResponseObject(result, true, format)))
      const parsed = JSON.parse(provider) as Answer
      expect(parsed.tools).toHaveLength(2)
      expect(Object.values(parsed.toolIds!)).toEqual(['a', 'c'])
      expect(parsed.warnings).toHaveLength(1)
    }
  })

  it('keeps the cached JSON of each tool right whichever place it answers in', () => {
    const library = linesLibrary()
    const [a, b, c] = ['a', 'b', 'c'].map((id) => library.require(id))
    const withSchema = (result: SelectToolsResult) =>
      (JSON.parse(selectResponseJson(result, true)) as Answer).tools.map(
        (tool) => `${tool.id}${'parameters' in tool ? '+' : '-'}`,
      )
    // Each answer twice: the second one writes from the per-tool cache.
    for (let pass = 0; pass < 2; pass += 1) {
      expect(withSchema(answerWith([a, b, c]))).toEqual(['a+', 'b-', 'c+'])
      expect(withSchema(answerWith([b]))).toEqual(['b+'])
      expect(withSchema(answerWith([b, a, c]))).toEqual(['b+', 'a-', 'c+'])
      expect(withSchema(answerWith([c, b]))).toEqual(['c+', 'b+'])
    }
  })
})
