import { describe, expect, it } from 'vitest'
import { ToolselError } from '../../../src/errors.ts'
import { argmax, type ChatMessage } from '../../../src/models/language-model.ts'
import {
  OpenAiLanguageModel,
  type OpenAiLanguageModelOptions,
} from '../../../src/models/openai/openai-language-model.ts'
import { MAX_COMPLETION_BYTES } from '../../../src/models/openai/chat-completions-client.ts'
import {
  completion,
  startFakeChatServer,
  useFakeChatServer,
  type ScriptedReply,
} from './fake-chat-server.ts'
import { earlyTimers } from '../../helpers/early-timers.ts'

const ASK: ChatMessage[] = [{ role: 'user', content: 'Which tool gets a weather forecast?' }]
const CHOICES = ['email.send', 'weather.get_forecast', 'none']

const server = useFakeChatServer()

function model(options: Partial<OpenAiLanguageModelOptions> = {}): OpenAiLanguageModel {
  return new OpenAiLanguageModel('qwen3-8b', {
    baseUrl: server.baseUrl,
    apiKey: 'sk-test',
    retryDelayMs: 5,
    ...options,
  })
}

/** The error `promise` rejects with (it must reject). */
async function failure(promise: Promise<unknown>): Promise<ToolselError> {
  try {
    await promise
  } catch (caught) {
    return caught as ToolselError
  }
  throw new Error('expected a rejection')
}

describe('OpenAiLanguageModel.generate', () => {
  it('posts a greedy chat completion and reports text, usage and finish reason', async () => {
    server.reply({ body: completion('["get the forecast"]') })
    const result = await model().generate(ASK, { maxTokens: 64, stop: ['\n\n'] })
    expect(result).toEqual({
      text: '["get the forecast"]',
      usage: { inputTokens: 42, outputTokens: 7 },
      finishReason: 'stop',
    })
    const [request] = server.requests
    expect(request.url).toBe('/v1/chat/completions')
    expect(request.headers.authorization).toBe('Bearer sk-test')
    expect(request.body).toEqual({
      model: 'qwen3-8b',
      messages: ASK,
      max_tokens: 64,
      temperature: 0,
      stop: ['\n\n'],
      chat_template_kwargs: { enable_thinking: false },
    })
  })

  it('sends the thinking switch only when asked to, and maps finish reasons', async () => {
    server.reply({ body: completion('cut', { finish_reason: 'length' }) })
    server.reply({ body: completion('calls', { finish_reason: 'tool_calls' }) })
    const quiet = model({ sendThinkingSwitch: false, apiKey: undefined })
    expect((await quiet.generate(ASK, { maxTokens: 2, thinking: true })).finishReason).toBe(
      'length',
    )
    expect((await model().generate(ASK, { maxTokens: 2, thinking: true })).finishReason).toBe(
      'other',
    )
    expect(server.requests[0].body).not.toHaveProperty('chat_template_kwargs')
    expect(server.requests[0].headers.authorization).toBeUndefined()
    expect(server.requests[1].body.chat_template_kwargs).toEqual({ enable_thinking: true })
  })

  it.each([
    ['invalid JSON', 'upstream says hi', /invalid JSON/],
    ['no choices', { choices: [] }, /not a chat completion \(choices/],
    ['null content', completion(null), /without text content/],
  ])('fails with MODEL_CALL_FAILED keeping the raw body on %s', async (_, body, expected) => {
    server.reply({ body })
    const error = await model()
      .generate(ASK, { maxTokens: 8 })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ToolselError)
    expect(error).toMatchObject({
      code: 'MODEL_CALL_FAILED',
      message: expect.stringMatching(expected),
      details: { raw: typeof body === 'string' ? body : JSON.stringify(body) },
    })
  })

  it.each([
    [
      'a stream of server-sent events',
      'text/event-stream',
      `data: ${JSON.stringify(completion('x'))}\n\ndata: [DONE]\n\n`,
      /invalid JSON \(text\/event-stream: a stream of server-sent events, though toolsel asks for none; point models\.openai\.baseUrl at the server itself, not a proxy that streams every answer\)\.$/,
    ],
    [
      'a web page',
      'text/html; charset=utf-8',
      '<!DOCTYPE html><html><body>Sign in</body></html>',
      /invalid JSON \(text\/html: a web page, not the API; check models\.openai\.baseUrl, .*login page or proxy in front of it\)\.$/,
    ],
    [
      'another content type',
      'text/plain',
      'upstream says hi',
      /invalid JSON \(content-type "text\/plain"\)\.$/,
    ],
  ])('says what an answer that is not JSON is: %s', async (_, type, body, expected) => {
    // Before round 42: "…/chat/completions answered with invalid JSON." for each.
    server.reply({ body, headers: { 'content-type': type } })
    const error = await model()
      .generate(ASK, { maxTokens: 8 })
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({
      code: 'MODEL_CALL_FAILED',
      message: expect.stringMatching(expected),
      details: { raw: body },
    })
  })
})

