/**
 * The request-rate limit (server.readsPerMinute, server.writesPerMinute): a real app on a real
 * server, real requests. A client is its API key when keys are on, else its address; past its
 * budget a request is answered 429 RATE_LIMITED with Retry-After, counted by route class.
 */
import { request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { afterEach, describe, expect, it } from 'vitest'
import type { ConfigLayer } from '../../src/config/load-config.ts'
import { MAX_FORWARDED_HEADER_CHARS, MAX_FORWARDED_HOPS } from '../../src/server/client-address.ts'
import { rateClassOf, serviceLimit } from '../../src/server/rate-limit.ts'
import { TokenBuckets } from '../../src/token-buckets.ts'
import { createTestApp } from './test-service.ts'

let server: Server | undefined
let closeApp: (() => Promise<void>) | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
  await closeApp?.()
  closeApp = undefined
})

/** The test app with `config`, served on 127.0.0.1; its base URL. */
async function serve(config: ConfigLayer): Promise<string> {
  const { app } = await createTestApp({ config })
  closeApp = () => app.close()
  server = createAdaptorServer({ fetch: app.fetch }) as Server
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

interface Answer {
  status: number
  retryAfter: string | undefined
  /** The `RateLimit` and `RateLimit-Policy` fields. */
  rateLimit: string | undefined
  policy: string | undefined
  body: string
}

/** One request on a keep-alive connection of the shared agent, from 127.0.0.1 unless `from`. */
function call(
  url: string,
  method: string,
  path: string,
  {
    body,
    key,
    from,
    headers,
  }: { body?: string; key?: string; from?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      `${url}${path}`,
      {
        method,
        ...(from && { localAddress: from, agent: false }),
        headers: {
          ...(body && { 'content-type': 'application/json' }),
          ...(key && { authorization: `Bearer ${key}` }),
          ...headers,
        },
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            retryAfter: response.headers['retry-after'] as string | undefined,
            rateLimit: response.headers['ratelimit'] as string | undefined,
            policy: response.headers['ratelimit-policy'] as string | undefined,
            body: text,
          }),
        )
      },
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

const SELECT = JSON.stringify({ instruction: 'Email Ann the weather in Paris' })
const ADMIN_KEY = 'admin-key-0123456789'
const READ_KEY_A = 'read-key-a-0123456789'
const READ_KEY_B = 'read-key-b-0123456789'

/** The `toolsel_rate_limited_total` samples of a scrape, by class. */
async function limitedCounts(url: string, key?: string): Promise<Record<string, number>> {
  const { body } = await call(url, 'GET', '/metrics', { key })
  return Object.fromEntries(
    [...body.matchAll(/^toolsel_rate_limited_total\{class="(\w+)"\} (\d+)$/gm)].map(
      ([, routeClass, count]) => [routeClass, Number(count)],
    ),
  )
}

