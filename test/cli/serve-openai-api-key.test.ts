/**
 * `toolsel serve` with an `openai:` planner/selector checks the API key once at start-up, over
 * real HTTP: an endpoint that answers 401 stops the start with the status and the endpoint
 * (before, the server started, reported ready, and every request fell back with a warning);
 * the right key starts and the model answers; an endpoint with no `/models` only warns.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { useKeyEndpoint } from '../helpers/openai-key-endpoint.ts'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const KEY = 'sk-right-key-0123456789'

const endpoint = useKeyEndpoint(KEY)

let running: RunningServe | undefined
let child: ChildProcess | undefined
afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL')
  child = undefined
  await running?.stop()
  running = undefined
  endpoint.seen.length = 0
})

describe('toolsel serve with an OpenAI-compatible planner', () => {
  // With --workers 2 the primary checks once before forking: before, each worker checked (two
  // GETs), printed the error, and the server exited 1 as for any worker failing its first start.
  it.each([[[]], [['--workers', '2']]])(
    'refuses to start when the endpoint refuses the key, naming the status and the endpoint (%j)',
    async (extra: string[]) => {
      child = spawn(
        process.execPath,
        ['bin/toolsel.mjs', 'serve', '--port', '0', '--planner', 'llm:openai:fake', ...extra],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            TOOLSEL_LIBRARY: '',
            TOOLSEL_PORT: '',
            TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`,
            TOOLSEL_OPENAI_API_KEY: 'sk-wrong',
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      )
      let stderr = ''
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const [code] = await once(child, 'exit')
      expect(code).toBe(2)
      expect(stderr).toContain('error [INVALID_CONFIG]')
      expect(stderr).toContain(
        `The OpenAI-compatible endpoint of llm:openai:fake refuses the API key: GET ${endpoint.baseUrl}/v1/models answered HTTP 401`,
      )
      expect(stderr).toContain('TOOLSEL_OPENAI_API_KEY')
      expect(stderr).not.toContain('Ready:')
      expect(endpoint.seen).toEqual([`GET /v1/models Bearer sk-wrong`])
    },
  )

  it('starts with the right key, and the model plans the requests', async () => {
    running = await startServe(['--planner', 'llm:openai:fake'], {
      savedDemo: true,
      env: { TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`, TOOLSEL_OPENAI_API_KEY: KEY },
    })
    const response = await fetch(`${running.url}/v1/select-tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instruction: 'send an email to Ann' }),
    })
    expect(response.status).toBe(200)
    const body = (await response.json()) as {
      components: { planner: string; fallbacks: unknown[] }
    }
    expect(body.components).toMatchObject({ planner: 'llm(openai:fake)', fallbacks: [] })
    expect(endpoint.seen[0]).toBe(`GET /v1/models Bearer ${KEY}`)
  })

  // Before, a served-model name the endpoint does not know started silently; every call then
  // answered 404 and fell back.
  it('starts with a warning when the endpoint does not list the configured model', async () => {
    running = await startServe(['--planner', 'llm:openai:Qwen/Qwen3-8B'], {
      savedDemo: true,
      env: { TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`, TOOLSEL_OPENAI_API_KEY: KEY },
    })
    expect(running.logs()).toContain(
      `llm:openai:Qwen/Qwen3-8B: GET ${endpoint.baseUrl}/v1/models lists no model "Qwen/Qwen3-8B" (it serves "fake"): its calls would answer 404 and fall back.`,
    )
  })

  it('starts with a warning when the endpoint has no /models to check the key with', async () => {
    running = await startServe(['--planner', 'llm:openai:fake'], {
      savedDemo: true,
      env: {
        TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/nomodels/v1`,
        TOOLSEL_OPENAI_API_KEY: KEY,
      },
    })
    expect(running.logs()).toContain(
      `Could not check the API key of the OpenAI-compatible endpoint of llm:openai:fake: GET ${endpoint.baseUrl}/nomodels/v1/models answered HTTP 404. Starting anyway. Many OpenAI-compatible servers serve no /models: \`toolsel models check llm:openai:fake --chat\` checks the key and the model with one chat call (a few tokens).`,
    )
  })
})
