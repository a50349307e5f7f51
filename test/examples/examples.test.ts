/**
 * Runs every integration example in examples/ against a live `toolsel serve`, as a user would:
 * `node --import tsx examples/<name>/run.ts` with TOOLSEL_URL set. Each example stops before any
 * language model and exits non-zero when the model would not get the tools toolsel selected.
 */
import { execFile } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const run = promisify(execFile)
const EXAMPLES = ['vercel-ai-sdk', 'openai-agents', 'langchain']
let serve: RunningServe

beforeAll(async () => {
  serve = await startServe([], { savedDemo: true })
}, 90_000)

afterAll(async () => {
  await serve?.stop()
})

async function runExample(name: string) {
  // `toolsel/client` from src/ (the toolsel-source condition), so an edit is tested without a build.
  const args = ['--conditions=toolsel-source', '--import', 'tsx', `examples/${name}/run.ts`]
  return run(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, TOOLSEL_URL: serve.url, OPENAI_API_KEY: '' },
    timeout: 120_000,
  })
}

describe('integration examples against a live toolsel serve', () => {
  it('gives each toolsel integration example a README and a run.ts', async () => {
    for (const name of EXAMPLES) {
      const files = await readdir(new URL(`../../examples/${name}/`, import.meta.url))
      expect(files, name).toEqual(expect.arrayContaining(['README.md', 'run.ts']))
    }
  })

  it('Vercel AI SDK: prepareStep gives the model only the tools toolsel selected', async () => {
    const { stdout } = await runExample('vercel-ai-sdk')
    expect(stdout).toContain(
      'tools the model was offered: weather--get_weather_forecast, mail--send_email',
    )
  }, 120_000)

  it('OpenAI Agents SDK: the agent carries only the tools toolsel selected', async () => {
    const { stdout } = await runExample('openai-agents')
    expect(stdout).toContain('tools the model was offered: food__book_table, sms__send_sms')
    expect(stdout).toContain('final output: done (no model was called)')
  }, 120_000)

  it('LangChain.js: the toolsel retriever feeds bindTools-ready tool definitions', async () => {
    const { stdout } = await runExample('langchain')
    expect(stdout).toContain('retrieved: finance.convert_currency')
    expect(stdout).toContain('tool definitions for bindTools: finance--convert_currency')
  }, 120_000)
})
