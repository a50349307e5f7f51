/**
 * server.maxConnectionsPerAddress counts an IPv6 client per /64 (a host picks any address of
 * its /64) and an IPv4 client per address, IPv4-mapped IPv6 included; a connection past it is
 * answered 429 by the app itself (request id, access log), real sockets and a real app.
 */
import { existsSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { afterEach, describe, expect, it } from 'vitest'
import {
  addressGroup,
  addressGroupsKept,
  createConnectionLimit,
  type ConnectionLimit,
} from '../../src/server/connection-limits.ts'
import { clientAddresses } from '../../src/server/client-address.ts'
import { runPython } from '../helpers/run-python.ts'
import { createTestApp } from './test-service.ts'

const PYTHON = '/usr/bin/python3'

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
    // Again, from what it kept of each address with a colon (the IPv4 ones are their own group).
    for (const [address, group] of cases) expect(addressGroup(address), address).toBe(group)
  })

  it('keeps the groups of recent addresses with a colon, at most 1,024, an IPv4 one none', () => {
    addressGroup('198.51.100.7')
    const kept = addressGroupsKept()
    expect(addressGroup('198.51.100.7')).toBe('198.51.100.7')
    expect(addressGroupsKept()).toBe(kept)
    for (let host = 0; host < 3000; host++) {
      const address = `2001:db8:${(host >> 8).toString(16)}:${(host & 255).toString(16)}::${host.toString(16)}`
      expect(addressGroup(address)).toBe(
        `2001:db8:${(host >> 8).toString(16)}:${(host & 255).toString(16)}::/64`,
      )
      expect(addressGroupsKept()).toBeLessThanOrEqual(1024)
    }
    expect(addressGroupsKept()).toBeGreaterThan(0)
    // An address past 64 characters is grouped, not kept.
    const long = `fe80::1%${'x'.repeat(80)}`
    const before = addressGroupsKept()
    expect(addressGroup(long)).toBe('fe80:0:0:0::/64')
    expect(addressGroupsKept()).toBe(before)
  })
})

/** How long a connection over the limit is held for its answer, here (serve: 5 s). */
const ANSWER_MS = 1500

let server: Server | undefined
let closeApp: (() => Promise<void>) | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  server?.closeAllConnections()
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
  await closeApp?.()
  closeApp = undefined
})

/** Listens on `host` with `limit` counting connections, as serve does; resolves with the port. */
async function listen(limit: ConnectionLimit, host: string, app?: { fetch: never }) {
  server = app
    ? (createAdaptorServer({ fetch: app.fetch }) as Server)
    : createServer((_, response) => response.end('ok'))
  server.on('connection', limit.admit)
  await new Promise<void>((resolve) => server!.listen(0, host, resolve))
  return (server.address() as AddressInfo).port
}

/** A connection from `localAddress` that sends nothing; resolves once connected. */
async function idle(port: number, host = '127.0.0.1', localAddress?: string) {
  const socket = connect({ port, host, ...(localAddress && { localAddress }) })
  sockets.push(socket)
  const entry = { closed: false, closedAt: 0 }
  socket.on('error', () => undefined)
  socket.on('close', () => Object.assign(entry, { closed: true, closedAt: performance.now() }))
  await new Promise((resolve) => socket.once('connect', resolve))
  return entry
}

/** Opens `count` connections from `localAddress`; resolves with how many are still open. */
async function openFrom(port: number, host: string, localAddress: string, count: number) {
  const entries = await Promise.all(
    Array.from({ length: count }, () => idle(port, host, localAddress)),
  )
  // Those over the limit that send nothing are closed after ANSWER_MS.
  await new Promise((resolve) => setTimeout(resolve, ANSWER_MS + 300))
  return entries.filter((entry) => !entry.closed).length
}

describe('the connection limit on a dual-stack server, real sockets', () => {
  it('counts each IPv4 client (seen as ::ffff:a.b.c.d) apart, and ::1 as its /64', async () => {
    const limit = createConnectionLimit(2, { answerMs: ANSWER_MS, answering: 2 })!
    const port = await listen(limit, '::')
    expect(await openFrom(port, '127.0.0.1', '127.0.0.1', 4)).toBe(2)
    // Not one ::ffff:0:0/64 for every IPv4 client.
    expect(await openFrom(port, '127.0.0.1', '127.0.0.2', 4)).toBe(2)
    expect(await openFrom(port, '::1', '::1', 4)).toBe(2)
  })
})

