/**
 * `models.openai.choiceMode: logprobs` end to end: `toolsel select` with an `openai:` selector
 * over real HTTP against an OpenAI-compatible endpoint that answers with
 * `choices[0].logprobs.content[].top_logprobs` (api.openai.com's shape, no constrained decoding):
 * each step's choice is scored from them and selected without a fallback; an endpoint that
 * ignores `logprobs` falls back to top1, saying why. Before, no test sent a logprobs call.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useKeyEndpoint } from '../helpers/openai-key-endpoint.ts'
import { runCli } from './run-cli.ts'

const KEY = 'sk-right-key-0123456789'
const endpoint = useKeyEndpoint(KEY)

const TOOLS = [
  { name: 'get_weather', description: 'Get the current weather forecast for a city' },
  { name: 'send_sms', description: 'Send an SMS text message to a phone number' },
  { name: 'convert_currency', description: 'Convert an amount between two currencies' },
]

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-select-logprobs-'))
  await writeFile(join(dir, 'tools.json'), JSON.stringify(TOOLS))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

interface Result {
  steps: Array<{ candidates: Array<{ id: string }>; selected: string | null }>
  components: { selector: string; fallbacks: Array<Record<string, unknown>> }
}

async function select(prefix: string): Promise<{ code: number; result: Result }> {
  const file = join(dir, 'tools.json')
  const { code, stdout } = await runCli(
    ['select', '--json', '--selector', 'openai:fake', '--library', file, '--index-dir', dir].concat(
      ['--log-level', 'silent', 'check the weather in Oslo and text it to Dan'],
    ),
    {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}${prefix}/v1`,
      TOOLSEL_OPENAI_API_KEY: KEY,
      TOOLSEL_OPENAI_CHOICE_MODE: 'logprobs',
      TOOLSEL_OPENAI_MAX_RETRIES: '0',
    },
  )
  return { code, result: JSON.parse(stdout) as Result }
}

describe('toolsel select with models.openai.choiceMode logprobs', () => {
  it('selects each step’s choice scored from top_logprobs, without a fallback', async () => {
    endpoint.seen.length = 0
    const { code, result } = await select('')
    expect(code).toBe(0)
    expect(result.components.selector).toBe('llm(openai:fake)')
    expect(result.components.fallbacks).toEqual([])
    // The endpoint answers the first candidate, "none" being the runner-up at -5; a step with no
    // candidates asks nothing.
    const asked = result.steps.filter((step) => step.candidates.length > 0)
    expect(asked.length).toBeGreaterThan(0)
    for (const step of asked) expect(step.selected).toBe(step.candidates[0].id)
    expect(endpoint.seen.filter((line) => line.startsWith('POST'))).toHaveLength(asked.length)
  })

  it('falls back to top1 where the endpoint ignores logprobs, saying why', async () => {
    const { code, result } = await select('/nologprobs')
    expect(code).toBe(0)
    expect(result.components.fallbacks.length).toBeGreaterThan(0)
    for (const fallback of result.components.fallbacks) {
      expect(fallback).toMatchObject({
        stage: 'selector',
        from: 'llm(openai:fake)',
        to: 'top1',
        code: 'MODEL_CALL_FAILED',
      })
      expect(String(fallback.message)).toMatch(/returned no logprobs/)
    }
  })
})
