/**
 * serve's start-up check of an `openai:` endpoint's API key (`checkOpenAiApiKey`) against a real
 * HTTP endpoint whose `/models` answer never ends (the endpoint is whatever `models.openai.baseUrl`
 * names: a config a user was tricked into loading can name one). Before, the check read the whole
 * body and then kept 200 characters: memory grew with the body until the time limit (hundreds of
 * MiB in 5 s here), and the status was lost to that limit (a 401 warned "no answer" and the server
 * started; a 200 warned too). Now it reads a refusal's first characters only and no other body.
 */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from '../../../src/log.ts'
import { checkOpenAiApiKey } from '../../../src/models/openai/check-api-key.ts'

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

/** An endpoint on a free port answering every request with `handler`: its base URL (`…/v1`). */
async function startEndpoint(handler: RequestListener): Promise<string> {
  server = createServer(handler)
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return `http://127.0.0.1:${port}/v1`
}

/** An endpoint answering `status` and then 1 MiB chunks of `'denied '` for as long as it is read. */
async function endlessEndpoint(status: number): Promise<{ baseUrl: string; sent: () => number }> {
  let sent = 0
  const chunk = Buffer.from('denied '.repeat(150_000))
  const baseUrl = await startEndpoint((_request, response) => {
    response.writeHead(status, { 'content-type': 'text/plain' })
    const pump = () => {
      while (!response.destroyed) {
        sent += chunk.length
        if (!response.write(chunk)) return void response.once('drain', pump)
      }
    }
    pump()
  })
  return { baseUrl, sent: () => sent }
}

/**
 * `checkOpenAiApiKey` of `baseUrl` for the one user `openai:gpt-test`, with `apiKey` (default
 * `sk-wrong`) and `timeoutMs` (default 3 s); its warnings pushed to `warnings`, none logged without.
 */
function check(
  baseUrl: string,
  options: { warnings?: string[]; apiKey?: string; timeoutMs?: number } = {},
) {
  const { warnings } = options
  return checkOpenAiApiKey({
    baseUrl,
    apiKey: options.apiKey ?? 'sk-wrong',
    timeoutMs: options.timeoutMs ?? 3_000,
    users: ['openai:gpt-test'],
    logger: warnings ? createLogger('warn', (line) => warnings.push(line)) : createLogger('silent'),
  })
}

describe('checkOpenAiApiKey against an endless answer', () => {
  it('refuses a 401 with the start of its body, not reading the rest', async () => {
    const endpoint = await endlessEndpoint(401)
    const warnings: string[] = []
    const error = await check(endpoint.baseUrl, { warnings }).catch((caught: unknown) => caught)
    expect((error as { code?: string }).code).toBe('INVALID_CONFIG')
    expect((error as Error).message).toMatch(
      /refuses the API key: GET http:\/\/127\.0\.0\.1:\d+\/v1\/models answered HTTP 401 \(denied denied/,
    )
    expect((error as Error).message.length).toBeLessThan(600)
    expect(warnings).toEqual([])
    // What the server could write before the client stopped reading: socket buffers, not the body.
    expect(endpoint.sent()).toBeLessThan(64 * 2 ** 20)
  }, 20_000)

  it('answers a 200 after its first MiB, warning that no model name was checked', async () => {
    const endpoint = await endlessEndpoint(200)
    const warnings: string[] = []
    expect((await check(endpoint.baseUrl, { warnings })).status).toBe(200)
    // Before round 44 no warning: the unread list passed as one that names no model.
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /Could not check the model names of openai:gpt-test: GET http:\/\/127\.0\.0\.1:\d+\/v1\/models: its answer \(HTTP 200\) is over 1,048,576 bytes, so it was not read as a model list\. Starting anyway\./,
    )
    expect(endpoint.sent()).toBeLessThan(64 * 2 ** 20)
  }, 20_000)
})

describe('checkOpenAiApiKey against a 200 that is no model list', () => {
  it('warns, quoting its start, and starts with nothing failing', async () => {
    // Before round 44 no warning: an HTML page passed as a list that names no model.
    const baseUrl = await startEndpoint((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end('<!doctype html>\n<title>\u001b[31mLogin</title>')
    })
    const warnings: string[] = []
    const { status, failing } = await check(baseUrl, { warnings, apiKey: 'sk-key-0123' })
    expect(status).toBe(200)
    expect(failing).toEqual([])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(
      `Could not check the model names of openai:gpt-test: GET ${baseUrl}/models answered HTTP 200 with no OpenAI-compatible model list (it starts "<!doctype html> <title>\\u001b[31mLogin</title>"). Starting anyway.`,
    )
  })
})

