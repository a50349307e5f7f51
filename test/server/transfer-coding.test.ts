/**
 * A request body sent with a transfer coding besides `chunked` (`gzip, chunked`): Node's parser
 * reads it as chunked and hands on the still-coded bytes. Answered 501 NOT_IMPLEMENTED before
 * its body is read or any route runs, on every route (`/mcp` included), over a real socket.
 */
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { isPlainChunked } from '../../src/server/middleware/transfer-coding.ts'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

let served: ListeningApp | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

async function serve() {
  const { app } = await createTestApp({ config: { mcp: { http: true } } })
  served = await listenApp(app.fetch)
  return Number(new URL(served.url).port)
}

interface Answer {
  status: number
  headers: string
  body: any
}

/**
 * Writes `head` (request line and headers, without the blank line) and `chunks` as chunked
 * framing to a fresh connection, and reads the answer until the server closes the connection.
 * `end: false` leaves the body unfinished (no last chunk): the answer must come without it.
 */
function send(port: number, head: string, chunks: Buffer[], end = true): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`${head}\r\nHost: 127.0.0.1\r\n\r\n`)
      for (const chunk of chunks) {
        socket.write(`${chunk.length.toString(16)}\r\n`)
        socket.write(chunk)
        socket.write('\r\n')
      }
      if (end) socket.write('0\r\n\r\n')
    })
    let received = ''
    socket.on('data', (data) => (received += data.toString()))
    socket.on('error', reject)
    socket.on('close', () => {
      const [headers, body] = received.split('\r\n\r\n')
      resolve({
        status: Number(headers.split(' ')[1]),
        headers: headers.toLowerCase(),
        body: body ? JSON.parse(body) : undefined,
      })
    })
  })
}

const selectBody = Buffer.from(JSON.stringify({ instruction: 'send an email' }))
const toolsBody = Buffer.from(
  JSON.stringify({
    tools: [{ name: 'ping', description: 'Ping a host.', inputSchema: { type: 'object' } }],
  }),
)
const mcpBody = Buffer.from(
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
)
const MCP_HEADERS =
  'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-03-26'

describe('transfer codings other than chunked', () => {
  it('tells plain chunked from every other list of codings', () => {
    for (const plain of ['chunked', 'Chunked', ' chunked ', 'chunked,', ', chunked'])
      expect(isPlainChunked(plain), plain).toBe(true)
    for (const other of [
      'gzip, chunked',
      'chunked, chunked',
      'identity, chunked',
      'x, chunked',
      '',
    ])
      expect(isPlainChunked(other), other).toBe(false)
  })

  it('answers 501 NOT_IMPLEMENTED to gzip, chunked on the query, upload and MCP routes', async () => {
    const port = await serve()
    const requests: Array<[string, string, Buffer]> = [
      ['POST /v1/select-tools', 'Content-Type: application/json', selectBody],
      ['PUT /v1/libraries/zipped', 'Content-Type: application/json', toolsBody],
      ['POST /mcp', MCP_HEADERS, mcpBody],
    ]
    for (const [line, headers, body] of requests) {
      const answer = await send(
        port,
        `${line} HTTP/1.1\r\n${headers}\r\nTransfer-Encoding: gzip, chunked`,
        [gzipSync(body)],
      )
      expect({ line, status: answer.status, body: answer.body }).toEqual({
        line,
        status: 501,
        body: {
          error: {
            code: 'NOT_IMPLEMENTED',
            message:
              'Transfer-Encoding "gzip, chunked" is not supported: send the body with Content-Length or "Transfer-Encoding: chunked" alone (no other transfer coding).',
          },
        },
      })
      expect(answer.headers).toContain('connection: close')
    }
  })

  it('runs no route: an unknown coding over a plain body saves no library', async () => {
    const port = await serve()
    // The bytes inside the chunks are a valid tool file: before, the upload was imported (201).
    const answer = await send(
      port,
      'PUT /v1/libraries/coded HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: x-custom, chunked',
      [toolsBody],
    )
    expect(answer.status).toBe(501)
    expect(answer.body.error.code).toBe('NOT_IMPLEMENTED')
    expect((await fetch(`${served!.url}/v1/libraries/coded`)).status).toBe(404)
  })

  it('answers before the body is read: a body never finished still gets its 501', async () => {
    const port = await serve()
    const answer = await send(
      port,
      'POST /v1/search-tools HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked',
      [gzipSync(selectBody).subarray(0, 10)],
      false,
    )
    expect(answer.status).toBe(501)
  })

  it('still takes a plain chunked body', async () => {
    const port = await serve()
    const answer = await send(
      port,
      'PUT /v1/libraries/plain HTTP/1.1\r\nContent-Type: application/json\r\nConnection: close\r\nTransfer-Encoding: chunked',
      [toolsBody.subarray(0, 20), toolsBody.subarray(20)],
    )
    expect(answer.status).toBe(201)
    const select = await send(
      port,
      'POST /v1/select-tools HTTP/1.1\r\nContent-Type: application/json\r\nConnection: close\r\nTransfer-Encoding: Chunked',
      [selectBody],
    )
    expect(select.status).toBe(200)
  })
})
