/**
 * Request bodies that never finish (round 33's hostile pass, bench/README "Round 33: request
 * bodies and input files"), over real sockets:
 * - a chunked query body dripping under the limit was read whole by the body limit before the
 *   request's deadline started, so `server.requestTimeoutMs` never answered it (a Content-Length
 *   body got its 504); only Node's receive timeout (300 s) ended it;
 * - a client that closes the connection mid-body was logged as `ERROR Unhandled error … Error:
 *   aborted` with a stack, one per request anyone can send.
 */
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

let served: ListeningApp | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

/** Writes `head` on a fresh connection, then what came back once it closes or after `waitMs`. */
function rawRequest(
  url: string,
  head: string,
  options: { waitMs: number; closeAfterMs?: number },
): Promise<{ answer: string; ms: number }> {
  const { port } = new URL(url)
  return new Promise((resolve) => {
    const start = performance.now()
    const socket = connect(Number(port), '127.0.0.1')
    let answer = ''
    let settled = false
    const done = () => {
      if (settled) return
      settled = true
      clearTimeout(wait)
      socket.destroy()
      resolve({ answer, ms: performance.now() - start })
    }
    const wait = setTimeout(done, options.waitMs)
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('close', done)
    socket.on('error', done)
    socket.write(head)
    if (options.closeAfterMs !== undefined) setTimeout(done, options.closeAfterMs)
  })
}

describe('bodies that never finish', () => {
  it('a chunked select body that stops coming gets its 504 at server.requestTimeoutMs', async () => {
    const { app } = await createTestApp({ config: { server: { requestTimeoutMs: 1000 } } })
    served = await listenApp(app.fetch)
    const { answer, ms } = await rawRequest(
      served.url,
      'POST /v1/select-tools HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n',
      { waitMs: 8000 },
    )
    expect(answer).toMatch(/^HTTP\/1\.1 504 /)
    expect(answer).toContain(
      '{"error":{"code":"TIMEOUT","message":"The request took longer than its 1000 ms limit."}}',
    )
    expect(ms).toBeLessThan(6000)
  })

  it('a client that closes mid-body is not logged as an unhandled server error', async () => {
    const { app, logger } = await createTestApp()
    served = await listenApp(app.fetch)
    for (const head of [
      'POST /v1/select-tools HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"instruction":',
      'PUT /v1/libraries/gone HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"tools":[',
      'POST /v1/search-tools HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n',
    ]) {
      await rawRequest(served.url, head, { waitMs: 5000, closeAfterMs: 300 })
    }
    // The server sees each close and finishes the request.
    await expect
      .poll(() => logger.lines.filter((line) => line.includes('the client closed')).length, {
        timeout: 5000,
      })
      .toBe(3)
    expect(logger.lines.filter((line) => line.includes('Unhandled error'))).toEqual([])
    // And it goes on answering.
    expect((await fetch(`${served.url}/healthz`)).status).toBe(200)
  })
})
