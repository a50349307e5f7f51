/**
 * A real HTTP server on a free port that speaks just enough of the chat-completions API for the
 * OpenAI backend's tests: each request is recorded and answered by the next scripted reply.
 * @module
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach } from 'vitest'

export interface ScriptedReply {
  status?: number
  /** A string is sent as is; anything else as JSON. */
  body?: unknown
  headers?: Record<string, string>
  /** Milliseconds to wait before answering; `Infinity` answers never (the client must give up). */
  delayMs?: number
}

export interface RecordedRequest {
  url: string
  headers: IncomingMessage['headers']
  body: Record<string, unknown>
}

export interface FakeChatServer {
  /** `http://127.0.0.1:<port>/v1`. */
  baseUrl: string
  requests: RecordedRequest[]
  /**
   * Queues replies; when the queue is empty, `completion('ok')` answers. A function is called when
   * its request has arrived (so a test can act at that moment, e.g. abort the client).
   */
  reply(...replies: Array<ScriptedReply | ((request: RecordedRequest) => ScriptedReply)>): void
  /**
   * Forgets the recorded requests and drops unused replies. Call it before each test: a reply left
   * over by a request that never arrived (aborted early) would otherwise answer the next test.
   */
  reset(): void
  close(): Promise<void>
}

/** A chat completion whose message content is `content`. */
export function completion(content: string | null, extra: Record<string, unknown> = {}): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    model: 'qwen3-8b',
    choices: [
      { index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', ...extra },
    ],
    usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
  }
}

export async function startFakeChatServer(): Promise<FakeChatServer> {
  const queue: Array<ScriptedReply | ((request: RecordedRequest) => ScriptedReply)> = []
  const requests: RecordedRequest[] = []
  const server: Server = createServer(async (request, response) => {
    let text = ''
    for await (const chunk of request) text += chunk
    const recorded = {
      url: request.url ?? '',
      headers: request.headers,
      body: JSON.parse(text || '{}'),
    }
    requests.push(recorded)
    const next = queue.shift() ?? { body: completion('ok') }
    const reply = typeof next === 'function' ? next(recorded) : next
    if (reply.delayMs) {
      // Stop waiting as soon as the client has gone: no timer outlives the request.
      await new Promise<void>((resolve) => {
        const timer = reply.delayMs === Infinity ? undefined : setTimeout(resolve, reply.delayMs)
        response.once('close', () => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    if (response.destroyed) return
    response.writeHead(reply.status ?? 200, {
      'content-type': 'application/json',
      ...reply.headers,
    })
    response.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {}))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => queue.push(...replies),
    reset: () => {
      requests.length = 0
      queue.length = 0
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * One for the test file: started before its tests (its fields are set then), reset before each
 * (no reply left over by the last one answers the next), closed after them.
 */
export function useFakeChatServer(): FakeChatServer {
  const server = {} as FakeChatServer
  beforeAll(async () => {
    Object.assign(server, await startFakeChatServer())
  })
  beforeEach(() => server.reset())
  afterAll(() => server.close())
  return server
}