describe('OpenAiLanguageModel retries and limits', () => {
  it('retries a 500 and then succeeds', async () => {
    server.reply({ status: 500, body: 'overloaded' }, { body: completion('fine') })
    expect((await model().generate(ASK, { maxTokens: 8 })).text).toBe('fine')
    expect(server.requests).toHaveLength(2)
  })

  it('honours Retry-After on 429: the retry comes at least that long after the refusal', async () => {
    // A first call does the client's lazy work (fetch's first request, the code's first run): a
    // timer armed then fires late whatever its time, so a wait that trusted one timer passed this
    // test run alone (round 44, checked). This call warms it; the timed one's wait is then on time.
    server.reply({ body: completion('warm') })
    await model().generate(ASK, { maxTokens: 8 })
    // Each request's arrival, by performance.now(): the refusal was sent after the first
    // arrived, and the retry left at least Retry-After after it came back.
    const arrivals: number[] = []
    const arrived = (reply: ScriptedReply) => () => (arrivals.push(performance.now()), reply)
    server.reply(
      arrived({ status: 429, body: 'slow down', headers: { 'retry-after': '0.2' } }),
      arrived({ body: completion('ok') }),
    )
    // Timers that end early, at a quarter of their time (a Node timer may, by up to ~1 ms): the
    // wait is still 200 ms. (Half of a 50 ms Retry-After and two HTTP turns under load came to
    // 44-50 ms: too close to tell.)
    const undo = earlyTimers(0.25)
    try {
      expect((await model().generate(ASK, { maxTokens: 8 })).text).toBe('ok')
    } finally {
      undo()
    }
    expect(arrivals).toHaveLength(2)
    expect(arrivals[1] - arrivals[0]).toBeGreaterThanOrEqual(200)
  })

  it('gives up after maxRetries with UPSTREAM_UNAVAILABLE and the last raw body', async () => {
    server.reply(...[1, 2, 3].map((attempt) => ({ status: 503, body: `down ${attempt}` })))
    const error = await model({ maxRetries: 2 })
      .generate(ASK, { maxTokens: 8 })
      .catch((caught: unknown) => caught as ToolselError)
    expect(error).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      details: { status: 503, raw: 'down 3' },
    })
    expect(server.requests).toHaveLength(3)
  })

  it('does not retry a 400, and says to check the key on a 401', async () => {
    server.reply({ status: 400, body: '{"error":{"message":"max_tokens too large"}}' })
    await expect(model().generate(ASK, { maxTokens: 8 })).rejects.toMatchObject({
      code: 'MODEL_CALL_FAILED',
      message: expect.stringContaining('HTTP 400: {"error":{"message":"max_tokens too large"}}'),
    })
    expect(server.requests).toHaveLength(1)
    server.reply({ status: 401, body: 'no' })
    await expect(model().generate(ASK, { maxTokens: 8 })).rejects.toThrow(/Check the API key/)
  })

  // Before, neither said what to check: a wrong served-model name (vLLM answers 404) and a server
  // that refuses the thinking switch (api.openai.com: 400) only quoted the answer.
  it('says to check the model name on a 404, and the thinking switch on a 400 naming it', async () => {
    server.reply({
      status: 404,
      body: '{"object":"error","message":"The model `qwen3-8b` does not exist.","type":"NotFoundError","code":404}',
    })
    const missing = model().generate(ASK, { maxTokens: 8 })
    await expect(missing).rejects.toThrow(
      /HTTP 404: .*does not exist\.".* Check the model name \("qwen3-8b": the name the server serves it by; `toolsel models check openai:<model>` lists them\)/,
    )
    server.reply({
      status: 400,
      body: '{"error":{"message":"Unrecognized request argument supplied: chat_template_kwargs"}}',
    })
    await expect(model().generate(ASK, { maxTokens: 8 })).rejects.toThrow(
      /set models\.openai\.sendThinkingSwitch to false \(TOOLSEL_OPENAI_SEND_THINKING_SWITCH=false\)/,
    )
    expect(server.requests).toHaveLength(2)
  })

  it('retries network errors and then reports UPSTREAM_UNAVAILABLE', async () => {
    const closed = await startFakeChatServer()
    await closed.close()
    const unreachable = new OpenAiLanguageModel('m', {
      baseUrl: closed.baseUrl,
      retryDelayMs: 1,
      maxRetries: 1,
    })
    await expect(unreachable.generate(ASK, { maxTokens: 8 })).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: expect.stringContaining('is unreachable'),
    })
  })

  it("hides the base URL's user info and the API key, also where the answer echoes the key", async () => {
    // A 4xx body that quotes the Authorization header it got: the message goes to the log,
    // components.fallbacks and /readyz degraded, so the key must not be in it.
    server.reply((request) => ({
      status: 400,
      body: `{"error":{"message":"bad request with ${request.headers.authorization}"}}`,
    }))
    const echoed = await failure(
      model({ apiKey: 'sk-secret-0123456789' }).generate(ASK, { maxTokens: 8 }),
    )
    expect(echoed.message).toMatch(/HTTP 400: .*bad request with Bearer \*\*\*/)
    expect(JSON.stringify([echoed.message, echoed.details])).not.toContain('sk-secret')
    // fetch refuses a URL with user info and quotes it whole in its error.
    const withUserInfo = new OpenAiLanguageModel('m', {
      baseUrl: server.baseUrl.replace('http://', 'http://alice:pa55word-x@'),
      maxRetries: 0,
    })
    const refused = await failure(withUserInfo.generate(ASK, { maxTokens: 8 }))
    expect(refused.code).toBe('UPSTREAM_UNAVAILABLE')
    expect(refused.message).toContain('http://***@127.0.0.1:')
    expect(JSON.stringify([refused.message, refused.details])).not.toMatch(/alice|pa55word/)
  })

  it('hides an echoed key that a quoted answer would cut, and one the completion itself holds', async () => {
    const key = 'sk-secret-0123456789abcdef'
    // The message quotes the first 300 characters of a 4xx body: the key across that cut was
    // left half there (its first 13 characters), as only the whole key is hidden.
    server.reply((request) => ({
      status: 400,
      body: `${'x'.repeat(280)}${request.headers.authorization}`,
    }))
    const cut = await failure(model({ apiKey: key }).generate(ASK, { maxTokens: 8 }))
    expect(cut.message).toContain('HTTP 400')
    expect(JSON.stringify([cut.message, cut.details])).not.toContain('sk-secret')
    // A completion that echoes the key: its text became plan steps, and the planner's
    // PLAN_UNPARSABLE quoted it whole in components.fallbacks, which every client reads.
    server.reply((request) => ({
      body: completion(`my key is ${request.headers.authorization}`),
    }))
    const echoed = await model({ apiKey: key }).generate(ASK, { maxTokens: 8 })
    expect(echoed.text).toBe('my key is Bearer ***')
    server.reply((request) => ({ body: completion(`${request.headers.authorization}`) }))
    const outside = await failure(
      model({ apiKey: key, choiceMode: 'guided_choice' }).scoreChoices(ASK, CHOICES),
    )
    expect(outside.code).toBe('SELECTION_OUTSIDE_CANDIDATES')
    expect(JSON.stringify([outside.message, outside.details])).not.toContain('sk-secret')
  })

  it('times out a slow attempt with TIMEOUT and does not retry it', async () => {
    // The server never answers. Attempts are counted at the client: under load the request may
    // not even reach the server within 50 ms, which is still a timed-out attempt.
    server.reply({ delayMs: Infinity, body: completion('late') })
    let attempts = 0
    const counting: typeof fetch = (input, init) => {
      attempts++
      return fetch(input, init)
    }
    await expect(
      model({ timeoutMs: 50, fetch: counting }).generate(ASK, { maxTokens: 8 }),
    ).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: expect.stringContaining('did not answer within 50 ms'),
    })
    expect(attempts).toBe(1)
  })

  it("rejects with ABORTED on abort, or with the caller's TIMEOUT reason", async () => {
    // Each abort comes once the server has the request (a fixed 30 ms timer could fire before the
    // request was sent, leaving its reply queued for the next test), and the reply never comes.
    const aborted = new AbortController()
    const timed = new AbortController()
    server.reply(
      () => {
        aborted.abort()
        return { delayMs: Infinity }
      },
      () => {
        timed.abort(new ToolselError('TIMEOUT', 'Request took over 30 ms.'))
        return { delayMs: Infinity }
      },
    )
    await expect(
      model().generate(ASK, { maxTokens: 8, signal: aborted.signal }),
    ).rejects.toMatchObject({
      code: 'ABORTED',
    })
    await expect(
      model().generate(ASK, { maxTokens: 8, signal: timed.signal }),
    ).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: 'Request took over 30 ms.',
    })
  })
})

