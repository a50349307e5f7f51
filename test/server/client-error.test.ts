import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { answerClientErrors } from '../../src/server/client-error.ts'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    await new Promise((resolve) => server.close(resolve))
  }
})

async function listen(): Promise<number> {
  const server = createServer((_request, response) => response.end('ok'))
  answerClientErrors(server)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as { port: number }).port
}

/** Sends `raw` on a new connection and returns everything the server wrote before closing. */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(raw))
    let received = ''
    socket.on('data', (chunk) => (received += chunk.toString()))
    socket.on('error', () => undefined)
    socket.on('close', () => resolve(received))
  })
}

function parse(received: string): { status: number; body: { error: { code: string } } } {
  const [head, body] = received.split('\r\n\r\n')
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) }
}

describe('requests the HTTP parser rejects', () => {
  it('are answered in the error shape, with the status Node would send', async () => {
    const port = await listen()
    const malformed = parse(await exchange(port, 'GARBAGE\r\n\r\n'))
    expect(malformed.status).toBe(400)
    expect(malformed.body.error.code).toBe('INVALID_INPUT')

    const badLength = parse(
      await exchange(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'),
    )
    expect(badLength.status).toBe(400)

    const huge = parse(
      await exchange(port, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    )
    expect(huge.status).toBe(431)
    expect(huge.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' })
    expect(JSON.stringify(huge.body)).toContain('shorten the URL or the headers')

    // Good requests are untouched.
    expect(await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(
      /^HTTP\/1.1 200/,
    )
  })
})
