/**
 * Several retriever parts per library with the real embedders: use-lite and GloVe vectors side by
 * side with BM25, saved, loaded, named by requests, and fused on the spot.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { isToolselError } from '../../src/errors.ts'
import { requireRetriever, resolveRetriever } from '../../src/store/indexed-library.ts'
import {
  indexTools,
  loadIndexedLibrary,
  publishLibrary,
  rebuildLibrary,
  type IndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { createTestApp, readJson } from '../server/test-service.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { runRetrieverContract } from '../retrieve/retriever.contract.ts'

const PARTS = 'bm25,dense:use-lite,dense:static:glove-100d'
const GLOVE = 'dense:static:glove-100d'
const QUERY = { k: 3 }

let app: Awaited<ReturnType<typeof createTestApp>>
let built: IndexedLibrary
let loaded: IndexedLibrary

beforeAll(async () => {
  app = await createTestApp()
  built = await indexTools('parts', SAMPLE_TOOLS, app.service.config, { retriever: PARTS })
  const published = await publishLibrary(app.service.libraries, built, {
    indexDir: app.service.config.library.indexDir,
  })
  loaded = await loadIndexedLibrary(published.dir!, app.service.config)
}, 240_000)

describe('retriever parts', () => {
  it('builds every named part, lists them in the manifest and saves each in its own files', async () => {
    expect(Object.keys(built.manifest.retrievers)).toEqual(['bm25', 'dense:use-lite', GLOVE])
    expect(built.manifest.defaultRetriever).toBe('bm25')
    const entry = (part: string) => built.manifest.retrievers[part] as Record<string, unknown>
    expect(entry('dense:use-lite')).toMatchObject({ embedderId: 'use-lite', dimensions: 512 })
    expect(entry(GLOVE)).toMatchObject({ embedderId: 'static:glove-100d', dimensions: 100 })
    const files = await readdir(loaded.dir!)
    expect(files).toEqual(expect.arrayContaining([entry(GLOVE).dir, entry('dense:use-lite').dir]))
    expect(await readdir(join(loaded.dir!, entry(GLOVE).dir as string))).toEqual(
      expect.arrayContaining(['dense.json', 'dense-ids.json', 'embeddings.cache']),
    )
    const manifest = JSON.parse(await readFile(join(loaded.dir!, 'manifest.json'), 'utf8'))
    expect(Object.keys(manifest.retrievers)).toEqual(['bm25', 'dense:use-lite', GLOVE])
  })

  it('each part retrieves with its own embedder, the same after a load', async () => {
    for (const part of ['dense:use-lite', GLOVE]) {
      const fresh = await requireRetriever(built, part).retrieve(
        'weather forecast for Paris',
        QUERY,
      )
      expect(fresh[0].id).toMatch(/^weather\./)
      expect(
        await requireRetriever(loaded, part).retrieve('weather forecast for Paris', QUERY),
      ).toEqual(fresh)
    }
    expect(requireRetriever(loaded, GLOVE).name).toBe('dense:static:glove-100d')
    expect(requireRetriever(loaded, 'dense:use-lite').name).toBe('dense:use-lite')
  })

  it('a request names a part, or a fusion of parts composed on the spot', async () => {
    const config = app.service.config
    expect(resolveRetriever(loaded, GLOVE, config)).toBe(loaded.retrievers.get(GLOVE))
    const fused = resolveRetriever(loaded, `hybrid:bm25+${GLOVE}`, config)
    expect(fused.name).toBe('hybrid(bm25+dense:static:glove-100d)')
    const hits = await fused.retrieve('send an email to Ann', QUERY)
    expect(hits[0].id).toMatch(/^mail\./)
    // A part the library lacks is refused with what it has.
    let error: unknown
    try {
      resolveRetriever(loaded, 'dense:hashing:64', config)
    } catch (caught) {
      error = caught
    }
    expect(isToolselError(error, 'UNKNOWN_COMPONENT')).toBe(true)
    expect((error as Error).message).toContain(`available: bm25, dense:use-lite, ${GLOVE}`)
  })

  it('HTTP: search names a part; an upload builds the parts it asks for', async () => {
    const search = await app.app.request('/v1/search-tools', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'weather forecast', library: 'parts', retriever: GLOVE, k: 2 }),
    })
    expect(search.status).toBe(200)
    const body = await readJson(search)
    expect(body.retriever).toBe('dense:static:glove-100d')
    expect(body.results[0].id).toMatch(/^weather\./)

    const put = await app.app.request(
      `/v1/libraries/uploaded?retriever=${encodeURIComponent(`regex,${GLOVE}`)}`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(SAMPLE_TOOLS),
      },
    )
    expect(put.status).toBe(201)
    expect(JSON.stringify(await readJson(put))).toContain(GLOVE)
    expect(app.service.library('uploaded').manifest.defaultRetriever).toBe('regex')

    const refused = await app.app.request(
      `/v1/libraries/other?retriever=${encodeURIComponent('bm25,dense:onnx:/etc')}`,
      { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '[]' },
    )
    expect(refused.status).toBe(400)
    expect(JSON.stringify(await readJson(refused))).toContain('not one this server offers')
  })

  it('a rebuild keeps every part', async () => {
    const rebuilt = await rebuildLibrary(loaded, app.service.config, {
      tools: SAMPLE_TOOLS.slice(0, 4),
    })
    expect(Object.keys(rebuilt.manifest.retrievers)).toEqual(['bm25', 'dense:use-lite', GLOVE])
    expect(rebuilt.library.size).toBe(4)
  })

  it('config: retrieve.build lists parts, hybrid inputs name parts, unknown kinds are refused', () => {
    const config = parseConfig({
      retrieve: {
        build: `hybrid,${GLOVE}`,
        hybrid: {
          inputs: [
            { retriever: 'bm25', weight: 0.7 },
            { retriever: GLOVE, weight: 0.3 },
          ],
        },
      },
    })
    expect(config.retrieve.build).toBe(`hybrid,${GLOVE}`)
    expect(() => parseConfig({ retrieve: { build: 'bm25,splade:x' } })).toThrow(
      'no retriever kind "splade"',
    )
    expect(() => parseConfig({ retrieve: { build: 'regex:x' } })).toThrow('takes no ":<argument>"')
  })
})

// A named part and a fusion composed at request time are retrievers like any other.
const contractConfig = parseConfig({})
runRetrieverContract({
  name: `${GLOVE} part`,
  create: async (tools) =>
    requireRetriever(await indexTools('c', tools, contractConfig, { retriever: GLOVE }), GLOVE),
})
runRetrieverContract({
  name: `hybrid:bm25+${GLOVE}, composed on request`,
  minScoreOnInput: true,
  create: async (tools) =>
    requireRetriever(
      await indexTools('c', tools, contractConfig, { retriever: GLOVE }),
      `hybrid:bm25+${GLOVE}`,
      contractConfig,
    ),
})