describe('checkOpenAiApiKey against a 200 that echoes the key across its cut', () => {
  it('hides the key before it cuts the quote (hard41)', async () => {
    // The quote keeps 80 characters: before, cut first, the key's first 20 characters stayed.
    const apiKey = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
    const body = `${'x'.repeat(60)}${apiKey}`
    const baseUrl = await startEndpoint((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.end(body)
    })
    const warnings: string[] = []
    await check(baseUrl, { warnings, apiKey })
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`(it starts "${'x'.repeat(60)}***")`)
    expect(warnings[0]).not.toContain(apiKey.slice(0, 8))
  })
})

describe('checkOpenAiApiKey against a model list still arriving when its time is up', () => {
  it('warns that it could not check, and counts the users failing, as for no answer at all', async () => {
    // Before round 43 the cut list was read as one of no models: no warning, nothing failing.
    const baseUrl = await startEndpoint((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"data":[{"id":"gpt-te')
    })
    const warnings: string[] = []
    const { status, failing } = await check(baseUrl, {
      warnings,
      apiKey: 'sk-key-0123',
      timeoutMs: 300,
    })
    expect(status).toBe(0)
    expect(warnings.join('\n')).toContain(
      'its answer (HTTP 200) did not arrive in full within 300 ms, so no model was confirmed. Starting anyway',
    )
    expect(failing).toEqual([
      {
        user: 'openai:gpt-test',
        code: 'UPSTREAM_UNAVAILABLE',
        message: `The start-up check got no full answer from the OpenAI-compatible endpoint: GET ${baseUrl}/models: its answer (HTTP 200) did not arrive in full within 300 ms, so no model was confirmed.`,
      },
    ])
  })
})

describe('checkOpenAiApiKey keeps the credentials out of what it says', () => {
  it('shows a base URL’s user info and query as ***, whatever fetch quotes', async () => {
    const warnings: string[] = []
    const { status } = await check(
      'http://proxy-user:hunter2-secret@127.0.0.1:9/v1?token=tok-secret-1',
      { warnings, apiKey: 'sk-right-key-0123', timeoutMs: 2_000 },
    )
    expect(status).toBe(0)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('GET http://***@127.0.0.1:9/v1?***:')
    for (const secret of ['proxy-user', 'hunter2-secret', 'tok-secret-1', 'sk-right-key-0123'])
      expect(warnings[0]).not.toContain(secret)
  })

  it('shows no part of an echoed key across the end of the refusal it quotes', async () => {
    // The refusal's first 200 characters are quoted: a key across that cut was left half there.
    const baseUrl = await startEndpoint((_request, response) => {
      response.writeHead(401, { 'content-type': 'text/plain' })
      response.end(`${'x'.repeat(190)} sk-wrong-key-0123456789`)
    })
    const error = await check(baseUrl, {
      apiKey: 'sk-wrong-key-0123456789',
      timeoutMs: 2_000,
    }).catch((caught: unknown) => caught as Error)
    expect((error as { code?: string }).code).toBe('INVALID_CONFIG')
    expect((error as Error).message).toContain('x ***')
    expect((error as Error).message).not.toContain('sk-wrong')
  })

  it('shows the API key an endpoint’s refusal echoes as ***', async () => {
    const baseUrl = await startEndpoint((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' })
      response.end('{"error":{"message":"Incorrect API key provided: sk-wrong-key-0123"}}')
    })
    const error = await check(baseUrl, { apiKey: 'sk-wrong-key-0123', timeoutMs: 2_000 }).catch(
      (caught: unknown) => caught as Error,
    )
    expect((error as { code?: string }).code).toBe('INVALID_CONFIG')
    expect((error as Error).message).toContain('Incorrect API key provided: ***')
    expect((error as Error).message).not.toContain('sk-wrong-key-0123')
  })
})

describe('checkOpenAiApiKey quotes the model ids an endpoint lists, cut', () => {
  // A hostile endpoint's /models (up to 1 MiB is read) lists ids of 300,000 characters: before,
  // each was quoted whole, so the start-up warning was one log line of 900,000+ characters
  // (and `models check`'s message, and the check's `/readyz` message before it was cut).
  it('cuts each listed id at 200 characters and says how long it was', async () => {
    const long = 'm'.repeat(300_000)
    const ids = [
      `${long}1`,
      `${long}2`,
      `${long}3`,
      ...Array.from({ length: 9 }, (_, i) => `m${i}`),
    ]
    const baseUrl = await startEndpoint((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ object: 'list', data: ids.map((id) => ({ id })) }))
    })
    const warnings: string[] = []
    const { failing } = await check(baseUrl, { warnings, apiKey: 'sk-right-key-0123' })
    expect(warnings).toHaveLength(1)
    expect(warnings[0].length).toBeLessThan(2_000)
    expect(warnings[0]).toContain(`"${'m'.repeat(200)}…" (300,001 characters), `)
    expect(warnings[0]).toContain('"m6" and 2 more): its calls would answer 404')
    expect(failing).toHaveLength(1)
    expect(failing[0].message.length).toBeLessThan(2_000)
    expect(failing[0].message).toContain('(300,001 characters)')
  })
})
