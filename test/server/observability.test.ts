/**
 * Operators' view over real HTTP: `GET /metrics` (Prometheus text from prom-client) after some
 * traffic, the access log (one JSON line per request, no keys or bodies) and request ids, and
 * the raw-path guard.
 */
import { request as httpRequest } from 'node:http'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listenApp } from '../helpers/listen-app.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createLogger, createMemoryLogger, type Logger } from '../../src/log.ts'
import { createApp } from '../../src/server/app.ts'
import { hasDotSegment } from '../../src/server/middleware/raw-path.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { buildIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const ADMIN_KEY = 'admin-key-for-observability-0123456789'
const READ_KEY = 'read-key-for-observability-0123456789'

interface Running {
  url: string
  service: ToolselService
  lines: string[]
  close(): Promise<void>
}

async function start(
  layer: ConfigLayer = {},
  logger: Logger & { lines: string[] } = createMemoryLogger(),
): Promise<Running> {
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-observe-'))
  const config = parseConfig({
    ...layer,
    library: { default: 'sample', indexDir },
  })
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start([await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config)])
  const { url, close } = await listenApp(createApp(service).fetch)
  return { url, service, lines: logger.lines, close }
}

const post = (key: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
  body: JSON.stringify(body),
})

/** The access-log records among the logger's lines. */
function accessRecords(lines: string[]): Array<Record<string, any>> {
  return lines
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((record) => record.msg === 'request')
}

/** `name{labels} value` lines of a Prometheus text exposition, by series. */
function series(text: string): Map<string, number> {
  const values = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    values.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return values
}

