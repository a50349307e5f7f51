import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { buildIndexedLibrary, saveIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp, postJson, readJson } from './test-service.ts'

/** Saves the sample library as a hybrid index named `sample` in `indexDir`. */
async function saveHybridSample(indexDir: string, embedder: string) {
  const config = parseConfig({ retrieve: { dense: { embedder } } })
  const library = new ToolLibrary('sample', SAMPLE_TOOLS)
  await saveIndexedLibrary(
    indexDir,
    await buildIndexedLibrary(library, config, { retriever: 'hybrid' }),
  )
}

describe('starting the service on a dense index', () => {
  it('loads the embedder before it is ready, then answers hybrid requests', async () => {
    const { app, service, indexDir } = await createTestApp({
      config: { retrieve: { dense: { embedder: 'hashing' } } },
      start: false,
    })
    await saveHybridSample(indexDir, 'hashing')
    expect((await app.request('/readyz')).status).toBe(503)
    await service.start()
    expect((await app.request('/readyz')).status).toBe(200)
    expect(service.listLibraries()[0]).toMatchObject({
      name: 'sample',
      persisted: true,
      retrievers: ['bm25', 'dense', 'hybrid'],
    })
    const response = await app.request(
      '/v1/select-tools',
      postJson({ instruction: 'book a hotel room in Rome', retriever: 'hybrid' }),
    )
    expect((await readJson(response)).tools[0].id).toBe('travel.book_hotel')
  })

  it('refuses to start on a default index built with another embedder', async () => {
    const { service, indexDir } = await createTestApp({
      config: { retrieve: { dense: { embedder: 'hashing:64' } } },
      start: false,
    })
    await saveHybridSample(indexDir, 'hashing')
    await expect(service.start()).rejects.toMatchObject({ code: 'INDEX_MISMATCH' })
    expect(service.ready).toBe(false)
  })
})