describe('the request-rate limit over real HTTP', () => {
  it('answers a write past server.writesPerMinute 429 with Retry-After; reads and probes, unlimited by default, pass', async () => {
    const url = await serve({ server: { writesPerMinute: 2 } })
    const writes = []
    for (let index = 0; index < 3; index += 1) {
      writes.push(await call(url, 'DELETE', '/v1/libraries/nowhere'))
    }
    expect(writes.map((answer) => answer.status)).toEqual([404, 404, 429])
    // 2 a minute: the next token in 30 s.
    expect(writes[2].retryAfter).toBe('30')
    const error = JSON.parse(writes[2].body).error
    expect(error.code).toBe('RATE_LIMITED')
    expect(error.message).toMatch(/server\.writesPerMinute.*retry in 30 s/)
    // The other classes go on: reads (server.readsPerMinute is 0 by default), the probes.
    for (let index = 0; index < 50; index += 1) {
      expect((await call(url, 'POST', '/v1/select-tools', { body: SELECT })).status).toBe(200)
    }
    expect((await call(url, 'GET', '/healthz')).status).toBe(200)
    // Another client address has its own bucket.
    expect((await call(url, 'DELETE', '/v1/libraries/nowhere', { from: '127.0.0.2' })).status).toBe(
      404,
    )
    expect((await call(url, 'DELETE', '/v1/libraries/nowhere')).status).toBe(429)
    expect(await limitedCounts(url)).toEqual({ read: 0, write: 2 })
  })

  it('answers an upload past the limit 429 before reading it, and the next request is served', async () => {
    const url = await serve({ server: { writesPerMinute: 1 } })
    expect((await call(url, 'DELETE', '/v1/libraries/nowhere')).status).toBe(404)
    const upload = await call(url, 'PUT', '/v1/libraries/big', {
      body: JSON.stringify({ tools: [{ name: 'x'.repeat(8 * 1024 * 1024) }] }),
    })
    expect(upload.status).toBe(429)
    expect(JSON.parse(upload.body).error.code).toBe('RATE_LIMITED')
    expect((await call(url, 'POST', '/v1/select-tools', { body: SELECT })).status).toBe(200)
  })

  it('with keys, a client is its key: keys sharing a name have a bucket each, the admin key its own; probes are never limited', async () => {
    const url = await serve({
      server: { readsPerMinute: 3 },
      auth: {
        adminKey: ADMIN_KEY,
        readKeys: [
          { key: READ_KEY_A, name: 'shared' },
          { key: READ_KEY_B, name: 'shared' },
        ],
      },
    })
    const statuses = async (key: string, count: number) => {
      const got: number[] = []
      for (let index = 0; index < count; index += 1) {
        got.push((await call(url, 'POST', '/v1/select-tools', { body: SELECT, key })).status)
      }
      return got
    }
    expect(await statuses(READ_KEY_A, 4)).toEqual([200, 200, 200, 429])
    const refused = await call(url, 'POST', '/v1/select-tools', { body: SELECT, key: READ_KEY_A })
    expect(refused.retryAfter).toBe('20')
    expect(JSON.parse(refused.body).error.message).toMatch(
      /^The API key "shared" has no read requests left of its 3 a minute \(server\.readsPerMinute\)/,
    )
    expect(refused.body).not.toContain(READ_KEY_A)
    expect(await statuses(READ_KEY_B, 3)).toEqual([200, 200, 200])
    // The admin key: its own bucket (the scrape below takes its third token).
    expect(await statuses(ADMIN_KEY, 2)).toEqual([200, 200])
    // No key: 401 before any bucket; public routes are not counted.
    expect((await call(url, 'POST', '/v1/select-tools', { body: SELECT })).status).toBe(401)
    for (let index = 0; index < 10; index += 1) {
      expect((await call(url, 'GET', '/readyz')).status).toBe(200)
    }
    expect(await limitedCounts(url, ADMIN_KEY)).toEqual({ read: 2, write: 0 })
  })
})

