import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { ScopedLibraries } from '../../src/mcp/scoped-libraries.ts'
import {
  buildIndexedLibrary,
  indexTools,
  loadIndexedLibrary,
  saveIndexedLibrary,
  type IndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const config = defaultConfig()

/** `count` tools of about 1 KB each over five namespaces (a scan crosses its 1 MiB blocks). */
function manyTools(count: number): Tool[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `ns${index % 5}.tool_${index}`,
    name: `tool_${index}`,
    description: `Does task number ${index} (héllo ✓). ${'Some more words about it. '.repeat(36)}`,
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
    namespace: `ns${index % 5}`,
    ...(index % 7 === 0 && { tags: ['seventh'] }),
  }))
}

async function savedAndLoaded(tools: readonly Tool[], name = 'many'): Promise<IndexedLibrary> {
  const indexed = await buildIndexedLibrary(new ToolLibrary(name, tools), config)
  const dir = await saveIndexedLibrary(await mkdtemp(join(tmpdir(), 'toolsel-scope-')), indexed)
  return loadIndexedLibrary(dir, config)
}

function scanned(library: ToolLibrary): Array<[Tool, number]> {
  const seen: Array<[Tool, number]> = []
  library.scan((tool, position) => seen.push([tool, position]))
  return seen
}

/** Makes `library.tools` throw: what must not read the whole library at once. */
function forbidWholeReads(library: ToolLibrary): void {
  Object.defineProperty(library, 'tools', {
    get() {
      throw new Error('read every tool of the library at once')
    },
  })
}

describe('ToolLibrary.scan', () => {
  it('visits every tool in order, in memory, from JSON lines (blank lines too) and from a file', async () => {
    const tools = manyTools(3000)
    const lines = tools.map((tool) => JSON.stringify(tool))
    const withBlanks = Buffer.from(`\n${lines.join('\n\n')}\n\n`)
    const loaded = await savedAndLoaded(tools)
    for (const library of [
      new ToolLibrary('many', tools),
      ToolLibrary.fromJsonLines('many', withBlanks),
      loaded.library,
    ]) {
      const seen = scanned(library)
      expect(seen.map(([, position]) => position)).toEqual(tools.map((_tool, index) => index))
      expect(seen.map(([tool]) => tool)).toEqual([...library.tools])
    }
    expect(scanned(loaded.library).map(([tool]) => tool.id)).toEqual(loaded.library.ids)
  })

  it('refuses a damaged line with INDEX_CORRUPT', () => {
    const lines = SAMPLE_TOOLS.map((tool) => JSON.stringify(tool))
    const library = ToolLibrary.fromJsonLines('lazy', Buffer.from(lines.join('\n')))
    // Its id is still read from the line's start, but the line is cut short.
    const damaged = ToolLibrary.fromJsonLines(
      'lazy',
      Buffer.from([...lines.slice(0, 3), lines[3].slice(0, -5), ...lines.slice(4)].join('\n')),
    )
    expect(scanned(library)).toHaveLength(SAMPLE_TOOLS.length)
    expect(() => scanned(damaged)).toThrow(/line 4 .* is not a valid tool/)
  })
})

describe('ToolLibrary.subset', () => {
  it('serves the tools at its positions like a library of those tools, reading them from its parent', async () => {
    const { library: parent } = await savedAndLoaded(manyTools(300))
    const positions = Int32Array.from({ length: 60 }, (_, index) => index * 5 + 2)
    const expected = new ToolLibrary(
      'many',
      Array.from(positions, (position) => parent.at(position)),
    )
    const subset = ToolLibrary.subset(parent, positions, expected.contentHash)
    expect(subset.name).toBe('many')
    expect(subset.size).toBe(60)
    expect(subset.ids).toEqual(expected.ids)
    expect(subset.tools).toEqual(expected.tools)
    expect(scanned(subset).map(([tool]) => tool)).toEqual(expected.tools)
    expect(subset.toJsonLines().toString()).toBe(expected.toJsonLines().toString())
    expect(subset.contentHash).toBe(expected.contentHash)
    expect(ToolLibrary.subset(parent, positions).contentHash).toBe(expected.contentHash)
    for (const id of expected.ids) expect(subset.require(id)).toEqual(expected.require(id))
    expect(subset.at(3)).toBe(parent.at(positions[3]))
    expect(subset.has(parent.idList.at(0)!)).toBe(false)
    expect(() => subset.require(parent.idList.at(0)!)).toThrow(/has no tool/)
  })
})

