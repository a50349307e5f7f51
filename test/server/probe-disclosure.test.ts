/**
 * What the keyless probes tell a caller without a key (round 26, sec12). `/readyz` needs no key
 * (load balancers, Docker health checks), and with API keys configured it told anyone who reached
 * the port every library's name, each saved index that failed to load with its error (which
 * holds the index directory's absolute path) and, in gateway mode, every upstream server's
 * target (an internal URL or a command line) and last error. A caller without a key now gets the
 * status only; a key sees the libraries it may use; `/metrics`, which labels every library and
 * upstream server, needs a key that is not limited to some of them. And a key limited to
 * libraries that names one of them that is not loaded learns no other library's name (the
 * UNKNOWN_LIBRARY message listed every loaded library).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { listenApp } from '../helpers/listen-app.ts'
import { call, errorOf } from '../mcp/fixtures/toolsel-harness.ts'

const ADMIN = 'admin-key-0123456789abcdef'
const READ = 'read-key-0123456789abcdef'
const DEMO_ONLY = 'demo-only-0123456789abcdef'
const SLACK_ONLY = 'slack-only-0123456789abcdef'
const DEMO_AND_GONE = 'demo-and-gone-0123456789abcdef'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function serve(layer: ConfigLayer, start = true) {
  const config = parseConfig({ log: { level: 'silent' }, ...layer })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  if (start) await service.start()
  const app = createApp(service)
  const listening = await listenApp(app.fetch)
  cleanups.push(async () => {
    await listening.close()
    await app.close()
  })
  return { url: listening.url }
}

/** A saved index directory holding a library `acme` and an index `broken` that fails to load. */
async function indexDirWithBrokenIndex(): Promise<string> {
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-probe-'))
  await mkdir(join(indexDir, 'broken'))
  await writeFile(join(indexDir, 'broken', 'manifest.json'), '{"formatVersion": 1, "trunc')
  return indexDir
}

const keyed = (indexDir: string): ConfigLayer => ({
  library: { default: 'demo', loadAll: true, indexDir },
  auth: {
    adminKey: ADMIN,
    readKeys: [
      READ,
      { key: DEMO_ONLY, name: 'demo-reader', libraries: ['demo'] },
      { key: SLACK_ONLY, name: 'slack-agent', servers: ['slack'] },
      { key: DEMO_AND_GONE, name: 'tenant-b', libraries: ['demo', 'gone'] },
    ],
  },
})

const get = (url: string, key?: string) =>
  fetch(url, key ? { headers: { authorization: `Bearer ${key}` } } : {})

