import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { createRequestSchemas } from '../../src/server/schemas.ts'
import { loadIndexedLibrary, loadLibraryReference } from '../../src/store/library-lifecycle.ts'
import { createTestApp, postJson, readJson } from './test-service.ts'

/** The sample library built with BM25, dense and hybrid, embedded by the fast hashing model. */
const HYBRID = { retrieve: { build: 'hybrid', dense: { embedder: 'hashing' } } }

const put = (body: string) => ({
  method: 'PUT',
  body,
  headers: { 'content-type': 'application/json' },
})

function mcpBody(count: number): string {
  const tools = Array.from({ length: count }, (_, index) => ({
    name: `send_parcel_${index}`,
    description: `Ship parcel number ${index} with a courier.`,
    inputSchema: { type: 'object', properties: {} },
  }))
  return JSON.stringify({
    tools: [
      ...tools,
      {
        name: 'track_parcel',
        description: 'Track a parcel.',
        inputSchema: { type: 'object', properties: {} },
      },
    ],
  })
}

describe('dense and hybrid over HTTP', () => {
  it('answers select-tools with retriever dense and hybrid', async () => {
    const { app } = await createTestApp({ config: HYBRID })
    for (const [retriever, name] of [
      ['dense', 'dense:hashing:256'],
      ['hybrid', 'hybrid(bm25+dense:hashing:256)'],
    ]) {
      const response = await app.request(
        '/v1/select-tools',
        postJson({ instruction: 'send an SMS text message to Bob', retriever }),
      )
      expect(response.status).toBe(200)
      const body = await readJson(response)
      expect(body.components.retriever).toBe(name)
      expect(body.tools.map((tool: { id: string }) => tool.id)).toEqual(['sms.send_sms'])
      expect(body.steps[0].candidates.length).toBeGreaterThan(1)
    }
  })

  it('answers search-tools with retriever hybrid, k best without a threshold', async () => {
    const { app } = await createTestApp({ config: HYBRID })
    const response = await app.request(
      '/v1/search-tools',
      postJson({ query: 'weather forecast for a city', retriever: 'hybrid', k: 4 }),
    )
    expect(response.status).toBe(200)
    const body = await readJson(response)
    expect(body.results).toHaveLength(4)
    expect(body.results[0].id).toBe('weather.get_forecast')
  })

  it('lists the retrievers of a hybrid library; retrieve.retriever bm25 overrides its default', async () => {
    const { app } = await createTestApp({
      config: { ...HYBRID, retrieve: { ...HYBRID.retrieve, retriever: 'bm25' } },
    })
    const library = await readJson(await app.request('/v1/libraries/sample'))
    expect(library).toMatchObject({
      retrievers: ['bm25', 'dense', 'hybrid'],
      defaultRetriever: 'hybrid',
    })
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'send an email' }),
    )
    expect((await readJson(response)).components.retriever).toBe('bm25')
  })

  it("uses each library's own default with retrieve.retriever auto (the default)", async () => {
    const { app } = await createTestApp({ config: HYBRID })
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'send an email' }),
    )
    expect((await readJson(response)).components.retriever).toBe('hybrid(bm25+dense:hashing:256)')
  })

  it('refuses dense on a BM25-only library with 400 and the rebuild command', async () => {
    const { app } = await createTestApp()
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'send an email', retriever: 'dense' }),
    )
    expect(response.status).toBe(400)
    expect((await readJson(response)).error).toEqual({
      code: 'UNKNOWN_COMPONENT',
      message:
        'Library "sample" has no "dense" retriever (available: bm25). Rebuild it with: toolsel index <file> --name sample --retriever bm25,dense.',
    })
  })

  it('refuses a part the embedded demo lacks with the start setting that builds it, no host path', async () => {
    const select = async (build?: string) => {
      const { app, service, logger } = await createTestApp({
        config: build === undefined ? {} : { retrieve: { build } },
        start: false,
      })
      await service.start([await loadLibraryReference('demo', service.config, logger)])
      return app.request(
        '/v1/select-tools',
        postJson({ instruction: 'weather', library: 'demo', retriever: 'regex' }),
      )
    }
    const refused = await select()
    expect(refused.status).toBe(400)
    const { error } = await readJson(refused)
    expect(error).toEqual({
      code: 'UNKNOWN_COMPONENT',
      message:
        'Library "demo" has no "regex" retriever (available: bm25). It is built from its tool files when the service starts: start it with TOOLSEL_BUILD_RETRIEVER=bm25,regex (retrieve.build) to build that part too.',
    })
    // What it says works: the demo started with that build serves the part.
    const served = await select('bm25,regex')
    expect(served.status).toBe(200)
    expect((await readJson(served)).components.retriever).toBe('regex')
  })

  it('still names the start setting for a --library tool file once a usage example saved it', async () => {
    // Before: after one POST /v1/feedback the library is a saved index, and the hint became
    // "Rebuild it with: toolsel index <file> --name tools …", which the next start (importing
    // tools.json again with retrieve.build) ignores. The demo, started by name, does load the
    // saved index then: its hint becomes toolsel index, rightly.
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-file-library-'))
    const file = join(dir, 'tools.json')
    await writeFile(file, JSON.stringify(SAMPLE_TOOLS))
    const indexDir = join(dir, 'indexes')
    const hints: Record<string, string> = {}
    for (const reference of [file, 'demo']) {
      const config = parseConfig({ library: { default: reference, indexDir } })
      const logger = createMemoryLogger()
      const service = new ToolselService(config, logger, createComponents(config, logger))
      await service.start([await loadLibraryReference(reference, config, logger)])
      const app = createApp(service)
      const library = service.defaultLibraryName
      const tool = service.library(library).library.tools[0].id
      const feedback = await app.request(
        '/v1/feedback',
        postJson({ library, instruction: 'holler at the crew', used: [tool] }),
      )
      expect(feedback.status).toBe(200)
      expect(service.library(library).dir).toBeDefined()
      const refused = await app.request(
        '/v1/search-tools',
        postJson({ query: 'weather', library, retriever: 'regex' }),
      )
      expect(refused.status).toBe(400)
      hints[library] = (await readJson(refused)).error.message
    }
    expect(hints.tools).toBe(
      'Library "tools" has no "regex" retriever (available: bm25). It is built from its tool files when the service starts: start it with TOOLSEL_BUILD_RETRIEVER=bm25,regex (retrieve.build) to build that part too.',
    )
    expect(hints.demo).toBe(
      'Library "demo" has no "regex" retriever (available: bm25). Rebuild it with: toolsel index <file> --name demo --retriever bm25,regex.',
    )
  })

  it('builds an uploaded library with ?retriever=hybrid, saves it and serves hybrid requests', async () => {
    const { app, indexDir, service } = await createTestApp({
      config: { retrieve: { dense: { embedder: 'hashing' } } },
    })
    const created = await app.request(
      '/v1/libraries/parcels?namespace=parcels&retriever=hybrid',
      put(mcpBody(5)),
    )
    expect(created.status).toBe(201)
    expect(await readJson(created)).toMatchObject({
      name: 'parcels',
      toolCount: 6,
      persisted: true,
      retrievers: ['bm25', 'dense', 'hybrid'],
      defaultRetriever: 'hybrid',
    })
    const search = await app.request(
      '/v1/search-tools',
      postJson({ query: 'track my parcel', library: 'parcels', retriever: 'hybrid', k: 3 }),
    )
    expect((await readJson(search)).results[0].id).toBe('parcels.track_parcel')

    const loaded = await loadIndexedLibrary(`${indexDir}/parcels`, service.config)
    expect([...loaded.retrievers.keys()]).toEqual(['bm25', 'dense', 'hybrid'])

    const plain = await app.request('/v1/libraries/plain?namespace=plain', put(mcpBody(2)))
    expect((await readJson(plain)).retrievers).toEqual(['bm25'])
  })

  it('refuses an unknown ?retriever= value', async () => {
    const { app } = await createTestApp()
    const response = await app.request('/v1/libraries/x?retriever=splade', put(mcpBody(2)))
    expect(response.status).toBe(400)
    expect((await readJson(response)).error.code).toBe('INVALID_INPUT')
  })

  it('reads ?retriever=hybrid:<part>+<part> as written, though a URL query decodes "+" as a space', async () => {
    const { app } = await createTestApp()
    const response = await app.request(
      '/v1/libraries/fused?namespace=fused&retriever=bm25,dense:hashing:64,hybrid:bm25+dense:hashing:64',
      put(mcpBody(2)),
    )
    expect(response.status).toBe(201)
    expect((await readJson(response)).retrievers).toEqual([
      'bm25',
      'dense:hashing:64',
      'hybrid:bm25+dense:hashing:64',
    ])
  })

  it('restores the "+" in one place: the ?retriever= field parses to the list as meant', () => {
    // The route hands the parsed value on as it is (it restored the "+" a second time before).
    const { putLibraryQuery } = createRequestSchemas(defaultConfig())
    expect(putLibraryQuery.parse({ retriever: 'bm25,hybrid:bm25 dense:hashing:64' })).toEqual({
      retriever: 'bm25,hybrid:bm25+dense:hashing:64',
    })
  })

  it('refuses hashing dimensions out of range with 400, not a 500 model failure', async () => {
    const { app } = await createTestApp()
    for (const embedder of ['hashing:0', 'hashing:99999999', 'hashing:abc']) {
      const response = await app.request(
        `/v1/libraries/x?retriever=dense:${embedder}`,
        put(mcpBody(2)),
      )
      expect(response.status, embedder).toBe(400)
      expect((await readJson(response)).error.message).toContain(`embedder "${embedder}"`)
    }
  })
})