describe('metrics and access log over real HTTP', () => {
  let server: Running
  beforeAll(async () => {
    server = await start({ auth: { adminKey: ADMIN_KEY, readKeys: [READ_KEY] } })
  })
  afterAll(() => server.close())

  it('counts requests per route template and status, times stages, and reports the libraries', async () => {
    const { url } = server
    for (let index = 0; index < 3; index += 1) {
      const response = await fetch(
        `${url}/v1/select-tools`,
        post(READ_KEY, { instruction: 'what is the weather in Paris' }),
      )
      expect(response.status).toBe(200)
    }
    expect((await fetch(`${url}/v1/libraries/sample`, { headers: auth(READ_KEY) })).status).toBe(
      200,
    )
    expect((await fetch(`${url}/v1/libraries/nope`, { headers: auth(READ_KEY) })).status).toBe(404)
    expect((await fetch(`${url}/no/such/route/${'x'.repeat(50)}`)).status).toBe(401)

    // Metrics need a read key when keys are configured.
    expect((await fetch(`${url}/metrics`)).status).toBe(401)
    const response = await fetch(`${url}/metrics`, { headers: auth(READ_KEY) })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    const values = series(text)

    expect(
      values.get(
        'toolsel_http_requests_total{method="POST",route="/v1/select-tools",status="200"}',
      ),
    ).toBe(3)
    expect(
      values.get(
        'toolsel_http_requests_total{method="GET",route="/v1/libraries/:library",status="404"}',
      ),
    ).toBe(1)
    // Raw paths never become label values.
    expect(
      values.get('toolsel_http_requests_total{method="GET",route="unmatched",status="401"}'),
    ).toBe(1)
    expect(text).not.toContain('xxxxxxxx')
    expect(
      values.get(
        'toolsel_http_request_duration_seconds_count{method="POST",route="/v1/select-tools",status="200"}',
      ),
    ).toBe(3)
    expect(
      values.get(
        'toolsel_http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/select-tools",status="200"}',
      ),
    ).toBe(3)
    for (const stage of ['plan', 'retrieve', 'rerank', 'select', 'total']) {
      expect(values.get(`toolsel_pipeline_stage_duration_seconds_count{stage="${stage}"}`)).toBe(3)
    }
    expect(values.get('toolsel_library_tools{library="sample"}')).toBe(SAMPLE_TOOLS.length)
    const hash = server.service.library('sample').library.contentHash.slice(0, 16)
    expect(
      values.get(
        `toolsel_library_info{library="sample",content_hash="${hash}",retriever="bm25",default="true"}`,
      ),
    ).toBe(1)
    expect(values.get('toolsel_library_examples_version{library="sample"}')).toBe(0)
    expect(values.get('toolsel_ready')).toBe(1)
    const { plan, select } = server.service.config
    expect(values.get(`toolsel_model_loaded{kind="planner",component="${plan.planner}"}`)).toBe(1)
    expect(values.get(`toolsel_model_loaded{kind="selector",component="${select.selector}"}`)).toBe(
      1,
    )
    // The HELP line says what clears an entry, as /readyz degraded (round 43: a stand-in whose
    // endpoint failed goes once the openai: model it stood in for answers).
    expect(text).toMatch(
      /^# HELP toolsel_model_degraded .*until a use without a fallback; an openai: fallback whose endpoint failed also once the openai: model it stood in for answers\.$/m,
    )
    // prom-client's default metrics: event-loop lag among them.
    expect(values.has('nodejs_eventloop_lag_seconds')).toBe(true)
    expect(values.has('nodejs_eventloop_lag_p99_seconds')).toBe(true)
    expect(values.has('process_resident_memory_bytes')).toBe(true)
  })

  it('writes one JSON access-log line per request with the request id, never keys or bodies', async () => {
    const { url, lines } = server
    lines.length = 0
    const secret = 'a body word nobody should log: zebracorn'
    const given = await fetch(
      `${url}/v1/select-tools`,
      post(READ_KEY, { instruction: secret }, { 'x-request-id': 'trace-abc.123' }),
    )
    expect(given.headers.get('x-request-id')).toBe('trace-abc.123')
    // An unacceptable id (too long, odd characters) is replaced by a fresh one.
    const replaced = await fetch(`${url}/v1/search-tools`, {
      ...post(READ_KEY, { query: 'weather', library: 'sample' }),
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${READ_KEY}`,
        'x-request-id': `bad id ${'y'.repeat(200)}`,
      },
    })
    const generated = replaced.headers.get('x-request-id')!
    expect(generated).toMatch(/^[0-9a-f-]{36}$/)
    const denied = await fetch(`${url}/v1/libraries/sample`, {
      method: 'DELETE',
      headers: { ...auth(READ_KEY), 'x-request-id': 'denied-1' },
    })
    expect(denied.status).toBe(403)
    expect(denied.headers.get('x-request-id')).toBe('denied-1')

    const records = accessRecords(lines)
    expect(records).toHaveLength(3)
    expect(records[0]).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/v1/select-tools',
      status: 200,
      requestId: 'trace-abc.123',
      library: 'sample',
    })
    expect(records[0].ms).toBeGreaterThan(0)
    expect(records[1]).toMatchObject({ requestId: generated, library: 'sample', status: 200 })
    expect(records[2]).toMatchObject({
      method: 'DELETE',
      route: '/v1/libraries/:library',
      status: 403,
      error: 'FORBIDDEN',
      requestId: 'denied-1',
      library: 'sample',
    })
    const logged = lines.join('\n')
    expect(logged).not.toContain(READ_KEY)
    expect(logged).not.toContain('zebracorn')
    expect(logged).not.toContain('yyyyyyyy')
  })

  it('answers 400 to raw paths with dot segments instead of acting on another library', async () => {
    const before = server.service.library('sample').library.contentHash
    for (const path of [
      '/v1/libraries/./sample',
      '/v1/libraries/%2e/sample',
      '/v1/libraries/x/../sample',
      '/v1/libraries/%2E%2e/v1/libraries/sample',
    ]) {
      const { status, body } = await rawRequest(server.url, 'PUT', path, ADMIN_KEY, '[]')
      expect(status, path).toBe(400)
      expect(JSON.parse(body).error.code).toBe('INVALID_INPUT')
    }
    expect(server.service.library('sample').library.contentHash).toBe(before)
    expect(hasDotSegment('/v1/libraries/a.b/tools/x..y?q=/../')).toBe(false)
    expect(hasDotSegment('/v1/libraries/..')).toBe(true)
  })
})

describe('access log settings', () => {
  it('log.access off writes no access lines; metrics stay open without keys', async () => {
    const server = await start({ log: { access: 'off' } })
    try {
      await fetch(`${server.url}/healthz`)
      const metrics = await fetch(`${server.url}/metrics`)
      expect(metrics.status).toBe(200)
      expect(await metrics.text()).toContain(
        'toolsel_http_requests_total{method="GET",route="/healthz",status="200"} 1',
      )
      expect(accessRecords(server.lines)).toEqual([])
    } finally {
      await server.close()
    }
  })

  it('writes no access lines below the logger level, and the metrics still count the requests', async () => {
    const lines: string[] = []
    const logger = Object.assign(
      createLogger('warn', (line) => lines.push(line)),
      { lines },
    )
    expect([logger.enabled('info'), logger.enabled('warn'), logger.enabled('error')]).toEqual([
      false,
      true,
      true,
    ])
    const server = await start({ log: { access: 'info' } }, logger)
    try {
      await fetch(`${server.url}/healthz`)
      const metrics = await fetch(`${server.url}/metrics`)
      expect(await metrics.text()).toContain(
        'toolsel_http_requests_total{method="GET",route="/healthz",status="200"} 1',
      )
      expect(accessRecords(lines)).toEqual([])
    } finally {
      await server.close()
    }
  })
})

function auth(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` }
}

/** A request whose target is sent exactly as written (fetch would resolve the dot segments). */
function rawRequest(
  url: string,
  method: string,
  path: string,
  key: string,
  body: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        hostname,
        port,
        method,
        path,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => (text += chunk.toString()))
        response.on('end', () => resolve({ status: response.statusCode!, body: text }))
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}
