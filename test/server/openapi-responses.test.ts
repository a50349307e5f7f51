/**
 * Each endpoint /openapi.json documents, called for real: its success and one error, each status
 * among the operation's documented responses and each JSON body valid against the schema
 * documented for that status (ajv, JSON Schema 2020-12 as OpenAPI 3.1 has it).
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { describe, expect, it } from 'vitest'
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
        const validate = ajv.compile(media.schema)
        expect({ where, errors: validate(body) ? [] : validate.errors }).toEqual({
          where,
          errors: [],
        })
      }
    }
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
})
