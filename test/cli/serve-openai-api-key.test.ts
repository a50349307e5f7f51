/**
 * `toolsel serve` with an `openai:` planner/selector checks the API key once at start-up, over
 * real HTTP: an endpoint that answers 401 stops the start with the status and the endpoint
 * (before, the server started, reported ready, and every request fell back with a warning);
 * the right key starts and the model answers; an endpoint with no `/models` only warns.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const KEY = 'sk-right-key-0123456789'

let endpoint: Server
let baseUrl: string
const seen: string[] = []
beforeAll(async () => {
  // Answers like an OpenAI-compatible server that wants KEY; /nomodels/v1 has no /models.
  endpoint = createServer(async (request, response) => {
    let body = ''
    for await (const chunk of request) body += chunk
    seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? '-'}`)
    const send = (status: number, value: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(value))
    }
    if (request.headers.authorization !== `Bearer ${KEY}`)
      return send(401, { error: { message: 'Incorrect API key provided', type: 'auth' } })
    if (request.url?.endsWith('/models'))
      return request.url.startsWith('/nomodels')
        ? send(404, { error: { message: 'not found' } })
        : send(200, { object: 'list', data: [{ id: 'fake', object: 'model' }] })
    const { messages } = JSON.parse(body) as { messages: Array<{ content: string }> }
    send(200, {
      id: 'x',
      object: 'chat.completion',
      model: 'fake',
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: { role: 'assistant', content: JSON.stringify([messages.at(-1)?.content]) },
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    })
  })
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => endpoint.close(() => resolve())))

let running: RunningServe | undefined
let child: ChildProcess | undefined
afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL')
  child = undefined
  await running?.stop()
  running = undefined
  seen.length = 0
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
            TOOLSEL_OPENAI_BASE_URL: `${baseUrl}/v1`,
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
        `The OpenAI-compatible endpoint of llm:openai:fake refuses the API key: GET ${baseUrl}/v1/models answered HTTP 401`,
      )
      expect(stderr).toContain('TOOLSEL_OPENAI_API_KEY')
      expect(stderr).not.toContain('Ready:')
      expect(seen).toEqual([`GET /v1/models Bearer sk-wrong`])
    },
  )

  it('starts with the right key, and the model plans the requests', async () => {
    running = await startServe(['--planner', 'llm:openai:fake'], {
      env: { TOOLSEL_OPENAI_BASE_URL: `${baseUrl}/v1`, TOOLSEL_OPENAI_API_KEY: KEY },
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
    expect(seen[0]).toBe(`GET /v1/models Bearer ${KEY}`)
  })

  it('starts with a warning when the endpoint has no /models to check the key with', async () => {
    running = await startServe(['--planner', 'llm:openai:fake'], {
      env: { TOOLSEL_OPENAI_BASE_URL: `${baseUrl}/nomodels/v1`, TOOLSEL_OPENAI_API_KEY: KEY },
    })
    expect(running.logs()).toContain(
      `Could not check the API key of the OpenAI-compatible endpoint of llm:openai:fake: GET ${baseUrl}/nomodels/v1/models answered HTTP 404. Starting anyway.`,
    )
  })
})