describe('a trusted proxy (server.trustedProxies) and the connection limit, real sockets', () => {
  it('does not count a trusted proxy (seen as ::ffff:127.0.0.1 on a dual-stack server); others still are', async () => {
    const { isTrustedProxy } = clientAddresses(['127.0.0.1'])
    const limit = createConnectionLimit(2, {
      answerMs: ANSWER_MS,
      answering: 2,
      exempt: isTrustedProxy,
    })!
    const port = await listen(limit, '::')
    expect(await openFrom(port, '127.0.0.1', '127.0.0.1', 6)).toBe(6)
    expect(await openFrom(port, '127.0.0.1', '127.0.0.2', 4)).toBe(2)
  })
})

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A POST of `body` to `path` on a new connection to `port`: its answer, or the error's code. */
function post(port: number, path: string, body: string | Buffer) {
  return new Promise<Answer | string>((resolve) => {
    const request = httpRequest(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, body: text }),
        )
      },
    )
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    request.end(body)
  })
}

const SELECT = JSON.stringify({ instruction: 'Email Ann the weather in Paris' })

describe('requests on connections over the limit, a real app over real sockets', () => {
  async function appPast(limit: ConnectionLimit, within: number) {
    const { app, logger } = await createTestApp({ app: { connectionLimit: limit } })
    closeApp = () => app.close()
    const port = await listen(limit, '127.0.0.1', app as never)
    // `within` connections held open (idle), so that the next ones are over the limit.
    const held = await Promise.all(Array.from({ length: within }, () => idle(port)))
    return { port, held, logger, app }
  }

  // Round 35: of 1,000 concurrent POSTs from one address ~745 were reset by the limit (no answer).
  it('answers 429 RATE_LIMITED through the app: error body, Retry-After, Connection: close, request id, access log; serves none', async () => {
    const limit = createConnectionLimit(2, { answerMs: ANSWER_MS, answering: 2 })!
    const { port, logger } = await appPast(limit, 2)
    const over = await Promise.all([
      post(port, '/v1/select-tools', SELECT),
      post(port, '/v1/select-tools', SELECT),
    ])
    for (const answer of over) {
      if (typeof answer === 'string') throw new Error(`no answer: ${answer}`)
      expect(answer.status).toBe(429)
      expect(answer.headers['retry-after']).toBe('1')
      expect(answer.headers.connection).toBe('close')
      expect(JSON.parse(answer.body)).toEqual({
        error: {
          code: 'RATE_LIMITED',
          message: expect.stringContaining('maxConnectionsPerAddress'),
        },
      })
      // Written by the app: its request id and nosniff are on it (round 36 wrote it past them).
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
      expect(answer.headers['x-content-type-options']).toBe('nosniff')
    }
    const logged = logger.lines
      .map((line) => JSON.parse(line) as { msg?: string; status?: number; error?: string })
      .filter((line) => line.msg === 'request')
    expect(logged.map((line) => [line.status, line.error])).toEqual([
      [429, 'RATE_LIMITED'],
      [429, 'RATE_LIMITED'],
    ])
  })

  it('holds at most `answering` idle connections past the limit, each at most answerMs; closes the next at once', async () => {
    const limit = createConnectionLimit(4, { answerMs: ANSWER_MS })!
    // A quarter of the limit by default, at least MIN_ANSWERING (4).
    expect(limit.answering).toBe(4)
    expect([256, 40, 16, 1].map((cap) => createConnectionLimit(cap)!.answering)).toEqual([
      64, 10, 4, 4,
    ])
    const { port, held } = await appPast(limit, 4)
    const past = []
    for (let count = 0; count < 5; count += 1) past.push(await idle(port))
    const start = performance.now()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(past.map((entry) => entry.closed)).toEqual([false, false, false, false, true])
    await new Promise((resolve) => setTimeout(resolve, ANSWER_MS + 500))
    for (const entry of past.slice(0, 4))
      expect(entry.closed && entry.closedAt - start < 3 * ANSWER_MS).toBe(true)
    // Those within the limit are not held to answerMs.
    expect(held.some((entry) => entry.closed)).toBe(false)
  })

  // Round 37: a limit under 8 could have one such connection answered at once (a quarter, at
  // least 1): of several requests past it at once all but one were reset, unanswered.
  it('answers 429 to 4 requests at once past a limit of 1, none reset', async () => {
    const limit = createConnectionLimit(1, { answerMs: ANSWER_MS })!
    const { port } = await appPast(limit, 1)
    const over = await Promise.all(
      Array.from({ length: 4 }, () => post(port, '/v1/select-tools', SELECT)),
    )
    expect(over.map((answer) => (typeof answer === 'string' ? answer : answer.status))).toEqual([
      429, 429, 429, 429,
    ])
  })

  /**
   * `count` PUTs of `bytes` past a limit of 1 by Python's urllib, one at a time: what each got.
   * As urllib does, the whole body is sent, then the answer read; a reset meanwhile loses it.
   */
  async function pythonUploads(count: number, bytes: number): Promise<string[]> {
    const limit = createConnectionLimit(1, { answerMs: ANSWER_MS, answering: 4 })!
    const { port } = await appPast(limit, 1)
    const driver = `
import urllib.request, urllib.error
for i in range(${count}):
    request = urllib.request.Request('http://127.0.0.1:${port}/v1/libraries/big', data=b' ' * ${bytes}, method='PUT', headers={'content-type': 'application/json'})
    try:
        print(urllib.request.urlopen(request, timeout=10).status)
    except urllib.error.HTTPError as error:
        print(error.code)
    except Exception as error:
        print(type(error).__name__)
`
    const run = await runPython(PYTHON, ['-c', driver], { env: { PATH: process.env.PATH } })
    expect(run.err).toBe('')
    return run.out.trim().split('\n')
  }

  // Round 36 closed with the body unread: 3 of 8 such uploads were reset.
  it.skipIf(!existsSync(PYTHON))(
    'answers 1 MiB uploads past the limit 429, not with a reset, to a client that reads once it has sent it all',
    async () => {
      expect(await pythonUploads(16, 1048576)).toEqual(new Array(16).fill('429'))
    },
  )

  // Round 37 read 64 KiB of it: every 8 MiB upload by such a client was reset (net4: 0 of 8).
  it.skipIf(!existsSync(PYTHON))(
    'answers 8 MiB uploads past the limit 429 too: the body is read while it comes',
    async () => {
      expect(await pythonUploads(4, 8388608)).toEqual(new Array(4).fill('429'))
    },
  )

  // Round 37's read of the body before the 429 waited for all of it (or 64 KiB): a body sent
  // slowly, or not at all after `Expect: 100-continue`, got no answer, its connection closed
  // when the hold ended (round 36 answered it at once).
  it('answers 429 to a request past the limit whose body comes slowly or not at all, before the hold ends', async () => {
    const limit = createConnectionLimit(2, { answerMs: ANSWER_MS, answering: 2 })!
    const { port } = await appPast(limit, 2)
    const head = (extra: string) =>
      `PUT /v1/libraries/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n${extra}\r\n`
    const answers = await Promise.all(
      [head('') + '{"tools":', head('Expect: 100-continue\r\n')].map(
        (sent) =>
          new Promise<{ text: string; ms: number }>((resolve) => {
            const start = performance.now()
            const socket = connect({ port, host: '127.0.0.1' })
            sockets.push(socket)
            let text = ''
            socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
            socket.on('error', () => undefined)
            socket.on('close', () => resolve({ text, ms: performance.now() - start }))
            socket.write(sent)
          }),
      ),
    )
    for (const { text, ms } of answers) {
      const answer = text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '')
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 429 Too Many Requests')
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
        error: {
          code: 'RATE_LIMITED',
          message: expect.stringContaining('maxConnectionsPerAddress'),
        },
      })
      expect(ms).toBeLessThan(ANSWER_MS)
    }
  })

  // Round 37 logged and counted these as 429s, answers nobody received.
  it('logs and counts a 429 whose connection closed before it was written as 499, `unsent` 429', async () => {
    const limit = createConnectionLimit(1, { answerMs: ANSWER_MS, answering: 2 })!
    const { port, logger, app } = await appPast(limit, 1)
    // Past the limit: the head is read (Node sends 100 Continue), the app waits for the body,
    // and the client goes away before it comes.
    const socket = connect({ port, host: '127.0.0.1' })
    sockets.push(socket)
    socket.on('error', () => undefined)
    socket.write(
      'PUT /v1/libraries/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n',
    )
    await new Promise((resolve) => socket.once('data', resolve))
    socket.destroy()
    const requestLines = () =>
      logger.lines
        .map((line) => JSON.parse(line) as { msg?: string; status?: number; unsent?: number })
        .filter((line) => line.msg === 'request')
    for (let waited = 0; requestLines().length === 0 && waited < 5000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(requestLines()).toEqual([
      expect.objectContaining({ status: 499, unsent: 429, error: 'RATE_LIMITED' }),
    ])
    const scraped = await (await app.request('/metrics')).text()
    expect(scraped).toContain(
      'toolsel_http_requests_total{method="PUT",route="/v1/libraries/:library",status="499"} 1',
    )
    expect(scraped).not.toContain('status="429"')
  })

  it('lets a connection within the limit through to the app', async () => {
    const limit = createConnectionLimit(2, { answerMs: ANSWER_MS })!
    const { port } = await appPast(limit, 1)
    const answer = await post(port, '/v1/select-tools', SELECT)
    expect(typeof answer === 'string' ? answer : answer.status).toBe(200)
  })
})