describe('the rate-limit fields (RateLimit, RateLimit-Policy) over real HTTP', () => {
  it('tells a limited class what is left and when the next comes; an unlimited class gets none', async () => {
    const url = await serve({ server: { writesPerMinute: 2 } })
    const first = await call(url, 'DELETE', '/v1/libraries/nowhere')
    expect(first).toMatchObject({ status: 404, policy: '"write";q=2;w=60' })
    // One left; the next is added 30 s after the first was taken.
    expect(first.rateLimit).toBe('"write";r=1;t=30')
    const second = await call(url, 'DELETE', '/v1/libraries/nowhere')
    expect(second.rateLimit).toMatch(/^"write";r=0;t=(29|30)$/)
    const refused = await call(url, 'DELETE', '/v1/libraries/nowhere')
    expect(refused).toMatchObject({ status: 429, policy: '"write";q=2;w=60' })
    // On a 429 `t` is Retry-After.
    expect(refused.rateLimit).toBe(`"write";r=0;t=${refused.retryAfter}`)
    // Reads are not limited by default: no fields; nor on the public routes.
    const read = await call(url, 'POST', '/v1/select-tools', { body: SELECT })
    expect(read).toMatchObject({ status: 200, rateLimit: undefined, policy: undefined })
    expect((await call(url, 'GET', '/healthz')).rateLimit).toBeUndefined()
  })

  it('adds them to /mcp answers too once reads are limited, the answer itself intact', async () => {
    const url = await serve({ server: { readsPerMinute: 60 } })
    const answer = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 't', version: '1' },
        },
      }),
    })
    const text = await answer.text()
    expect(answer.status).toBe(200)
    expect(text).toContain('"protocolVersion":"2025-06-18"')
    expect(answer.headers.get('ratelimit-policy')).toBe('"read";q=60;w=60')
    expect(answer.headers.get('ratelimit')).toBe('"read";r=59;t=1')
  })

  it('exposes them and Retry-After to the browser origins of server.corsOrigins', async () => {
    const url = await serve({
      server: { writesPerMinute: 1, corsOrigins: ['https://app.example'] },
    })
    const headers = { origin: 'https://app.example' }
    const exposed = async () => {
      const answer = await fetch(`${url}/v1/libraries/nowhere`, { method: 'DELETE', headers })
      await answer.arrayBuffer()
      return [answer.status, answer.headers.get('access-control-expose-headers')]
    }
    for (const status of [404, 429]) {
      expect(await exposed()).toEqual([
        status,
        expect.stringMatching(/retry-after,ratelimit,ratelimit-policy/),
      ])
    }
  })

  it('are declared in /openapi.json on the answers that carry them, with Retry-After on the 429', async () => {
    // Before round 43 the document named them only in the 429's description (hard37).
    const url = await serve({ server: { readsPerMinute: 3, writesPerMinute: 1 } })
    const document = JSON.parse((await call(url, 'GET', '/openapi.json')).body)
    expect(Object.keys(document.components.headers).sort()).toEqual([
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
    ])
    const FIELDS = ['RateLimit', 'RateLimit-Policy', 'Retry-After'] as const
    /** The fields `answer` carries, and those documented for its status on `template`. */
    const fields = (template: string, method: string, answer: Answer) => {
      const headers =
        document.paths[template][method.toLowerCase()].responses[answer.status].headers
      const sent = {
        RateLimit: answer.rateLimit,
        'RateLimit-Policy': answer.policy,
        'Retry-After': answer.retryAfter,
      }
      return {
        template,
        status: answer.status,
        sent: FIELDS.filter((name) => sent[name] !== undefined),
        declared: FIELDS.filter((name) => headers?.[name] !== undefined),
      }
    }
    const calls: [template: string, method: string, path: string, body?: string][] = [
      ['/v1/select-tools', 'POST', '/v1/select-tools', SELECT],
      ['/v1/search-tools', 'POST', '/v1/search-tools', JSON.stringify({ query: '' })],
      ['/v1/libraries/{library}', 'GET', '/v1/libraries/nowhere'],
      ['/v1/libraries', 'GET', '/v1/libraries'],
      ['/v1/libraries/{library}', 'DELETE', '/v1/libraries/nowhere'],
      ['/v1/libraries/{library}', 'DELETE', '/v1/libraries/nowhere'],
      ['/healthz', 'GET', '/healthz'],
    ]
    const seen = []
    for (const [template, method, path, body] of calls) {
      const got = fields(template, method, await call(url, method, path, { body }))
      expect(got.declared, `${method} ${template} ${got.status}`).toEqual(got.sent)
      seen.push(`${method} ${got.status} ${got.sent.length}`)
    }
    expect(seen).toEqual([
      'POST 200 2',
      'POST 400 2',
      'GET 404 2',
      'GET 429 3',
      'DELETE 404 2',
      'DELETE 429 3',
      'GET 200 0',
    ])
    // Every operation: a keyed one declares both on each answer past the key and Host checks,
    // every 429 Retry-After; the public ones (probes) none of the rate fields. The 501 of an unknown
    // transfer coding is answered before the limiter (src/server/middleware/transfer-coding.ts).
    for (const [template, item] of Object.entries<Record<string, Record<string, unknown>>>(
      document.paths,
    )) {
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'parameters') continue
        const keyed = (operation.security as unknown[] | undefined)?.length !== 0
        const responses = operation.responses as Record<string, { headers?: object }>
        for (const [status, response] of Object.entries(responses)) {
          const limited = keyed && !['401', '403', '408', '431', '501'].includes(status)
          expect({
            template,
            method,
            status,
            headers: Object.keys(response.headers ?? {}),
          }).toEqual({
            template,
            method,
            status,
            headers: [
              ...(limited ? ['RateLimit', 'RateLimit-Policy'] : []),
              ...(status === '429' ? ['Retry-After'] : []),
            ],
          })
        }
      }
    }
  })

  it('serviceLimit: r the whole requests left, t the seconds until one more (at least 1)', () => {
    expect(serviceLimit('read', 120, 119)).toBe('"read";r=119;t=1')
    expect(serviceLimit('read', 120, 119.9)).toBe('"read";r=119;t=1')
    expect(serviceLimit('write', 2, 1)).toBe('"write";r=1;t=30')
    expect(serviceLimit('write', 2, 0.5)).toBe('"write";r=0;t=15')
    // Owing (a charge larger than the bucket held): until it holds one again.
    expect(serviceLimit('write', 60, -2)).toBe('"write";r=0;t=3')
    expect(serviceLimit('read', 100_000_000, 5)).toBe('"read";r=5;t=1')
  })
})