describe('ScopedLibraries', () => {
  it('gives a view the tools in scope and the same answers as indexing them, without reading the whole library at once', async () => {
    const indexed = await savedAndLoaded(manyTools(2000))
    const expected = manyTools(2000).filter((tool) => tool.namespace === 'ns3')
    forbidWholeReads(indexed.library)
    const views = new ScopedLibraries(config)
    const view = await views.view(indexed, { servers: ['ns3'], tags: [] })
    expect(view.library.ids).toEqual(expected.map((tool) => tool.id))
    expect(view.library.require(expected[7].id)).toEqual(expected[7])
    const reference = await indexTools('many', expected, config, { retriever: 'bm25' })
    expect(view.library.contentHash).toBe(reference.library.contentHash)
    for (const query of ['task number 1234', 'more words about city', 'tool_1503']) {
      expect(await view.retrievers.get('bm25')!.retrieve(query, { k: 5 })).toEqual(
        await reference.retrievers.get('bm25')!.retrieve(query, { k: 5 }),
      )
    }
    const tagged = await views.view(indexed, { servers: ['ns1', 'ns2'], tags: ['seventh'] })
    expect(tagged.library.ids).toEqual(
      manyTools(2000)
        .filter((tool) => ['ns1', 'ns2'].includes(tool.namespace!) && tool.tags !== undefined)
        .map((tool) => tool.id),
    )
  })

  it('reuses a view for the same library version; a new version drops the older views', async () => {
    const first = await indexTools('sample', SAMPLE_TOOLS, config)
    const same = await indexTools('sample', SAMPLE_TOOLS, config)
    const views = new ScopedLibraries(config)
    const mail = { servers: ['mail'], tags: [] }
    const weather = { servers: ['weather'], tags: [] }
    const view = await views.view(first, mail)
    expect(view.library.ids).toEqual(['mail.send_email', 'mail.search_inbox'])
    const firstWeather = await views.view(first, weather)
    expect(await views.view(first, mail)).toBe(view)
    expect(await views.view(first, weather)).toBe(firstWeather)
    // A new version (same content, new object): a new view, and the older version's views of
    // every scope are dropped (they would keep it in memory).
    const next = await views.view(same, mail)
    expect(next).not.toBe(view)
    expect(next.library.ids).toEqual(view.library.ids)
    expect(await views.view(same, mail)).toBe(next)
    expect(await views.view(first, weather)).not.toBe(firstWeather)
    expect(await views.view(first, { servers: [], tags: [] })).toBe(first)
    expect(await views.view(first, { servers: Object.keys(namespaces()), tags: [] })).toBe(first)
  })

  it('forgets the views of a replaced or deleted version, and keeps none of a released one', async () => {
    const first = await indexTools('sample', SAMPLE_TOOLS, config)
    const next = await indexTools('sample', SAMPLE_TOOLS, config)
    const views = new ScopedLibraries(config)
    const mail = { servers: ['mail'], tags: [] }
    const view = await views.view(first, mail)
    await views.view(first, { servers: ['weather'], tags: [] })
    expect(views.viewsOf('sample')).toBe(2)
    // The current version's views stay; the others go.
    expect(views.forget('sample', first.library)).toBe(0)
    expect(views.forget('sample', next.library)).toBe(2)
    expect(views.viewsOf('sample')).toBe(0)
    // A request that took the old version before its release still gets a right view, uncached.
    first.library.release(60_000)
    const late = await views.view(first, mail)
    expect(late).not.toBe(view)
    expect(late.library.ids).toEqual(view.library.ids)
    expect(views.viewsOf('sample')).toBe(0)
    await views.view(next, mail)
    expect(views.forget('sample')).toBe(1)
  })
})

function namespaces(): Record<string, true> {
  return Object.fromEntries(SAMPLE_TOOLS.map((tool) => [tool.namespace!, true]))
}
