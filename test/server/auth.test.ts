/**
 * API keys, route classification, the gateway library's write protection, the model allowlist
 * and Host/Origin checks: the probes that found toolsel open to anyone who reached its port.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import { describe, expect, it } from 'vitest'
import { checkBindSafety } from '../../src/cli/serve-command.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { isToolselError } from '../../src/errors.ts'
import { accessFor, ROUTE_ACCESS } from '../../src/server/auth/route-access.ts'
import { createTestApp, postJson, readJson } from './test-service.ts'

const ADMIN = 'admin-key-0123456789abcdef'
const READ = 'read-key-0123456789abcdef'
const SAMPLE_ONLY = 'sample-only-0123456789abcdef'
const MCP_SLACK = 'mcp-slack-0123456789abcdef'
const OTHER_FIRST = 'other-first-0123456789abcdef'
const OTHER_AND_SAMPLE = 'other-sample-0123456789abcdef'

const withKey = (key: string | undefined, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: {
    ...(init.headers as Record<string, string> | undefined),
    ...(key ? { authorization: `Bearer ${key}` } : {}),
  },
})

const upload = JSON.stringify([
  { id: 'x.send', name: 'send', description: 'Send a thing.' },
  { id: 'x.find', name: 'find', description: 'Find a thing.' },
])

const put = (key?: string) =>
  withKey(key, { method: 'PUT', body: upload, headers: { 'content-type': 'application/json' } })

async function keyedApp() {
  return createTestApp({
    config: {
      auth: {
        adminKey: ADMIN,
        readKeys: [
          READ,
          { key: SAMPLE_ONLY, name: 'sample-reader', libraries: ['sample'] },
          { key: MCP_SLACK, name: 'slack-agent', servers: ['slack'] },
          { key: OTHER_FIRST, name: 'other-reader', libraries: ['other', 'third'] },
          { key: OTHER_AND_SAMPLE, name: 'both-reader', libraries: ['other', 'sample'] },
        ],
      },
    },
  })
}

describe('API keys', () => {
  it('PUT and DELETE: 401 without a key, 403 with a read key, 2xx with the admin key', async () => {
    const { app } = await keyedApp()
    const none = await app.request('/v1/libraries/extra', put())
    expect(none.status).toBe(401)
    expect((await readJson(none)).error.code).toBe('UNAUTHORIZED')
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/)
    const wrong = await app.request('/v1/libraries/extra', put('not-a-key-at-all-nope'))
    expect(wrong.status).toBe(401)
    const read = await app.request('/v1/libraries/extra', put(READ))
    expect(read.status).toBe(403)
    expect((await readJson(read)).error.code).toBe('FORBIDDEN')
    expect((await app.request('/v1/libraries/extra', put(ADMIN))).status).toBe(201)
    expect((await app.request('/v1/libraries/extra', put(ADMIN))).status).toBe(200)

    const remove = (key?: string) =>
      app.request('/v1/libraries/extra', withKey(key, { method: 'DELETE' }))
    expect((await remove()).status).toBe(401)
    expect((await remove(READ)).status).toBe(403)
    expect((await remove(ADMIN)).status).toBe(204)
  })

  it('a path with bidi or control characters is quoted escaped in the 401, 403 and 404 messages', async () => {
    // Was: the decoded path as it came (a raw U+202E reorders what a terminal or log viewer shows).
    const { app } = await keyedApp()
    const tail = 'x%E2%80%AEexe.txt%1B[2J'
    const shownTail = 'x\\u202eexe.txt\\u001b[2J'
    const cases: Array<[string | undefined, string, string, number]> = [
      [undefined, 'DELETE', '/v1/libraries/', 401],
      [READ, 'DELETE', '/v1/libraries/', 403],
      [READ, 'POST', '/v1/libraries/', 405],
      [ADMIN, 'GET', '/v1/nope/', 404],
    ]
    for (const [key, method, route, status] of cases) {
      const path = route + tail
      const shown = route + shownTail
      const response = await app.request(path, withKey(key, { method }))
      expect(response.status, `${method} ${key}`).toBe(status)
      const { message } = (await readJson(response)).error
      expect(message, `${method} ${key}`).toContain(`${method} ${shown}`)
      expect(message).not.toMatch(/[\u202e\u001b]/)
    }
  })

  it('a path or method no route serves: 404/405 for a read key as for the admin key, 401 without a key', async () => {
    const { app } = await keyedApp()
    for (const [method, path, hint, status] of [
      ['GET', '/v1/select-tools', ' /v1/select-tools takes POST, not GET.', 405],
      [
        'GET',
        '/v1/libraries/sample/tools',
        ' Did you mean GET /v1/libraries/sample/tools/<id>?',
        404,
      ],
      ['POST', '/v1/selectTools', '', 404],
    ] as const) {
      for (const key of [READ, ADMIN]) {
        const response = await app.request(path, withKey(key, { method }))
        expect(response.status, `${method} ${path}`).toBe(status)
        expect((await readJson(response)).error).toEqual({
          code: status === 405 ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND',
          message: `No route for ${method} ${path}.${hint} See /openapi.json.`,
        })
      }
      expect((await app.request(path, { method })).status).toBe(401)
    }
  })

  it("a route's path with another method: 405 naming its methods, in the message and in Allow", async () => {
    // Was a 404 NOT_FOUND: RFC 9110 (15.5.6) answers a method the path does not take with 405
    // and an Allow header, which clients and proxies read.
    const { app } = await createTestApp()
    const cases: Array<[string, string, string, string]> = [
      ['GET', '/v1/search-tools', 'POST', 'POST'],
      ['PATCH', '/v1/libraries/sample', 'GET, PUT, DELETE', 'GET, PUT, DELETE, HEAD'],
      ['POST', '/v1/libraries', 'GET', 'GET, HEAD'],
      ['DELETE', '/v1/select-tools', 'POST', 'POST'],
    ]
    for (const [method, path, takes, allow] of cases) {
      const response = await app.request(path, { method })
      expect(response.status, `${method} ${path}`).toBe(405)
      expect(response.headers.get('allow'), `${method} ${path}`).toBe(allow)
      expect((await readJson(response)).error, `${method} ${path}`).toEqual({
        code: 'METHOD_NOT_ALLOWED',
        message: `No route for ${method} ${path}. ${path} takes ${takes}, not ${method}. See /openapi.json.`,
      })
    }
  })

  it('a path with a trailing slash or one that stops short: the 404 names the path it serves', async () => {
    // Was: "No route for GET /v1/libraries/. See /openapi.json.", which leaves a new user
    // guessing whether the path or the method is wrong.
    const { app } = await createTestApp()
    const cases: Array<[string, string, string]> = [
      ['GET', '/v1/libraries/', ' Did you mean GET /v1/libraries (no trailing slash)?'],
      ['POST', '/v1/select-tools/', ' Did you mean POST /v1/select-tools (no trailing slash)?'],
      ['GET', '/v1/nope', ''],
      // A path that stops short: the routes one segment below it.
      [
        'POST',
        '/v1/libraries/sample/tools',
        ' Did you mean POST /v1/libraries/sample/tools/batch?',
      ],
      [
        'POST',
        '/v1/rewards',
        ' Did you mean POST /v1/rewards/planner or POST /v1/rewards/selector?',
      ],
    ]
    for (const [method, path, hint] of cases) {
      const response = await app.request(path, { method })
      expect(response.status, `${method} ${path}`).toBe(404)
      expect((await readJson(response)).error, `${method} ${path}`).toEqual({
        code: 'NOT_FOUND',
        message: `No route for ${method} ${path}.${hint} See /openapi.json.`,
      })
    }
  })

  it('queries need a read or admin key; probes and the API description need none', async () => {
    const { app, logger } = await keyedApp()
    const search = (key?: string) =>
      app.request('/v1/search-tools', withKey(key, postJson({ query: 'send an email' })))
    expect((await search()).status).toBe(401)
    expect((await search(READ)).status).toBe(200)
    expect((await search(ADMIN)).status).toBe(200)
    expect((await app.request('/v1/libraries')).status).toBe(401)
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      expect((await app.request(path)).status).toBe(200)
    }
    // Keys never reach the log.
    const log = logger.lines.join('\n')
    for (const key of [ADMIN, READ]) expect(log).not.toContain(key)
  })

  it('a key limited to libraries sees and uses only those', async () => {
    const { app } = await keyedApp()
    expect((await app.request('/v1/libraries/other', put(ADMIN))).status).toBe(201)
    const list = await readJson(await app.request('/v1/libraries', withKey(SAMPLE_ONLY)))
    expect(list.libraries.map((entry: { name: string }) => entry.name)).toEqual(['sample'])
    const other = await app.request(
      '/v1/search-tools',
      withKey(SAMPLE_ONLY, postJson({ query: 'send', library: 'other' })),
    )
    expect(other.status).toBe(403)
    expect((await readJson(other)).error.message).toContain('"other"')
    expect(
      (await app.request('/v1/libraries/other/tools/x.send', withKey(SAMPLE_ONLY))).status,
    ).toBe(403)
    const own = await app.request(
      '/v1/search-tools',
      withKey(SAMPLE_ONLY, postJson({ query: 'send an email', library: 'sample' })),
    )
    expect(own.status).toBe(200)
  })

  it("a call naming no library uses the server's default when the key may, else the key's first library", async () => {
    const { app } = await keyedApp()
    expect((await app.request('/v1/libraries/other', put(ADMIN))).status).toBe(201)
    // The server's default is "sample": outside OTHER_FIRST's libraries, so "other" (its first).
    const search = await app.request(
      '/v1/search-tools',
      withKey(OTHER_FIRST, postJson({ query: 'send a thing' })),
    )
    expect(search.status).toBe(200)
    const found = await readJson(search)
    expect(found.library).toBe('other')
    expect(found.results.map((tool: { id: string }) => tool.id)).toContain('x.send')
    const select = await app.request(
      '/v1/select-tools',
      withKey(OTHER_FIRST, postJson({ instruction: 'send a thing', planner: 'none' })),
    )
    expect(select.status).toBe(200)
    expect((await readJson(select)).components.library).toBe('other')
    const reward = await app.request(
      '/v1/rewards/planner',
      withKey(
        OTHER_FIRST,
        postJson({ instruction: 'send a thing', gold: ['x.send'], completions: ['send'] }),
      ),
    )
    expect(reward.status).toBe(200)
    expect((await readJson(reward)).library).toBe('other')
    // The key is told which library that is.
    const listed = await readJson(await app.request('/v1/libraries', withKey(OTHER_FIRST)))
    expect(listed.libraries.map((entry: any) => [entry.name, entry.isDefault])).toEqual([
      ['other', true],
    ])
    const one = await readJson(await app.request('/v1/libraries/other', withKey(OTHER_FIRST)))
    expect(one.isDefault).toBe(true)
    // Naming a library outside the key stays forbidden.
    const named = await app.request(
      '/v1/search-tools',
      withKey(OTHER_FIRST, postJson({ query: 'send', library: 'sample' })),
    )
    expect(named.status).toBe(403)
    // A key that may use the server's default gets it, whatever its order.
    const both = await app.request(
      '/v1/search-tools',
      withKey(OTHER_AND_SAMPLE, postJson({ query: 'send an email' })),
    )
    expect((await readJson(both)).library).toBe('sample')
    const bothListed = await readJson(await app.request('/v1/libraries', withKey(OTHER_AND_SAMPLE)))
    expect(
      Object.fromEntries(bothListed.libraries.map((entry: any) => [entry.name, entry.isDefault])),
    ).toEqual({ sample: true, other: false })
    // Keys limited to no library: the server's default, as before.
    for (const key of [READ, ADMIN]) {
      const plain = await app.request('/v1/search-tools', withKey(key, postJson({ query: 'send' })))
      expect((await readJson(plain)).library).toBe('sample')
    }
  })

  it('a key limited to MCP servers loads only their tools over HTTP', async () => {
    const { app } = await keyedApp()
    const slack = await app.request('/v1/libraries/sample/tools/batch', {
      ...withKey(MCP_SLACK, postJson({ ids: ['mail.send_email'] })),
    })
    expect(slack.status).toBe(404)
    expect((await readJson(slack)).error.message).toContain("within this key's scope")
    // The hint about a tool name names no tool outside the key's scope.
    const named = await app.request('/v1/libraries/sample/tools/batch', {
      ...withKey(MCP_SLACK, postJson({ ids: ['send_email'] })),
    })
    expect(named.status).toBe(404)
    expect((await readJson(named)).error.message).toBe('Library "sample" has no tool "send_email".')
    const search = await app.request(
      '/v1/search-tools',
      withKey(MCP_SLACK, postJson({ query: 'send' })),
    )
    expect(search.status).toBe(403)
  })
})

describe('route classification', () => {
  it('lists every documented route explicitly; an unlisted route needs the admin key', async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    for (const [path, operations] of Object.entries(document.paths as Record<string, object>)) {
      const honoPath = path.replace(/\{id\}$/, 'x').replace(/\{(\w+)\}/g, 'name')
      for (const method of Object.keys(operations).filter((key) => key !== 'parameters')) {
        const row = ROUTE_ACCESS.find(
          (entry) =>
            entry.method === method.toUpperCase() && accessFor(entry.method, honoPath) !== 'admin',
        )
        const access = accessFor(method.toUpperCase(), honoPath)
        // POST routes that change state (usage examples, #10) are writes too.
        const postWrites = ['/v1/feedback', '/v1/libraries/{library}/examples', '/v1/snapshots']
        const writes =
          ['put', 'delete'].includes(method) || (method === 'post' && postWrites.includes(path))
        expect(access, `${method} ${path}`).toBe(
          writes ? 'admin' : path.startsWith('/v1') || path === '/metrics' ? 'read' : 'public',
        )
        if (!writes) expect(row, `${method} ${path} is listed`).toBeDefined()
      }
    }
    expect(accessFor('POST', '/v1/feedback')).toBe('admin')
    // Looked up again (from the cache of recent paths): the same answers.
    expect(accessFor('POST', '/v1/feedback')).toBe('admin')
    expect(accessFor('POST', '/v1/select-tools')).toBe('read')
    expect(accessFor('POST', '/v1/select-tools')).toBe('read')
    expect(accessFor('GET', '/v1/libraries/x/tools/a/b')).toBe('read')
    expect(accessFor('GET', '/v1/libraries/x/tools/a/b')).toBe('read')
    expect(accessFor('GET', '/v1/anything-new')).toBe('admin')
    expect(accessFor('HEAD', '/healthz')).toBe('public')
    expect(accessFor('GET', '/v1/libraries/a/tools/b/c')).toBe('read')
    expect(accessFor('GET', '/v1/libraries/a/tools')).toBe('admin')
  })
})

describe('write protection and request limits', () => {
  it('the gateway library cannot be written or deleted through /v1', async () => {
    const { app } = await createTestApp()
    const response = await app.request('/v1/libraries/gateway', put())
    expect(response.status).toBe(403)
    expect((await readJson(response)).error.message).toContain('gateway.library')
    const remove = await app.request('/v1/libraries/gateway', { method: 'DELETE' })
    expect(remove.status).toBe(403)
  })

  it('requests can only name configured planners and selectors, never a path', async () => {
    const { app } = await createTestApp()
    for (const body of [
      { instruction: 'send mail', planner: 'llm:onnx:/etc' },
      { instruction: 'send mail', planner: 'llm:onnx:/does-not-exist' },
      { instruction: 'send mail', selector: 'onnx:/tmp' },
      { instruction: 'send mail', planner: 'rule:random-1234' },
    ]) {
      const response = await app.request('/v1/select-tools', postJson(body))
      expect(response.status).toBe(400)
      const { error } = await readJson(response)
      expect(error.code).toBe('INVALID_INPUT')
      expect(error.message).toContain('server.allowedComponents')
      expect(error.message).not.toMatch(/exist|directory|ENOENT/i)
    }
    // Each field's message lists the ids of its own kind.
    const planner = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'send mail', planner: 'zzz' }),
    )
    expect((await readJson(planner)).error.message).toContain('(allowed: rule, none);')
    const selector = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'send mail', selector: 'zzz' }),
    )
    expect((await readJson(selector)).error.message).toContain('(allowed: learned, top1);')
    const allowed = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'send mail', planner: 'none', selector: 'top1' }),
    )
    expect(allowed.status).toBe(200)
  })
})

describe('Host and Origin checks', () => {
  it('a loopback server answers loopback host names only (DNS rebinding)', async () => {
    const { app } = await createTestApp()
    const evil = await app.request('http://evil.example/v1/libraries/x', put())
    expect(evil.status).toBe(403)
    expect((await readJson(evil)).error.message).toContain('server.allowedHosts')
    const mcp = await app.request('http://evil.example:8080/mcp', postJson({}))
    expect(mcp.status).toBe(403)
    expect((await app.request('http://localhost:8080/healthz')).status).toBe(200)
    expect((await app.request('http://127.0.0.1:8080/healthz')).status).toBe(200)
  })

  it('refuses foreign origins; configured CORS origins get CORS headers', async () => {
    const { app } = await createTestApp({
      config: { server: { corsOrigins: ['https://app.example'] } },
    })
    const foreign = await app.request('/v1/search-tools', {
      ...postJson({ query: 'send' }),
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
    })
    expect(foreign.status).toBe(403)
    const preflight = await app.request('/v1/search-tools', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example')
    const allowed = await app.request('/v1/search-tools', {
      ...postJson({ query: 'send an email' }),
      headers: { 'content-type': 'application/json', origin: 'https://app.example' },
    })
    expect(allowed.status).toBe(200)
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example')
  })
})

describe('the 401 and 403 of the middleware in /openapi.json', () => {
  /** Every operation of the published document, with a path to request it by. */
  async function operations(app: { request: (path: string) => Promise<Response> | Response }) {
    const document = await readJson(await app.request('/openapi.json'))
    return Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          .filter(([method]) => method !== 'parameters')
          .map(([method, operation]) => ({
            method: method.toUpperCase(),
            path,
            url: path.replace('{library}', 'sample').replace('{id}', 'mail.send_email'),
            operation,
            keyed: operation.security === undefined || operation.security.length > 0,
          })),
    )
  }

  /** Validates `response`'s body against what the operation publishes for its status. */
  async function expectPublished(operation: any, response: Response, label: string) {
    const published = operation.responses[String(response.status)]
    expect(published, `${label}: ${response.status} is listed`).toBeDefined()
    const validate = new Ajv2020({ strict: false }).compile(
      published.content['application/json'].schema,
    )
    const body = await readJson(response)
    expect(validate(body) ? [] : validate.errors, label).toEqual([])
    return body
  }

  it('every operation lists the 403 of the Host check, and its body validates', async () => {
    const { app } = await createTestApp()
    for (const { method, path, url, operation } of await operations(app)) {
      const response = await app.request(`http://evil.example${url}`, { method })
      expect(response.status, `${method} ${path}`).toBe(403)
      const body = await expectPublished(operation, response, `${method} ${path}`)
      expect(body.error.message).toContain('server.allowedHosts')
    }
  })

  it('every keyed operation lists the 401 of a missing key; the probes need none', async () => {
    const { app } = await keyedApp()
    for (const { method, path, url, operation, keyed } of await operations(app)) {
      const response = await app.request(url, { method })
      if (keyed) {
        expect(response.status, `${method} ${path}`).toBe(401)
        await expectPublished(operation, response, `${method} ${path}`)
      } else {
        expect(operation.responses['401'], `${method} ${path}`).toBeUndefined()
        expect(response.status, `${method} ${path}`).toBe(200)
      }
    }
  })
})

describe('bind safety', () => {
  it('no key: loopback only, unless --insecure-no-auth', () => {
    expect(checkBindSafety(parseConfig({}))).toMatch(/listening on 127\.0\.0\.1 only/)
    const open = parseConfig({ server: { host: '0.0.0.0' } })
    let error: unknown
    try {
      checkBindSafety(open)
    } catch (caught) {
      error = caught
    }
    expect(isToolselError(error, 'INVALID_CONFIG')).toBe(true)
    expect((error as Error).message).toContain('TOOLSEL_ADMIN_KEY')
    expect(
      checkBindSafety(parseConfig({ server: { host: '0.0.0.0' }, auth: { insecureNoAuth: true } })),
    ).toMatch(/^WARNING/)
    expect(
      checkBindSafety(parseConfig({ server: { host: '0.0.0.0' }, auth: { adminKey: ADMIN } })),
    ).toMatch(/admin key/)
  })
})
