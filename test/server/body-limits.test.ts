/**
 * Every /v1 route with a body refuses one over its limit with 413 PAYLOAD_TOO_LARGE and an
 * `{error:{code,message}}` answer, over a real socket, whether the size is announced
 * (Content-Length) or only found while reading (chunked): the query routes by their own limit
 * (MAX_QUERY_BODY_BYTES), the reward routes by theirs (MAX_REWARD_BODY_BYTES), the rest by
 * server.bodyLimitBytes. Each body is judged once, by its route's limit.
 */
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { MAX_QUERY_BODY_BYTES, MAX_REWARD_BODY_BYTES } from '../../src/server/app.ts'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

let served: ListeningApp | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

async function serve(bodyLimitBytes?: number) {
  const server = bodyLimitBytes === undefined ? {} : { bodyLimitBytes }
  const { app } = await createTestApp({ config: { server } })
  served = await listenApp(app.fetch)
  return Number(new URL(served.url).port)
}

interface Answer {
  status: number
  body: { error: { code: string; message: string } }
  /** Body bytes written (chunked) when the answer began to come. */
  sentBeforeAnswer: number
}

/**
 * Sends `method path` with a JSON body of `size` bytes, announced by Content-Length (only the
 * header is sent: the answer must come from it) or chunked in 64 KiB chunks, and reads the
 * answer until the server closes the connection.
 */
function send(
  port: number,
  method: string,
  path: string,
  size: number,
  framing: 'length' | 'chunked',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let received = ''
    let at = 0
    let sentBeforeAnswer = 0
    const socket = connect(port, '127.0.0.1', () => {
      const head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n`
      if (framing === 'length') {
        socket.write(`${head}Content-Length: ${size}\r\n\r\n`)
        return
      }
      socket.write(`${head}Transfer-Encoding: chunked\r\n\r\n`)
      // `{"pad":"xx…x"}`, `size` bytes, in chunks of 64 KiB until the answer comes.
      const body = Buffer.alloc(size, 0x78)
      body.write('{"pad":"')
      body.write('"}', size - 2)
      const more = () => {
        while (at < size && received === '') {
          const part = body.subarray(at, at + 64 * 1024)
          at += part.length
          socket.write(`${part.length.toString(16)}\r\n`)
          socket.write(part)
          if (!socket.write('\r\n')) return void socket.once('drain', more)
        }
        if (at >= size && received === '') socket.write('0\r\n\r\n')
      }
      more()
    })
    socket.on('data', (data) => {
      if (received === '') sentBeforeAnswer = at
      received += data.toString()
    })
    // The server may close while the rest of a refused body is still being written.
    socket.on('error', (error) => (received === '' ? reject(error) : undefined))
    socket.on('close', () => {
      const [headers, body] = received.split('\r\n\r\n')
      resolve({ status: Number(headers.split(' ')[1]), body: JSON.parse(body), sentBeforeAnswer })
    })
  })
}

const MIB = 1024 * 1024
const QUERY_POSTS = [
  '/v1/select-tools',
  '/v1/search-tools',
  '/v1/feedback',
  '/v1/libraries/sample/tools/batch',
]
/** Routes judged by server.bodyLimitBytes (the reward routes too, when it is below theirs). */
const SERVER_LIMITED: Array<[string, string]> = [
  ['PUT', '/v1/libraries/big'],
  ['POST', '/v1/libraries/sample/examples'],
  ['POST', '/v1/snapshots'],
  ['POST', '/v1/rewards/planner'],
  ['POST', '/v1/rewards/selector'],
]

function expectTooLarge(answer: Answer, message: string) {
  expect(answer.status).toBe(413)
  expect(answer.body.error.code).toBe('PAYLOAD_TOO_LARGE')
  expect(answer.body.error.message).toContain(message)
}

describe('bodies over their limit, over a real socket', () => {
  it('413 on every /v1 route with a body, announced or chunked, one byte over', async () => {
    const port = await serve(5 * MIB)
    for (const framing of ['length', 'chunked'] as const) {
      for (const path of QUERY_POSTS) {
        const answer = await send(port, 'POST', path, MAX_QUERY_BODY_BYTES + 1, framing)
        expectTooLarge(answer, `larger than the ${MAX_QUERY_BODY_BYTES}-byte limit of ${path} `)
      }
      for (const [method, path] of SERVER_LIMITED) {
        const answer = await send(port, method, path, 5 * MIB + 1, framing)
        expectTooLarge(answer, `larger than the ${5 * MIB}-byte limit (server.bodyLimitBytes)`)
      }
    }
  })

  it("a query body over server.bodyLimitBytes too is refused by the limit that applies, its route's", async () => {
    const port = await serve(5 * MIB)
    for (const framing of ['length', 'chunked'] as const) {
      const answer = await send(port, 'POST', '/v1/select-tools', 6 * MIB, framing)
      expectTooLarge(
        answer,
        `larger than the ${MAX_QUERY_BODY_BYTES}-byte limit of /v1/select-tools `,
      )
    }
  })

  it('the reward routes by their own limit under the default server.bodyLimitBytes', async () => {
    const port = await serve()
    for (const framing of ['length', 'chunked'] as const) {
      const answer = await send(
        port,
        'POST',
        '/v1/rewards/planner',
        MAX_REWARD_BODY_BYTES + 1,
        framing,
      )
      expectTooLarge(
        answer,
        `larger than the ${MAX_REWARD_BODY_BYTES}-byte limit of /v1/rewards/planner `,
      )
    }
  })

  it("a chunked query body is refused once its route's limit is passed, not read up to server.bodyLimitBytes first", async () => {
    const port = await serve(64 * MIB)
    const answer = await send(port, 'POST', '/v1/select-tools', 48 * MIB, 'chunked')
    expectTooLarge(
      answer,
      `larger than the ${MAX_QUERY_BODY_BYTES}-byte limit of /v1/select-tools `,
    )
    // The 4 MiB read, and what the sockets' buffers hold: 8 MiB here, far from
    // the 48 MiB (under server.bodyLimitBytes) read whole before the route's limit was looked at.
    expect(answer.sentBeforeAnswer).toBeLessThan(24 * MIB)
  })
})
