import { describe, expect, it } from 'vitest'
import type { SelectToolsResult } from '../../src/pipeline.ts'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { TOOL_FORMATS, type ToolFormat } from '../../src/library/provider-tools.ts'
import {
  CANDIDATE_JSON_GENERATION,
  numberJson,
  selectResponseJson,
  selectResponseObject,
} from '../../src/server/select-response.ts'
import { buildIndexedLibrary } from '../../src/store/library-lifecycle.ts'
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

  it('keeps answering right when its candidate cache turns over', () => {
    const count = 2 * CANDIDATE_JSON_GENERATION + 100
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
