/**
 * Each endpoint /openapi.json documents, called for real: its success and one error, each status
 * among the operation's documented responses and each JSON body valid against the schema
 * documented for that status (ajv, JSON Schema 2020-12 as OpenAPI 3.1 has it).
 */
import { mkdtemp } from 'node:fs/promises'
import { request as httpRequest, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { createAdaptorServer } from '@hono/node-server'
import { describe, expect, it } from 'vitest'
import { answerClientErrors, clientErrorAnswer } from '../../src/server/client-error.ts'
import { createConnectionLimit } from '../../src/server/connection-limits.ts'
import { indexFs } from '../../src/store/library-lifecycle.ts'
import { createTestApp, postJson, readJson } from './test-service.ts'

type Call = [method: string, path: string, init?: RequestInit]

const put = (body: unknown): RequestInit => ({
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
})
const TOOL = {
  id: 'notes.add_note',
  name: 'add_note',
  description: 'Adds a note to the notebook.',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
}
/** A tool whose id holds U+202E: the PUT answer lists it in `import.suspiciousIds`. */
const SPOOF = { id: 'notes.rtl\u202etxt.exe', name: 'spoof', description: 'Opens a file.' }

/** Documented path and method → the calls made of it: a success first, then errors. */
const CALLS: Record<string, Call[]> = {
  'post /v1/select-tools': [
    ['POST', '/v1/select-tools', postJson({ instruction: 'Email Ann the weather in Paris' })],
    ['POST', '/v1/select-tools', postJson({})],
    ['POST', '/v1/select-tools', postJson({ instruction: 'x', library: 'nope' })],
  ],
  'post /v1/search-tools': [
    ['POST', '/v1/search-tools', postJson({ query: 'send an email' })],
    ['POST', '/v1/search-tools', postJson({ query: '' })],
  ],
  'post /v1/feedback': [
    ['POST', '/v1/feedback', postJson({ instruction: 'Text Bob', used: ['sms.send_sms'] })],
    ['POST', '/v1/feedback', postJson({ instruction: 'Text Bob', used: ['nope.tool'] })],
  ],
  'post /v1/rewards/planner': [
    [
      'POST',
      '/v1/rewards/planner',
      postJson({
        instruction: 'Email Ann',
        gold: ['mail.send_email'],
        completions: ['["send an email to Ann"]'],
      }),
    ],
    ['POST', '/v1/rewards/planner', postJson({ instruction: 'x' })],
  ],
  'post /v1/rewards/selector': [
    [
      'POST',
      '/v1/rewards/selector',
      postJson({ gold: 'mail.send_email', completions: ['mail.send_email', 'none'] }),
    ],
    ['POST', '/v1/rewards/selector', postJson({ completions: [] })],
  ],
  'get /v1/libraries': [['GET', '/v1/libraries']],
  'put /v1/libraries/{library}': [
    ['PUT', '/v1/libraries/notes', put([TOOL])],
    ['PUT', '/v1/libraries/notes', put([TOOL])],
    // import.suspiciousIds, then the warning of a rebuild that loses a retriever part.
    ['PUT', '/v1/libraries/notes?retriever=bm25,dense:hashing', put([TOOL, SPOOF])],
    ['PUT', '/v1/libraries/notes', put([TOOL])],
    ['PUT', '/v1/libraries/notes', put({ not: 'tools' })],
  ],
  'get /v1/libraries/{library}': [
    ['GET', '/v1/libraries/sample'],
    ['GET', '/v1/libraries/nope'],
  ],
  'post /v1/libraries/{library}/examples': [
    [
      'POST',
      '/v1/libraries/notes/examples',
      postJson({ examples: [{ instruction: 'Note milk', tools: ['notes.add_note'] }] }),
    ],
    ['POST', '/v1/libraries/notes/examples', postJson([])],
    [
      'POST',
      '/v1/libraries/nope/examples',
      postJson({ examples: [{ instruction: 'Note milk', tools: ['notes.add_note'] }] }),
    ],
  ],
  'get /v1/libraries/{library}/tools/{id}': [
    ['GET', '/v1/libraries/sample/tools/mail.send_email'],
    ['GET', '/v1/libraries/sample/tools/mail.send_email?toolFormat=openai'],
    ['GET', '/v1/libraries/sample/tools/nope.tool'],
  ],
  'post /v1/libraries/{library}/tools/batch': [
    ['POST', '/v1/libraries/sample/tools/batch', postJson({ ids: ['mail.send_email'] })],
    ['POST', '/v1/libraries/sample/tools/batch', postJson({ ids: [] })],
  ],
  'get /v1/components': [['GET', '/v1/components']],
  'get /healthz': [['GET', '/healthz']],
  'get /readyz': [['GET', '/readyz']],
  'post /v1/snapshots': [['POST', '/v1/snapshots']],
  'get /metrics': [['GET', '/metrics']],
  'delete /v1/libraries/{library}': [
    ['DELETE', '/v1/libraries/notes'],
    ['DELETE', '/v1/libraries/notes'],
  ],
}

/**
 * `schema` with every object that lists its properties closed to others (a copy), so a body
 * holding a field the document does not name fails, as one lacking a required field does.
 */
function closed(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(closed)
  if (schema === null || typeof schema !== 'object') return schema
  const copy = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, closed(v)]))
        : closed(value),
    ]),
  )
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false
  return copy
}