describe('keyless probes with API keys configured', () => {
  it('/readyz without a valid key answers the status only: no library, index path or error', async () => {
    const indexDir = await indexDirWithBrokenIndex()
    const { url } = await serve(keyed(indexDir))
    const upload = await fetch(`${url}/v1/libraries/acme`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ id: 'acme.pay', name: 'pay', description: 'Pay an invoice.' }]),
    })
    expect(upload.status).toBe(201)
    for (const key of [undefined, 'not-a-key-0123456789abcdef']) {
      const response = await get(`${url}/readyz`, key)
      expect(response.status).toBe(200)
      const text = await response.text()
      expect(JSON.parse(text)).toEqual({ status: 'ready' })
      for (const secret of [indexDir, 'broken', 'acme', 'demo']) expect(text).not.toContain(secret)
    }
    // The admin key and an unlimited read key see the whole report.
    for (const key of [ADMIN, READ]) {
      const full = await (await get(`${url}/readyz`, key)).json()
      expect(full.libraries).toEqual(['acme', 'demo'])
      expect(full.failedIndexes.map((failed: { name: string }) => failed.name)).toEqual(['broken'])
      // Why, naming no path of this host (the log keeps it).
      expect(full.failedIndexes[0].error).toContain('<library.indexDir>/broken/manifest.json')
      expect(full.failedIndexes[0].error).not.toContain(indexDir)
    }
    // A key limited to libraries sees those only.
    const limited = await (await get(`${url}/readyz`, DEMO_ONLY)).json()
    expect(limited).toEqual({ status: 'ready', libraries: ['demo'], failedIndexes: [] })
  })

  it('/readyz while starting: the error and status only, without a key', async () => {
    const { url } = await serve(keyed(await indexDirWithBrokenIndex()), false)
    const response = await get(`${url}/readyz`)
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual({
      error: {
        code: 'NOT_READY',
        message: 'Not ready: the service is still loading its libraries.',
      },
      status: 'starting',
    })
  })

  it('/metrics needs a key limited to no library, server or tag', async () => {
    const { url } = await serve(keyed(await indexDirWithBrokenIndex()))
    expect((await get(`${url}/metrics`)).status).toBe(401)
    for (const key of [DEMO_ONLY, SLACK_ONLY]) {
      const response = await get(`${url}/metrics`, key)
      expect(response.status).toBe(403)
      const body = await response.json()
      expect(body.error.code).toBe('FORBIDDEN')
      expect(body.error.message).toContain('/metrics')
    }
    for (const key of [READ, ADMIN]) {
      const response = await get(`${url}/metrics`, key)
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('toolsel_index_load_failed{index="broken"} 1')
    }
  })

  it('without keys (loopback) /readyz reports everything, as before', async () => {
    const indexDir = await indexDirWithBrokenIndex()
    const { url } = await serve({ library: { default: 'demo', loadAll: true, indexDir } })
    const body = await (await get(`${url}/readyz`)).json()
    expect(body.libraries).toEqual(['demo'])
    expect(body.failedIndexes[0].error).toContain('<library.indexDir>/broken/manifest.json')
  })
})

describe('a key limited to libraries', () => {
  it('naming one of its libraries that is not loaded learns no other library', async () => {
    const { url } = await serve(keyed(await indexDirWithBrokenIndex()))
    const upload = await fetch(`${url}/v1/libraries/acme`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ id: 'acme.pay', name: 'pay', description: 'Pay an invoice.' }]),
    })
    expect(upload.status).toBe(201)
    const headers = {
      authorization: `Bearer ${DEMO_AND_GONE}`,
      'content-type': 'application/json',
    }
    const requests: Array<[string, RequestInit]> = [
      ['/v1/search-tools', { method: 'POST', headers, body: '{"query":"pay","library":"gone"}' }],
      [
        '/v1/select-tools',
        { method: 'POST', headers, body: '{"instruction":"pay","library":"gone"}' },
      ],
      ['/v1/libraries/gone', { headers }],
      ['/v1/libraries/gone/tools/acme.pay', { headers }],
    ]
    for (const [path, init] of requests) {
      const response = await fetch(`${url}${path}`, init)
      const body = await response.json()
      expect(body.error.code, path).toBe('UNKNOWN_LIBRARY')
      expect(response.status, path).toBe(404)
      expect(body.error.message, path).toContain('"gone"')
      expect(body.error.message, path).toContain('demo')
      expect(body.error.message, path).not.toContain('acme')
    }
    // The same over MCP.
    const client = new Client({ name: 'probe', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', url), {
        requestInit: { headers: { authorization: `Bearer ${DEMO_AND_GONE}` } },
      }),
    )
    try {
      const error = errorOf(await call(client, 'search_tools', { query: 'pay', library: 'gone' }))
      expect(error.code).toBe('UNKNOWN_LIBRARY')
      expect(error.message).toContain('demo')
      expect(error.message).not.toContain('acme')
    } finally {
      await client.close()
    }
    // An unlimited key still gets the whole list.
    const open = await fetch(`${url}/v1/search-tools`, {
      method: 'POST',
      headers: { authorization: `Bearer ${READ}`, 'content-type': 'application/json' },
      body: '{"query":"pay","library":"gone"}',
    })
    expect((await open.json()).error.message).toContain('acme')
  })
})