describe('OpenAiLanguageModel.scoreChoices', () => {
  it('constrains the answer with a JSON schema enum by default', async () => {
    server.reply({ body: completion('{"answer": "weather.get_forecast"}') })
    const { scores, usage, raw } = await model().scoreChoices(ASK, CHOICES)
    expect(scores).toEqual([-Infinity, 0, -Infinity])
    expect(usage).toEqual({ inputTokens: 42, outputTokens: 7 })
    expect(raw).toBe('{"answer": "weather.get_forecast"}')
    const { body } = server.requests[0]
    expect(body).toMatchObject({
      temperature: 0,
      chat_template_kwargs: { enable_thinking: false },
      response_format: {
        type: 'json_schema',
        json_schema: {
          schema: { properties: { answer: { enum: CHOICES } }, required: ['answer'] },
        },
      },
    })
  })

  it('uses guided_choice or structured_outputs for vLLM', async () => {
    server.reply({ body: completion('none') }, { body: completion('email.send') })
    expect(
      (await model({ choiceMode: 'guided_choice' }).scoreChoices(ASK, CHOICES)).scores,
    ).toEqual([-Infinity, -Infinity, 0])
    expect(
      argmax((await model({ choiceMode: 'structured_outputs' }).scoreChoices(ASK, CHOICES)).scores),
    ).toBe(0)
    expect(server.requests[0].body.guided_choice).toEqual(CHOICES)
    expect(server.requests[1].body.structured_outputs).toEqual({ choice: CHOICES })
  })

  it('fails with SELECTION_OUTSIDE_CANDIDATES, keeping the raw answer, when the server ignored the constraint', async () => {
    server.reply({ body: completion('I would use the weather API.') })
    const error = await model({ choiceMode: 'guided_choice' })
      .scoreChoices(ASK, CHOICES)
      .catch((caught: unknown) => caught as ToolselError)
    expect(error).toMatchObject({
      code: 'SELECTION_OUTSIDE_CANDIDATES',
      message: expect.stringMatching(
        /answered "I would use the weather API\.", which is none of the 3/,
      ),
      details: { raw: 'I would use the weather API.', choices: CHOICES },
    })
  })

  it('scores every choice from top_logprobs in logprobs mode', async () => {
    const top = (entries: Array<[string, number]>) =>
      entries.map(([token, logprob]) => ({ token, logprob }))
    server.reply({
      body: completion('weather.get_forecast', {
        logprobs: {
          content: [
            {
              token: 'weather',
              logprob: -0.1,
              top_logprobs: top([
                ['weather', -0.1],
                ['email', -2.5],
                ['none', -4],
              ]),
            },
            {
              token: '.get',
              logprob: -0.05,
              top_logprobs: top([
                ['.get', -0.05],
                ['.send', -3.2],
              ]),
            },
            {
              token: '_fore',
              logprob: -0.2,
              top_logprobs: top([
                ['_fore', -0.2],
                ['_current', -1.9],
              ]),
            },
            { token: 'cast', logprob: -0.01, top_logprobs: top([['cast', -0.01]]) },
          ],
        },
      }),
    })
    const { scores } = await model({ choiceMode: 'logprobs', topLogprobs: 5 }).scoreChoices(ASK, [
      ...CHOICES,
      'weather.get_current',
    ])
    expect(scores[1]).toBeCloseTo(-0.36, 6)
    expect(scores[0]).toBeCloseTo(-2.5, 6)
    expect(scores[2]).toBeCloseTo(-4, 6)
    expect(scores[3]).toBeCloseTo(-0.1 - 0.05 - 1.9, 6)
    expect(server.requests[0].body).toMatchObject({ logprobs: true, top_logprobs: 5 })
  })

  it('fails with MODEL_CALL_FAILED when logprobs mode gets no logprobs', async () => {
    server.reply({ body: completion('weather.get_forecast') })
    await expect(
      model({ choiceMode: 'logprobs' }).scoreChoices(ASK, CHOICES),
    ).rejects.toMatchObject({
      code: 'MODEL_CALL_FAILED',
      message: expect.stringContaining('returned no logprobs'),
    })
  })
})

