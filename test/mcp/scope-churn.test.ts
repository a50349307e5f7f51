/**
 * A client's scope (`/mcp?servers=…&tags=…`, or the `x-toolsel-*` headers) is its own to choose,
 * within what its key allows. Round 26 (sec12): every scope the cache had not seen read the whole
 * library in one synchronous piece to find the tools in it, so a read client sending a new server
 * name with each request (`?servers=nosuch1`, `nosuch2`, …) held the event loop 360-380 ms per
 * request at 100,000 tools, 830 ms with 2,500 names in the list, and 33 such names emptied the
 * cache of real scopes. The tools of each server and tag are now found once per library version
 * (a read of the library in slices), a view is keyed by the tools it holds, and scopes that hold
 * the same tools share it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { ScopedLibraries } from '../../src/mcp/scoped-libraries.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { buildIndexedLibrary, indexTools } from '../../src/store/library-lifecycle.ts'
import { serverTools } from './fixtures/server-tools.ts'
import { call, dataOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'
import { turnsDuring } from '../helpers/event-loop-turns.ts'

/** Makes `library.scan` (one synchronous read of every tool) throw. */
function forbidScan(library: ToolLibrary): void {
  Object.defineProperty(library, 'scan', {
    value: () => {
      throw new Error('read every tool of the library in one piece')
    },
  })
}

describe('scopes a client chooses over /mcp', () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startToolsel({ log: { level: 'silent' } })
    await harness.service.putLibrary(
      'big',
      Buffer.from(JSON.stringify(serverTools(2000, { tags: true }))),
      {},
    )
  })
  afterAll(() => harness.close())

  it('scopes naming servers or tags the library lacks share one empty view, without a read of the whole library each', async () => {
    const capacity = harness.service.config.mcp.scopeCacheSize
    const real = await harness.connect('/mcp?library=big&servers=srv3')
    const hits = async (client: Awaited<ReturnType<Harness['connect']>>) =>
      dataOf<{ tools: Array<{ id: string }> }>(
        await call(client, 'search_tools', { query: 'record status owner', k: 5 }),
      ).tools.map((hit) => hit.id)
    expect((await hits(real)).every((id) => id.startsWith('srv3.'))).toBe(true)
    forbidScan(harness.service.libraries.require('big').library)
    for (let index = 0; index <= capacity; index += 1) {
      const query = index % 2 === 0 ? `servers=nosuch${index}` : `tags=x${index},y${index}`
      expect(await hits(await harness.connect(`/mcp?library=big&${query}`))).toEqual([])
    }
    // The real scope's view and one shared empty view; the real one was not pushed out.
    expect(harness.mcp.views.viewsOf('big')).toBe(2)
    // Scopes holding the same tools share a view, whatever names they add that match nothing.
    const views = harness.mcp.views
    const indexed = harness.service.libraries.require('big')
    expect(await views.view(indexed, { servers: ['srv3', 'nosuch'], tags: [] })).toBe(
      await views.view(indexed, { servers: ['srv3'], tags: [] }),
    )
  })
})

describe('ScopedLibraries: finding the tools of a scope', () => {
  it('reads a large library in slices, once per version, and builds the view it did before', async () => {
    const config = defaultConfig()
    const input = serverTools(20_000, { tags: true })
    // A library of JSON lines, as uploaded or loaded from its index: each read parses a line.
    const lines = Buffer.from(input.map((tool) => JSON.stringify(tool)).join('\n'))
    const indexed = await buildIndexedLibrary(ToolLibrary.fromJsonLines('big', lines), config)
    const views = new ScopedLibraries(config)
    const scope = { servers: ['srv1', 'srv2'], tags: ['t1'] }
    let ids: readonly string[] = []
    const turns = await turnsDuring(async () => {
      ids = (await views.view(indexed, { servers: ['nosuch'], tags: [] })).library.ids
    })
    expect(ids).toEqual([])
    expect(turns).toBeGreaterThan(1)
    forbidScan(indexed.library)
    const view = await views.view(indexed, scope)
    expect(view.library.ids).toEqual(
      input
        .filter((tool) => ['srv1', 'srv2'].includes(tool.namespace!) && tool.tags?.includes('t1'))
        .map((tool) => tool.id),
    )
    const reference = await indexTools(
      'big',
      input.filter((tool) => view.library.has(tool.id)),
      config,
      { retriever: 'bm25' },
    )
    expect(view.library.contentHash).toBe(reference.library.contentHash)
    expect(await view.retrievers.get('bm25')!.retrieve('record 1201 status', { k: 5 })).toEqual(
      await reference.retrievers.get('bm25')!.retrieve('record 1201 status', { k: 5 }),
    )
  })
})
