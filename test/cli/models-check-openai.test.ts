/**
 * `toolsel models check openai:<model>` asks the endpoint what `toolsel serve` asks at start-up
 * (GET <baseUrl>/models with the key, one shared probe) and says ok, refused, unknown-model,
 * status or unreachable with exit 0 or 1, over real HTTP (a local OpenAI-compatible server).
 * Before, it took `openai:fake` for a directory: "No such directory", exit 2.
 * With --chat it also sends one choice call as serve's selector does: a server whose /models
 * works but whose chat call fails is no longer "ok". Before, `--chat` was an unknown option
 * (exit 2) and such a server passed the check (exit 0, shown below).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/main.ts'
import { deadPort } from '../helpers/dead-port.ts'
import { useKeyEndpoint } from '../helpers/openai-key-endpoint.ts'

const KEY = 'sk-right-key-0123456789'

const endpoint = useKeyEndpoint(KEY)

async function check(spec: string, env: Record<string, string>, json = true, extra: string[] = []) {
  const stdout: string[] = []
  const stderr: string[] = []
  const code = await main(['models', 'check', spec, ...(json ? ['--json'] : []), ...extra], {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
    env,
  })
  const text = stdout.join('')
  return { code, text, stderr: stderr.join(''), report: json && text ? JSON.parse(text) : {} }
}

describe('toolsel models check openai:<model>', () => {
  it('is ok (exit 0) when the endpoint takes the key and lists the model, as serve asks', async () => {
    endpoint.seen.length = 0
    const env = { TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`, TOOLSEL_OPENAI_API_KEY: KEY }
    const { code, text } = await check('openai:fake', env, false)
    expect(code).toBe(0)
    expect(text).toBe(
      `Endpoint: GET ${endpoint.baseUrl}/v1/models\nResult: ok: the endpoint accepts the key and serves "fake" (HTTP 200).\n`,
    )
    expect(endpoint.seen).toEqual([`GET /v1/models Bearer ${KEY}`])
    expect((await check('llm:openai:fake', env)).report).toMatchObject({ ok: true, result: 'ok' })
  })

  it('says refused (exit 1) for a wrong key, without printing the key', async () => {
    const { code, report, text } = await check('openai:fake', {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`,
      TOOLSEL_OPENAI_API_KEY: 'sk-wrong-key',
    })
    expect(code).toBe(1)
    expect(report).toMatchObject({ ok: false, result: 'refused', status: 401 })
    expect(report.message).toMatch(/refuses the API key: HTTP 401 \(.*Incorrect API key provided/)
    expect(text).not.toContain('sk-wrong-key')
  })

  it('says unknown-model (exit 1) for a name the endpoint does not list', async () => {
    const { code, report } = await check('openai:Qwen/Qwen3-8B', {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`,
      TOOLSEL_OPENAI_API_KEY: KEY,
    })
    expect(code).toBe(1)
    expect(report).toMatchObject({ result: 'unknown-model', models: ['fake'] })
    expect(report.message).toMatch(/lists no model "Qwen\/Qwen3-8B" \(it serves "fake"\)/)
  })

  it('says status (exit 1) for an endpoint without /models and unreachable for none', async () => {
    const missing = await check('openai:fake', {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/nomodels/v1`,
      TOOLSEL_OPENAI_API_KEY: KEY,
    })
    expect(missing.code).toBe(1)
    expect(missing.report).toMatchObject({ result: 'status', status: 404 })
    // Before round 42 the message ended at "…its API root (…/v1)?": nothing said that many
    // servers serve no /models, that nothing was checked, nor what checks it.
    expect(missing.report.message).toMatch(
      /answered HTTP 404, .* Nothing was checked: many OpenAI-compatible servers serve no \/models\. Run again with --chat to send one choice call \(a few tokens\), which checks the key and "fake"\.$/,
    )
    // With --chat the chat call is the check; its message does not suggest --chat again.
    const chatted = await check(
      'openai:fake',
      {
        TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/nomodels/v1`,
        TOOLSEL_OPENAI_API_KEY: KEY,
      },
      true,
      ['--chat'],
    )
    expect(chatted.report.message).not.toContain('Run again with --chat')
    const port = await deadPort()
    const down = await check('openai:fake', {
      TOOLSEL_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    })
    expect(down.code).toBe(1)
    expect(down.report).toMatchObject({ result: 'unreachable', status: 0 })
    expect(down.report.message).toMatch(/ECONNREFUSED/)
  })

  it('says unreachable (exit 1), not ok, for a model list still arriving when the time is up', async () => {
    // A real slow server: the 200 and the list's first bytes at once, the rest after 1.5 s, past
    // the check's limit (models.openai.timeoutMs 400 here; 5 s at most). Before round 43 the cut
    // list was read as one of no models: result ok, exit 0, "fake" merely "not confirmed".
    const sockets = new Set<Socket>()
    const server: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"object":"list","data":[{"id":"fa')
      const rest = setTimeout(() => response.end('ke"}]}'), 1_500)
      response.on('close', () => clearTimeout(rest))
    })
    server.on('connection', (socket) => sockets.add(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const env = {
        TOOLSEL_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        TOOLSEL_OPENAI_API_KEY: KEY,
        TOOLSEL_OPENAI_TIMEOUT_MS: '400',
      }
      const slow = await check('openai:fake', env)
      expect(slow.code).toBe(1)
      expect(slow.report).toMatchObject({ ok: false, result: 'unreachable', status: 200 })
      expect(slow.report.message).toBe(
        'the endpoint accepts the key, but its answer (HTTP 200) did not arrive in full within 400 ms, so no model was confirmed. Run again when the server is less busy; the check waits min(models.openai.timeoutMs, 5 s).',
      )
      // The same list in time is ok.
      const patient = await check('openai:fake', { ...env, TOOLSEL_OPENAI_TIMEOUT_MS: '4000' })
      expect(patient.report).toMatchObject({ ok: true, result: 'ok', models: ['fake'] })
      expect(patient.code).toBe(0)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }, 20_000)

  it('says too-large (exit 1), not ok, for a model list over 1 MiB', async () => {
    // Before round 44: "ok: the endpoint accepts the key (HTTP 200); it lists no models, so
    // "fake" is not confirmed.", exit 0, though the list (2.2 MB) holds "fake" or not unread.
    const { code, report } = await check('openai:fake', {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/hugelist/v1`,
      TOOLSEL_OPENAI_API_KEY: KEY,
    })
    expect(code).toBe(1)
    expect(report).toMatchObject({ ok: false, result: 'too-large', status: 200 })
    expect(report.models).toBeUndefined()
    expect(report.message).toBe(
      'the endpoint accepts the key, but its answer (HTTP 200) is over 1,048,576 bytes, so it was not read as a model list, so "fake" was not checked. Run again with --chat to send one choice call (a few tokens), which checks the key and "fake".',
    )
  })

  it('says not-a-list (exit 1), quoting its start, for a 200 that is no model list', async () => {
    // A base URL that is a web UI's root answers its page to any path (and any key). Before
    // round 44 that was "ok … not confirmed", exit 0.
    const page = await check(
      'openai:fake',
      { TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/webpage/v1`, TOOLSEL_OPENAI_API_KEY: KEY },
      false,
    )
    expect(page.code).toBe(1)
    expect(page.text).toBe(
      `Endpoint: GET ${endpoint.baseUrl}/webpage/v1/models
Result: not-a-list: the endpoint answered HTTP 200 with no OpenAI-compatible model list ({"data": [{"id": …}]} expected; it starts "<!DOCTYPE html> <html lang=\\"en\\"> <head> <title>Chat UI</title> </head> <body><di…"), so neither the key nor "fake" was checked. Is models.openai.baseUrl its API root (…/v1)? Run again with --chat to send one choice call (a few tokens), which checks the key and "fake".
`,
    )
    // JSON that is no list of ids: `data` missing, or entries without a string `id`.
    for (const body of ['{"object":"list","models":["fake"]}', '{"data":[{"name":"fake"}]}', '']) {
      const server = createServer((_request, response) => response.end(body))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      try {
        const { port } = server.address() as AddressInfo
        const { code, report } = await check('openai:fake', {
          TOOLSEL_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        })
        expect(code).toBe(1)
        expect(report).toMatchObject({ ok: false, result: 'not-a-list', status: 200 })
        expect(report.message).toContain(`it starts ${JSON.stringify(body)})`)
      } finally {
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      }
    }
  })

  it('refuses (exit 2) a spec without a base URL to ask', async () => {
    const { code, stderr, report } = await check('openai:fake', {})
    expect(code).toBe(2)
    // --json: the failure is also one JSON error line on stdout (README: "--json" errors).
    expect(report.error.code).toBe('INVALID_CONFIG')
    expect(report.error.message).toContain('TOOLSEL_OPENAI_BASE_URL')
    expect(stderr).toContain('TOOLSEL_OPENAI_BASE_URL')
  })
})

describe('toolsel models check openai:<model> --chat', () => {
  const at = (prefix: string, more: Record<string, string> = {}) => ({
    TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}${prefix}/v1`,
    TOOLSEL_OPENAI_API_KEY: KEY,
    // One attempt: a refused call is not retried anyway (4xx), this keeps a failure quick.
    TOOLSEL_OPENAI_MAX_RETRIES: '0',
    ...more,
  })
  const chat = (env: Record<string, string>, json = true) =>
    check('openai:fake', env, json, ['--chat'])

  it('sends one choice call after /models and says chat: ok (exit 0)', async () => {
    endpoint.seen.length = 0
    const { code, text } = await chat(at(''), false)
    expect(code).toBe(0)
    expect(text).toBe(
      `Endpoint: GET ${endpoint.baseUrl}/v1/models\nResult: ok: the endpoint accepts the key and serves "fake" (HTTP 200).\nChat: ok: one choice call (choiceMode json_schema) answered "add".\n`,
    )
    expect(endpoint.seen).toEqual([
      `GET /v1/models Bearer ${KEY}`,
      `POST /v1/chat/completions Bearer ${KEY}`,
    ])
  })

  it('fails (exit 1) where /models works but the server refuses response_format', async () => {
    // Without --chat the check cannot tell: /models lists the model.
    expect((await check('openai:fake', at('/noschema'))).code).toBe(0)
    const { code, report, text } = await chat(at('/noschema'))
    expect(code).toBe(1)
    expect(report).toMatchObject({
      ok: false,
      result: 'ok',
      chat: { result: 'failed', code: 'MODEL_CALL_FAILED', status: 400 },
    })
    expect(report.chat.message).toMatch(
      /choiceMode json_schema\) failed: MODEL_CALL_FAILED \(HTTP 400\)/,
    )
    expect(report.chat.message).toMatch(/'response_format' is not supported/)
    expect(text).not.toContain(KEY)
  })

  it('names sendThinkingSwitch for a 400 on chat_template_kwargs, and is ok with it off', async () => {
    expect((await check('openai:fake', at('/nokwargs'))).code).toBe(0)
    const refused = await chat(at('/nokwargs'))
    expect(refused.code).toBe(1)
    expect(refused.report.chat).toMatchObject({ result: 'failed', status: 400 })
    expect(refused.report.chat.message).toMatch(
      /set models\.openai\.sendThinkingSwitch to false \(TOOLSEL_OPENAI_SEND_THINKING_SWITCH=false\)/,
    )
    const off = await chat(at('/nokwargs', { TOOLSEL_OPENAI_SEND_THINKING_SWITCH: 'false' }))
    expect(off.code).toBe(0)
    expect(off.report).toMatchObject({ ok: true, chat: { result: 'ok' } })
  })

  it('fails (exit 1) for a model that answers prose instead of a choice', async () => {
    expect((await check('openai:fake', at('/garbage'))).code).toBe(0)
    const { code, report } = await chat(at('/garbage'))
    expect(code).toBe(1)
    expect(report.chat).toMatchObject({ result: 'failed', code: 'SELECTION_OUTSIDE_CANDIDATES' })
    expect(report.chat.message).toMatch(/answered "I would use the first tool\.", which is none/)
  })

  it('still sends the chat call when /models is absent (404): the chat decides, exit 0', async () => {
    // Before: "Chat: skipped: the /models check said status." and exit 1 without a call.
    endpoint.seen.length = 0
    const { code, text } = await chat(at('/nomodels'), false)
    expect(text).toBe(
      `Endpoint: GET ${endpoint.baseUrl}/nomodels/v1/models\nResult: status: the endpoint answered HTTP 404, so the key could not be checked (a server without /models answers 404). Is models.openai.baseUrl its API root (…/v1)?\nChat: ok: one choice call (choiceMode json_schema) answered "add". The key and the model work; the server has no /models (HTTP 404).\n`,
    )
    expect(code).toBe(0)
    expect(endpoint.seen).toEqual([
      `GET /nomodels/v1/models Bearer ${KEY}`,
      `POST /nomodels/v1/chat/completions Bearer ${KEY}`,
    ])
    // Without --chat nothing confirms the endpoint: still exit 1.
    expect((await check('openai:fake', at('/nomodels'))).code).toBe(1)
    // A chat that fails there fails the check, with both results in the report.
    const prose = await chat(at('/nomodels/garbage'))
    expect(prose.code).toBe(1)
    expect(prose.report).toMatchObject({ ok: false, result: 'status', status: 404 })
    expect(prose.report.chat).toMatchObject({
      result: 'failed',
      code: 'SELECTION_OUTSIDE_CANDIDATES',
    })
  })

  it('lets the chat decide after a model list too large or none (exit 0 when it works)', async () => {
    for (const prefix of ['/hugelist', '/webpage']) {
      const { code, report } = await chat(at(prefix))
      expect(report.result).toBe(prefix === '/hugelist' ? 'too-large' : 'not-a-list')
      expect(report.message).not.toContain('Run again with --chat')
      expect(report.chat).toMatchObject({ result: 'ok' })
      expect(report.chat.message).toMatch(
        /The key and the model work; GET \/models gave no model list to check them against\.$/,
      )
      expect(report.ok).toBe(true)
      expect(code).toBe(0)
    }
    const prose = await chat(at('/webpage/garbage'))
    expect(prose.code).toBe(1)
    expect(prose.report.chat).toMatchObject({ result: 'failed' })
  })

  it('sends the chat call when /models answers 500 too, but exits 1 for the 500', async () => {
    const { code, report } = await chat(at('/brokenlist'))
    expect(code).toBe(1)
    expect(report).toMatchObject({ ok: false, result: 'status', status: 500 })
    expect(report.chat).toMatchObject({ result: 'ok' })
    expect(report.chat.message).toMatch(/But GET \/models answered HTTP 500, so the check fails\.$/)
  })

  it('scores the choices from top_logprobs with choiceMode logprobs, and fails without them', async () => {
    const logprobs = { TOOLSEL_OPENAI_CHOICE_MODE: 'logprobs' }
    const { code, text } = await chat(at('', logprobs), false)
    expect(text).toContain('Chat: ok: one choice call (choiceMode logprobs) answered "add".\n')
    expect(code).toBe(0)
    // A server that ignores `logprobs` (lists the model, answers text only).
    const ignored = await chat(at('/nologprobs', logprobs))
    expect(ignored.code).toBe(1)
    expect(ignored.report.chat).toMatchObject({ result: 'failed', code: 'MODEL_CALL_FAILED' })
    expect(ignored.report.chat.message).toMatch(
      /\(choiceMode logprobs\) failed: MODEL_CALL_FAILED: openai:fake returned no logprobs/,
    )
  })

  it('sends no chat call when /models fails, and refuses --chat for a directory (exit 2)', async () => {
    endpoint.seen.length = 0
    const refused = await chat(at('', { TOOLSEL_OPENAI_API_KEY: 'sk-wrong-key' }), false)
    expect(refused.code).toBe(1)
    expect(refused.text).toContain('Chat: skipped: the /models check said refused.\n')
    expect(endpoint.seen).toEqual(['GET /v1/models Bearer sk-wrong-key'])
    const directory = await check('.', {}, false, ['--chat'])
    expect(directory.code).toBe(2)
    expect(directory.stderr).toContain('--chat checks an openai:<model>')
  })
})