describe('clients behind a trusted proxy (server.trustedProxies), over real HTTP', () => {
  const DELETE = (url: string, headers?: Record<string, string>, from?: string) =>
    call(url, 'DELETE', '/v1/libraries/nowhere', { headers, from }).then((answer) => answer.status)

  it('ignores X-Forwarded-For and Forwarded from a peer that is not trusted (the default: none)', async () => {
    for (const trustedProxies of [[], ['127.0.0.2', '10.0.0.0/8']]) {
      const url = await serve({ server: { writesPerMinute: 1, trustedProxies } })
      expect(await DELETE(url, { 'x-forwarded-for': '192.0.2.1' })).toBe(404)
      // A new spoofed address each time is still this peer's bucket.
      expect(await DELETE(url, { 'x-forwarded-for': '192.0.2.2' })).toBe(429)
      expect(await DELETE(url, { forwarded: 'for=192.0.2.3' })).toBe(429)
      expect(await DELETE(url)).toBe(429)
      server?.closeAllConnections()
      await new Promise((resolve) => server!.close(resolve))
      server = undefined
      await closeApp?.()
      closeApp = undefined
    }
  })

  it('counts each client a trusted proxy forwards apart: the right-most untrusted X-Forwarded-For address', async () => {
    const url = await serve({
      server: { writesPerMinute: 1, trustedProxies: ['127.0.0.1', '10.0.0.0/8'] },
    })
    expect(await DELETE(url, { 'x-forwarded-for': '192.0.2.1' })).toBe(404)
    expect(await DELETE(url, { 'x-forwarded-for': '192.0.2.1' })).toBe(429)
    // Another client behind the proxy has its own bucket.
    expect(await DELETE(url, { 'x-forwarded-for': '192.0.2.2' })).toBe(404)
    // What the client wrote itself (left of what the proxy appended) changes nothing...
    expect(await DELETE(url, { 'x-forwarded-for': '198.51.100.7, 192.0.2.1' })).toBe(429)
    // ...and trusted hops (a second proxy, 10.1.2.3) are walked past, ports and brackets read.
    expect(await DELETE(url, { 'x-forwarded-for': '192.0.2.2:5000, 10.1.2.3' })).toBe(429)
    expect(await DELETE(url, { 'x-forwarded-for': '[2001:db8:0:1::5]:443' })).toBe(404)
    // An IPv6 client counts per /64, as without a proxy.
    expect(await DELETE(url, { 'x-forwarded-for': '2001:db8:0:1::6' })).toBe(429)
    // No header, or one that can't be read (no address, too long, too many trusted hops, ','):
    // the proxy's own address, one bucket for them all, never an error.
    expect(await DELETE(url)).toBe(404)
    for (const unreadable of [
      'unknown',
      '192.0.2.9, not-an-address',
      '192.0.2.9,',
      // Over MAX_FORWARDED_HEADER_CHARS, though its right-most entry is an address.
      `${'192.0.2.9, '.repeat(MAX_FORWARDED_HEADER_CHARS / 10)}192.0.2.10`,
      // MAX_FORWARDED_HOPS trusted hops: the client's entry, one further, is not read.
      `192.0.2.9, ${Array(MAX_FORWARDED_HOPS).fill('10.0.0.1').join(', ')}`,
      '999.0.0.1',
    ]) {
      const shown = unreadable.slice(0, 80)
      expect(await DELETE(url, { 'x-forwarded-for': unreadable }), shown).toBe(429)
    }
    // The other header is not read: this proxy writes X-Forwarded-For.
    expect(await DELETE(url, { forwarded: 'for=192.0.2.50' })).toBe(429)
    // Every hop trusted: the left-most (an internal client).
    expect(await DELETE(url, { 'x-forwarded-for': '10.9.9.9, 10.1.2.3' })).toBe(404)
  })

  it('reads RFC 7239 Forwarded when server.forwardedHeader is "forwarded", and only it', async () => {
    const url = await serve({
      server: { writesPerMinute: 1, trustedProxies: ['127.0.0.1'], forwardedHeader: 'forwarded' },
    })
    expect(await DELETE(url, { forwarded: 'for=192.0.2.1;proto=https' })).toBe(404)
    expect(await DELETE(url, { forwarded: 'for=198.51.100.7, For="192.0.2.1:4711"' })).toBe(429)
    expect(await DELETE(url, { forwarded: 'for="[2001:db8::1]:4711";by=_proxy' })).toBe(404)
    expect(await DELETE(url, { 'x-forwarded-for': '192.0.2.77' })).toBe(404)
    // The proxy's own bucket, now spent: X-Forwarded-For, _hidden, no for=.
    for (const headers of [
      { 'x-forwarded-for': '192.0.2.78' } as Record<string, string>,
      { forwarded: 'for=_hidden' },
      { forwarded: 'proto=https;by=10.0.0.1' },
    ]) {
      expect(await DELETE(url, headers), JSON.stringify(headers)).toBe(429)
    }
  })
})