describe('/openapi.json against real responses', () => {
  it('answers each documented endpoint with a documented status and a body its schema accepts', async () => {
    const snapshotDir = await mkdtemp(join(tmpdir(), 'toolsel-openapi-snapshots-'))
    const { app } = await createTestApp({ config: { library: { snapshotDir } } })
    const document = await readJson(await app.request('/openapi.json'))
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    const documented = Object.entries(document.paths as Record<string, any>).flatMap(
      ([path, item]) =>
        Object.keys(item)
          .filter((method) => method !== 'parameters')
          .map((method) => `${method} ${path}`),
    )
    expect(Object.keys(CALLS).sort()).toEqual(documented.sort())
    const seen: string[] = []
    const bodies: any[] = []
    for (const [operation, calls] of Object.entries(CALLS)) {
      const [method, path] = operation.split(' ')
      const responses = document.paths[path][method].responses as Record<string, any>
      for (const [verb, url, init] of calls) {
        const response = await app.request(url, { method: verb, ...init })
        const where = `${verb} ${url} -> ${response.status}`
        seen.push(`${operation} ${response.status}`)
        expect(Object.keys(responses), where).toContain(String(response.status))
        const content = responses[response.status].content as Record<string, any> | undefined
        const type = response.headers.get('content-type') ?? ''
        if (content === undefined) {
          // Only a bodiless answer goes without a documented body (was: /healthz's JSON).
          expect({ where, body: await response.text() }).toEqual({ where, body: '' })
          continue
        }
        const [mediaType, media] = Object.entries(content)[0]
        expect(type.split(';')[0], where).toBe(mediaType)
        if (mediaType !== 'application/json') continue
        const body = await response.json()
        bodies.push(body)
        const validate = ajv.compile(closed(media.schema))
        expect({ where, errors: validate(body) ? [] : validate.errors }).toEqual({
          where,
          errors: [],
        })
      }
    }
    // The PUT answers' newer parts, each one a documented field the bodies really held.
    const puts = bodies.slice(seen.indexOf('put /v1/libraries/{library} 201'))
    expect(puts[2].import.suspiciousIds).toEqual([
      { id: 'notes.rtl\\u202etxt.exe', tool: 1, field: 'id', codePoint: 'U+202E', index: 9 },
    ])
    expect(puts[3].warnings).toEqual([
      expect.stringMatching(/^Library "notes" lost the retriever parts dense:hashing: /),
    ])
    // The statuses each call really got: a success of each, and the error it was made for.
    expect(seen).toEqual([
      'post /v1/select-tools 200',
      'post /v1/select-tools 400',
      'post /v1/select-tools 404',
      'post /v1/search-tools 200',
      'post /v1/search-tools 400',
      'post /v1/feedback 200',
      'post /v1/feedback 400',
      'post /v1/rewards/planner 200',
      'post /v1/rewards/planner 400',
      'post /v1/rewards/selector 200',
      'post /v1/rewards/selector 400',
      'get /v1/libraries 200',
      'put /v1/libraries/{library} 201',
      'put /v1/libraries/{library} 200',
      'put /v1/libraries/{library} 200',
      'put /v1/libraries/{library} 200',
      'put /v1/libraries/{library} 400',
      'get /v1/libraries/{library} 200',
      'get /v1/libraries/{library} 404',
      'post /v1/libraries/{library}/examples 200',
      'post /v1/libraries/{library}/examples 400',
      'post /v1/libraries/{library}/examples 404',
      'get /v1/libraries/{library}/tools/{id} 200',
      'get /v1/libraries/{library}/tools/{id} 200',
      'get /v1/libraries/{library}/tools/{id} 404',
      'post /v1/libraries/{library}/tools/batch 200',
      'post /v1/libraries/{library}/tools/batch 400',
      'get /v1/components 200',
      'get /healthz 200',
      'get /readyz 200',
      'post /v1/snapshots 201',
      'get /metrics 200',
      'delete /v1/libraries/{library} 204',
      'delete /v1/libraries/{library} 404',
    ])
  })

  it("answers the middleware's 401 and 403 as documented on every operation", async () => {
    const admin = 'admin-key-0123456789abcdef'
    const read = 'read-key-0123456789abcdef'
    const { app } = await createTestApp({ config: { auth: { adminKey: admin, readKeys: [read] } } })
    const document = await readJson(await app.request('/openapi.json'))
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    const auth = (key: string) => ({ authorization: `Bearer ${key}` })
    const cases: Array<[operation: string, url: string, init: RequestInit, status: number]> = [
      ['post /v1/select-tools', '/v1/select-tools', postJson({ instruction: 'x' }), 401],
      [
        'put /v1/libraries/{library}',
        '/v1/libraries/notes',
        { ...put([TOOL]), headers: { 'content-type': 'application/json', ...auth(read) } },
        403,
      ],
      ['get /healthz', 'http://evil.example/healthz', {}, 403],
    ]
    for (const [operation, url, init, status] of cases) {
      const [method, path] = operation.split(' ')
      const response = await app.request(url, { method: method.toUpperCase(), ...init })
      expect({ operation, status: response.status }).toEqual({ operation, status })
      const schema =
        document.paths[path][method].responses[status].content['application/json'].schema
      const validate = ajv.compile(schema)
      const body = await response.json()
      expect({ operation, errors: validate(body) ? [] : validate.errors }).toEqual({
        operation,
        errors: [],
      })
    }
  })

  it("documents on every operation the 429 a connection past server.maxConnectionsPerAddress gets, Node's parser's 408 and 431, and the 501 of a transfer coding", async () => {
    // The limit as serve installs it, on a real server: one connection held, a second answered.
    const limit = createConnectionLimit(1, { answerMs: 1500 })!
    const { app } = await createTestApp({ app: { connectionLimit: limit } })
    const document = await readJson(await app.request('/openapi.json'))
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    const server = createAdaptorServer({ fetch: app.fetch }) as Server
    server.on('connection', limit.admit)
    answerClientErrors(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const get = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest({ port, host: '127.0.0.1', path: '/healthz', agent: false })
        request.on('error', reject)
        request.on('response', (response) => {
          let body = ''
          response.on('data', (chunk) => (body += chunk))
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
        })
        request.end()
      })
    const within = connect(port, '127.0.0.1')
    within.on('error', () => undefined)
    try {
      await new Promise((resolve) => within.once('connect', resolve))
      const over = await get()
      expect(over.status).toBe(429)
      within.destroy()
      // Until the server has seen both close (the 429's connection closes after it).
      const open = () =>
        new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)))
      while ((await open()) > 0) await new Promise((resolve) => setTimeout(resolve, 20))
      expect((await get()).status).toBe(200)
      // Headers over Node's 16 KiB, on a connection of its own (the first has closed).
      const huge = await new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
        )
        let received = ''
        socket.on('data', (chunk) => (received += chunk.toString()))
        socket.on('error', () => undefined)
        socket.on('close', () => resolve(received))
      })
      expect(huge.split(' ')[1]).toBe('431')
      // A transfer coding besides chunked (middleware/transfer-coding.ts).
      const coded = await new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(
            'POST /v1/select-tools HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n',
          ),
        )
        let received = ''
        socket.on('data', (chunk) => (received += chunk.toString()))
        socket.on('error', () => undefined)
        socket.on('close', () => resolve(received))
      })
      expect(coded.split(' ')[1]).toBe('501')
      const timeout = Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })
      const bodies: Record<string, unknown> = {
        408: clientErrorAnswer(timeout).body,
        429: JSON.parse(over.body),
        431: JSON.parse(huge.split('\r\n\r\n')[1]),
        501: JSON.parse(coded.split('\r\n\r\n')[1]),
      }
      const missing: string[] = []
      for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(item)) {
          if (method === 'parameters') continue
          for (const [status, body] of Object.entries(bodies)) {
            const documented = operation.responses[status]
            if (documented === undefined) {
              missing.push(`${method} ${path} ${status}`)
              continue
            }
            const validate = ajv.compile(documented.content['application/json'].schema)
            expect({ path, status, errors: validate(body) ? [] : validate.errors }).toEqual({
              path,
              status,
              errors: [],
            })
          }
        }
      }
      expect(missing).toEqual([])
    } finally {
      within.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await app.close()
    }
  })

  it('answers a write on a full disk 507 and on an I/O error 500, as documented', async () => {
    const snapshotDir = await mkdtemp(join(tmpdir(), 'toolsel-openapi-snapshots-'))
    const { app } = await createTestApp({ config: { library: { snapshotDir } } })
    const document = await readJson(await app.request('/openapi.json'))
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    expect((await app.request('/v1/libraries/notes', put([TOOL]))).status).toBe(201)
    const examples = { examples: [{ instruction: 'Note milk', tools: ['notes.add_note'] }] }
    const cases: Array<[operation: string, url: string, init: RequestInit, errno: string]> = [
      ['put /v1/libraries/{library}', '/v1/libraries/notes', put([TOOL, SPOOF]), 'ENOSPC'],
      ['put /v1/libraries/{library}', '/v1/libraries/notes', put([TOOL, SPOOF]), 'EIO'],
      [
        'post /v1/libraries/{library}/examples',
        '/v1/libraries/notes/examples',
        postJson(examples),
        'ENOSPC',
      ],
      [
        'post /v1/feedback',
        '/v1/feedback',
        postJson({ library: 'notes', instruction: 'Note milk', used: ['notes.add_note'] }),
        'ENOSPC',
      ],
      ['post /v1/snapshots', '/v1/snapshots', { method: 'POST' }, 'ENOSPC'],
    ]
    const realSync = indexFs.syncPath
    const seen: string[] = []
    try {
      for (const [operation, url, init, errno] of cases) {
        // The store's file system seam (test/server/save-write-failed.test.ts): each fsync of a
        // write's temporary copy fails as a full disk or a failing one does.
        indexFs.syncPath = async (path) => {
          if (!path.includes('.tmp-')) return realSync(path)
          throw Object.assign(new Error(`${errno}: failed, fsync '${path}'`), { code: errno })
        }
        const [method, path] = operation.split(' ')
        const response = await app.request(url, init)
        const body = await response.json()
        seen.push(`${operation} ${errno} ${response.status} ${body.error?.code}`)
        const documented = document.paths[path][method].responses[response.status]
        expect({ operation, errno, documented: documented !== undefined }).toEqual({
          operation,
          errno,
          documented: true,
        })
        const validate = ajv.compile(closed(documented.content['application/json'].schema))
        expect({ operation, errors: validate(body) ? [] : validate.errors }).toEqual({
          operation,
          errors: [],
        })
      }
    } finally {
      indexFs.syncPath = realSync
    }
    expect(seen).toEqual([
      'put /v1/libraries/{library} ENOSPC 507 INSUFFICIENT_STORAGE',
      'put /v1/libraries/{library} EIO 500 INDEX_WRITE_FAILED',
      'post /v1/libraries/{library}/examples ENOSPC 507 INSUFFICIENT_STORAGE',
      'post /v1/feedback ENOSPC 507 INSUFFICIENT_STORAGE',
      'post /v1/snapshots ENOSPC 507 INSUFFICIENT_STORAGE',
    ])
  })
})