describe('OpenAiLanguageModel answer size', () => {
  // A real server whose answer never ends (64 KiB chunks while the client reads), as an endpoint
  // a tricked-into config names could send; counted so the test sees the client stopped reading.
  async function endlessServer(): Promise<{
    baseUrl: string
    sent: () => number
    close: () => Promise<void>
  }> {
    let sent = 0
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const sockets = new Set<import('node:net').Socket>()
    const http = await import('node:http')
    const endless = http.createServer((request, response) => {
      request.resume()
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"id":"')
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length
        if (!response.destroyed) response.once('drain', pump)
      }
      pump()
    })
    endless.on('connection', (socket) => sockets.add(socket))
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve))
    const { port } = endless.address() as import('node:net').AddressInfo
    return {
      baseUrl: `http://127.0.0.1:${port}/v1`,
      sent: () => sent,
      close: () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy()
          endless.close(() => resolve())
        }),
    }
  }

  it('stops reading an answer past MAX_COMPLETION_BYTES: MODEL_CALL_FAILED, not retried, not a timeout', async () => {
    const endless = await endlessServer()
    try {
      let attempts = 0
      const counting: typeof fetch = (input, init) => {
        attempts++
        return fetch(input, init)
      }
      const error = await new OpenAiLanguageModel('m', {
        baseUrl: endless.baseUrl,
        timeoutMs: 60_000,
        maxRetries: 2,
        retryDelayMs: 1,
        fetch: counting,
      })
        .generate(ASK, { maxTokens: 8 })
        .then(
          () => undefined,
          (caught: unknown) => caught as ToolselError,
        )
      // Before: the whole answer was read (`response.text()`), so this ended only at the timeout.
      expect(error).toBeInstanceOf(ToolselError)
      if (!error) return
      expect(error.code).toBe('MODEL_CALL_FAILED')
      expect(error.message).toMatch(/with more than 8,388,608 bytes; .*the rest was not read/)
      expect(error.details).toMatchObject({ status: 200 })
      expect(String((error.details as { raw: string }).raw).length).toBeLessThanOrEqual(8_000)
      expect(attempts).toBe(1)
      // The server could write ahead into socket buffers, but not far past the bound.
      expect(endless.sent()).toBeLessThan(MAX_COMPLETION_BYTES + 16 * 1024 * 1024)
    } finally {
      await endless.close()
    }
  }, 60_000)
})
