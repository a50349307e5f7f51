/**
 * A local OpenAI-compatible endpoint over real HTTP that wants one API key, for the tests of what
 * toolsel does with a key (serve's start-up check, `models check openai:`, a key revoked while
 * serving): 401 for any other key (or all while `revoked`); `GET …/models` lists the model
 * "fake" (404 under `/nomodels`, a server without a list; 500 under `/brokenlist`; 2.2 MB under
 * `/hugelist`; a web page under `/webpage`); a chat completion answers a JSON
 * schema's first choice (the selector) or the last message as the one step of a plan. Servers
 * whose chat calls fail while `/models` works: under `/noschema` a call with `response_format` is
 * refused (400), under `/nokwargs` one with `chat_template_kwargs` (400, as api.openai.com), and
 * under `/garbage` every call answers prose instead of JSON (anywhere, a call of the model
 * "prose" does). Prefixes combine
 * (`/nomodels/garbage/v1`). A call with `logprobs: true` (choiceMode logprobs: no constraint)
 * answers the first candidate's id of the selector's prompt with `choices[0].logprobs.content`,
 * as api.openai.com shapes it (each token with `bytes` and `top_logprobs`, the first listing "none"
 * as the runner-up); under `/nologprobs` it answers without `logprobs`, as a server that ignores
 * the parameter.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll } from 'vitest'

export interface KeyEndpoint {
  /** `http://127.0.0.1:<port>` (append `/v1`, or `/nomodels/v1`). */
  baseUrl: string
  /** `<method> <url> <authorization or ->` of every request so far. */
  seen: string[]
  /** While true every request is refused (401), as after the key was revoked. */
  revoked: boolean
  close(): Promise<void>
}

interface ChatBody {
  model?: string
  logprobs?: boolean
  top_logprobs?: number
  messages: Array<{ content: string }>
  chat_template_kwargs?: unknown
  response_format?: { json_schema: { schema: { properties: { answer: { enum: string[] } } } } }
}

/** What `/webpage` serves at `/models`: a web UI's page, as a base URL that is no API root gets. */
export const WEB_PAGE =
  '<!DOCTYPE html>\n<html lang="en">\n  <head>\n    <title>Chat UI</title>\n  </head>\n  <body><div id="app"></div></body>\n</html>\n'

/**
 * What `/hugelist` lists: "fake" and 12,000 more models with long descriptions, 2.2 MB as JSON
 * (a hosted router lists hundreds with prices and descriptions), over the 1 MiB the check reads.
 */
const HUGE_LIST = [
  { id: 'fake', object: 'model' },
  ...Array.from({ length: 12_000 }, (_, index) => ({
    id: `vendor/model-${index}`,
    object: 'model',
    description: `Model ${index} of the catalogue, listed with its prices and limits.`.repeat(2),
  })),
]

/** One for the test file: started before its tests (`baseUrl` is set then), closed after them. */
export function useKeyEndpoint(key: string): KeyEndpoint {
  let server: Server | undefined
  const endpoint: KeyEndpoint = {
    baseUrl: '',
    seen: [],
    revoked: false,
    close: () =>
      new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
  }
  beforeAll(async () => {
    server = createServer(async (request, response) => {
      let body = ''
      for await (const chunk of request) body += chunk
      endpoint.seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? '-'}`)
      const send = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(value))
      }
      if (endpoint.revoked || request.headers.authorization !== `Bearer ${key}`)
        return send(401, { error: { message: 'Incorrect API key provided', type: 'auth' } })
      // The path segments before `/v1` say how the server misbehaves (`/nomodels/garbage/v1`).
      const url = request.url ?? ''
      const under = new Set(url.slice(0, url.indexOf('/v1')).split('/'))
      if (url.endsWith('/models')) {
        if (under.has('webpage')) {
          response.writeHead(200, { 'content-type': 'text/html' })
          return response.end(WEB_PAGE)
        }
        return under.has('nomodels')
          ? send(404, { error: { message: 'not found' } })
          : under.has('brokenlist')
            ? send(500, { error: { message: 'internal error' } })
            : under.has('hugelist')
              ? send(200, { object: 'list', data: HUGE_LIST })
              : send(200, { object: 'list', data: [{ id: 'fake', object: 'model' }] })
      }
      const parsed = JSON.parse(body) as ChatBody
      if (under.has('noschema') && parsed.response_format)
        return send(400, {
          error: { message: "'response_format' is not supported", type: 'invalid_request_error' },
        })
      if (under.has('nokwargs') && parsed.chat_template_kwargs)
        return send(400, {
          error: {
            message: 'Unrecognized request argument supplied: chat_template_kwargs',
            type: 'invalid_request_error',
          },
        })
      const choices = parsed.response_format?.json_schema.schema.properties.answer.enum
      const content =
        under.has('garbage') || parsed.model === 'prose'
          ? 'I would use the first tool.'
          : choices
            ? JSON.stringify({ answer: choices[0] })
            : JSON.stringify([parsed.messages.at(-1)?.content])
      if (parsed.logprobs === true) {
        const first = /\nCandidates:\n([^:\n]+):/.exec(parsed.messages.at(-1)?.content ?? '')
        const answer = under.has('garbage') ? content : (first?.[1] ?? 'none')
        return send(200, {
          id: 'x',
          object: 'chat.completion',
          model: 'fake',
          choices: [
            {
              index: 0,
              finish_reason: 'stop',
              message: { role: 'assistant', content: answer },
              logprobs: under.has('nologprobs')
                ? null
                : { content: tokenLogprobs(answer, parsed.top_logprobs ?? 0), refusal: null },
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        })
      }
      send(200, {
        id: 'x',
        object: 'chat.completion',
        model: 'fake',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      })
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    endpoint.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => endpoint.close())
  return endpoint
}

/**
 * `text` as OpenAI's `logprobs.content`: tokens of up to 3 characters, each likely (-0.01), with
 * `top` alternatives at most (itself first; at the first token "none" too, far less likely).
 */
function tokenLogprobs(text: string, top: number) {
  const entry = (token: string, logprob: number) => ({
    token,
    logprob,
    bytes: [...Buffer.from(token)],
  })
  return (text.match(/[\s\S]{1,3}/g) ?? []).map((token, index) => ({
    ...entry(token, -0.01),
    top_logprobs: [entry(token, -0.01), ...(index === 0 ? [entry('none', -5)] : [])].slice(0, top),
  }))
}
