/**
 * server.maxConnectionsPerAddress counts an IPv6 client per /64 (a host picks any address of
 * its /64) and an IPv4 client per address, IPv4-mapped IPv6 included.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { addressGroup, limitConnectionsPerAddress } from '../../src/server/connection-limits.ts'

describe('addressGroup', () => {
  it('groups IPv6 by /64 and keeps IPv4, mapped or not, per address', () => {
    const cases: Array<[address: string, group: string]> = [
      ['2001:db8:0:1::5', '2001:db8:0:1::/64'],
      ['2001:db8:0:1:ffff:1:2:3', '2001:db8:0:1::/64'],
      ['2001:0db8:0000:0001:abcd::', '2001:db8:0:1::/64'],
      ['2001:db8:0:2::5', '2001:db8:0:2::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['::ffff:7f00:2', '127.0.0.2'],
      ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
      ['203.0.113.9', '203.0.113.9'],
      ['', ''],
      ['not an address', 'not an address'],
    ]
    for (const [address, group] of cases) expect(addressGroup(address), address).toBe(group)
  })
})

/** How long a connection over the limit is held for its answer, here (serve: 5 s). */
const ANSWER_MS = 1500

let server: Server | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  server?.closeAllConnections()
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
})

/** Opens `count` connections from `localAddress`; resolves with how many are still open. */
async function openFrom(port: number, host: string, localAddress: string, count: number) {
  const opened = Array.from({ length: count }, () => {
    const socket = connect({ port, host, localAddress })
    sockets.push(socket)
    const entry = { closed: false }
    socket.on('error', () => undefined)
    socket.on('close', () => (entry.closed = true))
    return new Promise<typeof entry>((resolve) => socket.once('connect', () => resolve(entry)))
  })
  const entries = await Promise.all(opened)
  // Those over the limit that send nothing are closed after ANSWER_MS.
  await new Promise((resolve) => setTimeout(resolve, ANSWER_MS + 300))
  return entries.filter((entry) => !entry.closed).length
}

describe('limitConnectionsPerAddress on a dual-stack server, real sockets', () => {
  it('counts each IPv4 client (seen as ::ffff:a.b.c.d) apart, and ::1 as its /64', async () => {
    server = createServer((_, response) => response.end('ok'))
    limitConnectionsPerAddress(server, 2, ANSWER_MS)
    await new Promise<void>((resolve) => server!.listen(0, '::', resolve))
    const { port } = server.address() as AddressInfo
    expect(await openFrom(port, '127.0.0.1', '127.0.0.1', 4)).toBe(2)
    // Not one ::ffff:0:0/64 for every IPv4 client.
    expect(await openFrom(port, '127.0.0.1', '127.0.0.2', 4)).toBe(2)
    expect(await openFrom(port, '::1', '::1', 4)).toBe(2)
  })
})

/** A POST on a new connection to `port`: its status, Retry-After and body. */
function post(port: number) {
  return new Promise<{ status: number; retryAfter?: string; body: string }>((resolve, reject) => {
    const request = httpRequest(
      { port, host: '127.0.0.1', method: 'POST', path: '/', agent: false },
      (response) => {
        let body = ''
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            retryAfter: response.headers['retry-after'],
            body,
          }),
        )
      },
    )
    request.on('error', reject)
    request.end('{"query": "x"}')
  })
}

describe('connections over the limit, real sockets', () => {
  // Round 35: of 1,000 concurrent POSTs from one address ~745 were reset by the limit (no answer).
  it('answers 429 RATE_LIMITED with Retry-After, serves none of them, and bounds how many it holds', async () => {
    let served = 0
    const held: Array<() => void> = []
    server = createServer((_, response) => {
      served += 1
      held.push(() => response.end('ok'))
    })
    limitConnectionsPerAddress(server, 2, ANSWER_MS)
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const within = [post(port), post(port)]
    while (served < 2) await new Promise((resolve) => setTimeout(resolve, 20))
    const over = await Promise.all([post(port), post(port)])
    for (const answer of over) {
      expect(answer.status).toBe(429)
      expect(answer.retryAfter).toBe('1')
      expect(JSON.parse(answer.body)).toEqual({
        error: {
          code: 'RATE_LIMITED',
          message: expect.stringContaining('maxConnectionsPerAddress'),
        },
      })
    }
    expect(served).toBe(2)
    // Two idle ones over the limit are held (at most ANSWER_MS); a fifth is closed at once.
    const idle = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const socket = connect({ port, host: '127.0.0.1' })
        sockets.push(socket)
        socket.on('error', () => undefined)
        const entry = { closedAt: 0 }
        socket.on('close', () => (entry.closedAt = performance.now()))
        await new Promise((resolve) => socket.once('connect', resolve))
        return entry
      }),
    )
    const start = performance.now()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(idle.filter((entry) => entry.closedAt > 0)).toHaveLength(1)
    await new Promise((resolve) => setTimeout(resolve, ANSWER_MS + 500))
    expect(
      idle.every((entry) => entry.closedAt > 0 && entry.closedAt - start < 3 * ANSWER_MS),
    ).toBe(true)
    for (const end of held) end()
    expect((await Promise.all(within)).map((answer) => answer.status)).toEqual([200, 200])
  })
})
