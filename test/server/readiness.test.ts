/**
 * `/readyz` over real HTTP: 503 until the gateway has synced its upstreams once (and `call_tool`
 * answers UPSTREAM_UNAVAILABLE, not UNKNOWN_TOOL, in that window), and a saved index that failed
 * to load is listed.
 */
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { McpGateway } from '../../src/mcp/gateway/mcp-gateway.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { call, errorOf } from '../mcp/fixtures/toolsel-harness.ts'
import { startWeatherUpstream } from '../mcp/fixtures/weather-upstream.ts'
import { listenApp } from '../helpers/listen-app.ts'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** An HTTP server that accepts requests and never answers them (an upstream stuck at start-up). */
async function startHangingServer(): Promise<string> {
  const server: HttpServer = createServer(() => undefined)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
}

async function listen(service: ToolselService, gateway?: McpGateway): Promise<string> {
  const listening = await listenApp(createApp(service, { gateway }).fetch)
  cleanups.push(() => listening.close())
  return listening.url
}

/** Checks a `/readyz` body against the schema `/openapi.json` publishes for its status. */
async function expectPublishedShape(url: string, status: number, body: unknown): Promise<void> {
  const document = await (await fetch(`${url}/openapi.json`)).json()
  const schema =
    document.paths['/readyz'].get.responses[String(status)].content['application/json'].schema
  const validate = new Ajv2020({ strict: false }).compile(schema)
  expect(validate(body) ? [] : validate.errors).toEqual([])
  // Closed to what the route does not send: a wrong status or a report field of another type
  // fails. (The report's fields are optional: with API keys configured, a caller without a key
  // gets the status only; test/server/probe-disclosure.test.ts.)
  expect(validate({ ...(body as object), status: 'other' })).toBe(false)
  expect(validate({ ...(body as object), libraries: 'demo' })).toBe(false)
  const {
    libraries: _,
    failedIndexes: __,
    upstreams: ___,
    ...statusOnly
  } = body as Record<string, unknown>
  expect(validate(statusOnly) ? [] : validate.errors).toEqual([])
}

function newService(layer: ConfigLayer): ToolselService {
  const config = parseConfig({ log: { level: 'silent' }, ...layer })
  const logger = createMemoryLogger()
  return new ToolselService(config, logger, createComponents(config, logger))
}

describe('/readyz and the gateway first sync', () => {
  it('is 503 until the upstreams are synced once; call_tool answers UPSTREAM_UNAVAILABLE meanwhile', async () => {
    const weather = await startWeatherUpstream()
    cleanups.push(() => weather.close())
    const hanging = await startHangingServer()
    const service = newService({
      library: { default: 'demo', loadAll: false },
      gateway: {
        servers: { weather: { url: weather.url }, stuck: { url: hanging } },
        // Past the 5 s a call over the gateway library waits for the first sync (mcp-context
        // FIRST_SYNC_WAIT_MS): the call below is answered while the sync still runs.
        connectTimeoutMs: 8000,
        reconnectInitialMs: 60_000,
        reconnectMaxMs: 60_000,
      },
    })
    await service.start()
    const gateway = new McpGateway(service)
    cleanups.push(() => gateway.close())
    const url = await listen(service, gateway)
    // As `toolsel serve` does: listening first, then the gateway's first sync.
    const starting = gateway.start()

    const early = await fetch(`${url}/readyz`)
    expect(early.status).toBe(503)
    const earlyBody = await early.json()
    expect(earlyBody.error.code).toBe('NOT_READY')
    expect(earlyBody.error.message).toMatch(/gateway is still syncing/)
    expect(earlyBody.upstreams.map((upstream: { name: string }) => upstream.name)).toEqual([
      'weather',
      'stuck',
    ])
    await expectPublishedShape(url, 503, earlyBody)

    const client = new Client({ name: 'readiness-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)))
    cleanups.push(() => client.close())
    const during = errorOf(await call(client, 'call_tool', { id: 'stuck.anything' }))
    expect(during.code).toBe('UPSTREAM_UNAVAILABLE')
    expect(during.message).toMatch(/first sync not done/)

    await starting
    const ready = await fetch(`${url}/readyz`)
    expect(ready.status).toBe(200)
    const readyBody = await ready.json()
    expect(readyBody.status).toBe('ready')
    expect(readyBody.upstreams.map((upstream: { status: string }) => upstream.status)).toEqual([
      'connected',
      'down',
    ])
    await expectPublishedShape(url, 200, readyBody)
    // After the sync: a tool of the server that never listed its tools is still "unavailable";
    // an unknown tool of a synced server, or of no server, is unknown.
    const stuck = errorOf(await call(client, 'call_tool', { id: 'stuck.anything' }))
    expect(stuck.code).toBe('UPSTREAM_UNAVAILABLE')
    expect(stuck.message).toMatch(/server "stuck" is down/)
    expect(errorOf(await call(client, 'call_tool', { id: 'weather.nope' })).code).toBe(
      'UNKNOWN_TOOL',
    )
    expect(errorOf(await call(client, 'call_tool', { id: 'nobody.tool' })).code).toBe(
      'UNKNOWN_TOOL',
    )
    const result = await call(client, 'call_tool', {
      id: 'weather.get_forecast',
      arguments: { city: 'Oslo' },
    })
    expect(result.structuredContent).toEqual({ city: 'Oslo', high: 21 })
  }, 30_000)

  it('is 503 with the published starting body while the libraries load', async () => {
    const service = newService({ library: { default: 'demo', loadAll: false } })
    const url = await listen(service)
    const response = await fetch(`${url}/readyz`)
    expect(response.status).toBe(503)
    const body = await response.json()
    expect(body).toEqual({
      error: {
        code: 'NOT_READY',
        message: 'Not ready: the service is still loading its libraries.',
      },
      status: 'starting',
      libraries: [],
      failedIndexes: [],
    })
    await expectPublishedShape(url, 503, body)
  })

  it('lists saved indexes that failed to load, and stays ready for the others', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-readyz-'))
    await mkdir(join(indexDir, 'broken'))
    await writeFile(join(indexDir, 'broken', 'manifest.json'), '{"formatVersion": 1, "trunc')
    const service = newService({ library: { default: 'demo', loadAll: true, indexDir } })
    await service.start()
    const url = await listen(service)
    const response = await fetch(`${url}/readyz`)
    expect(response.status).toBe(200)
    const body = await response.json()
    expect(body.libraries).toEqual(['demo'])
    expect(body.failedIndexes).toHaveLength(1)
    expect(body.failedIndexes[0].name).toBe('broken')
    expect(body.failedIndexes[0].error).toMatch(/manifest/i)
    const metrics = await (await fetch(`${url}/metrics`)).text()
    expect(metrics).toContain('toolsel_index_load_failed{index="broken"} 1')
  })
})