describe('rateClassOf', () => {
  it('counts admin routes as writes, the rest but public routes and preflights as reads', () => {
    const classes: Array<[method: string, path: string, routeClass: string | undefined]> = [
      ['PUT', '/v1/libraries/demo', 'write'],
      ['POST', '/v1/feedback', 'write'],
      ['POST', '/v1/snapshots', 'write'],
      ['POST', '/v1/libraries/demo/examples', 'write'],
      ['POST', '/v1/select-tools', 'read'],
      ['POST', '/mcp', 'read'],
      ['GET', '/no/such/route', 'read'],
      ['GET', '/healthz', undefined],
      ['OPTIONS', '/v1/feedback', undefined],
    ]
    for (const [method, path, routeClass] of classes) {
      expect(rateClassOf(method, path), `${method} ${path}`).toBe(routeClass)
    }
  })
})

describe('TokenBuckets', () => {
  it('keeps at most maxClients buckets, forgetting the one seen least recently', () => {
    const buckets = new TokenBuckets<string>(1, { maxClients: 1000 })
    // A flood from a million addresses, each spending its one token.
    let refused = 0
    for (let client = 0; client < 1_000_000; client += 1) {
      if (buckets.take(`10.${client}`, 1, 0) !== 0) refused += 1
    }
    expect({ refused, size: buckets.size }).toEqual({ refused: 0, size: 1000 })
    // A client kept busy stays limited through another flood.
    expect(buckets.take('busy', 1, 0)).toBe(0)
    const waits = new Set<number>()
    for (let client = 0; client < 5000; client += 1) {
      waits.add(buckets.take('busy', 1, 0))
      buckets.take(`flood-${client}`, 1, 0)
    }
    expect([...waits]).toEqual([60])
    expect(buckets.size).toBe(1000)
  })

  it('refills perMinute a minute, up to perMinute', () => {
    const buckets = new TokenBuckets<string>(60)
    for (let index = 0; index < 60; index += 1) expect(buckets.take('a', 1, 0)).toBe(0)
    expect(buckets.take('a', 1, 0)).toBe(1)
    expect(buckets.take('a', 1, 1000)).toBe(0)
    expect(buckets.take('a', 1, 1000)).toBe(1)
    // An hour idle: a full bucket again, no more.
    for (let index = 0; index < 60; index += 1) expect(buckets.take('a', 1, 3_600_000)).toBe(0)
    expect(buckets.take('a', 1, 3_600_000)).toBe(1)
    expect(new TokenBuckets<string>(0).take('a', 1e9, 0)).toBe(0)
  })
})
