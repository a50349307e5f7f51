import { mkdir, readdir, readFile, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join, relative } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { defaultConfig, type Config } from '../../src/config/schema.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import { createLogger } from '../../src/log.ts'
import type { Bm25Retriever } from '../../src/retrieve/bm25/bm25-retriever.ts'
import { importToolsFromPath } from '../../src/library/importers/index.ts'
import {
  DEMO_LIBRARY_DIR,
  DEMO_LIBRARY_NAME,
  importLibrary,
  indexTools,
  loadLibraryReference,
  publishLibrary,
  readLibraryReferenceTools,
  rebuildLibrary,
  saveIndexedLibrary,
  scopedView,
  type IndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import {
  processAlive,
  WRITER_PROTOCOL,
  WRITER_PROTOCOL_FILE,
} from '../../src/store/index-dir-claims.ts'
import { demoFingerprint } from '../../src/store/demo-fingerprint.ts'
import { tokenizerProbes } from '../../src/store/kinds/tokenizer-probe.ts'
import { loadStartupLibraries } from '../../src/service/load-libraries.ts'
import type { Tool } from '../../src/library/tool.ts'
import type { BuildIndexOptions } from '../../src/store/build-index.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

let config: Config
const logger = createLogger('error')

beforeEach(async () => {
  const base = defaultConfig()
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-lifecycle-'))
  config = { ...base, library: { ...base.library, indexDir } }
})

/** A pid no process has now. */
function deadPid(): number {
  let pid = 4_000_000
  while (processAlive(pid)) pid += 1
  return pid
}

/**
 * `tools` saved as the demo in the test's index directory, as a build from the demo's files saves
 * it (`source`: DEMO_LIBRARY_DIR, format mcp; `options.source` adds to or replaces those): the
 * index and its directory.
 */
async function saveDemo(tools: readonly Tool[], options: BuildIndexOptions = {}) {
  const indexed = await indexTools(DEMO_LIBRARY_NAME, tools, config, {
    ...options,
    source: { path: DEMO_LIBRARY_DIR, format: 'mcp', ...options.source },
  })
  return { indexed, dir: await saveIndexedLibrary(config.library.indexDir, indexed) }
}

/** The service's LibraryRegistry, reduced to what publishLibrary needs. */
function slots() {
  const held = new Map<string, IndexedLibrary>()
  return {
    held,
    get: (name: string) => held.get(name),
    set: (indexed: IndexedLibrary) => void held.set(indexed.library.name, indexed),
  }
}

describe('library lifecycle', () => {
  it('imports tool text, indexes it, saves it and serves it; a load finds the same library', async () => {
    const { indexed, imported } = await importLibrary(
      { text: JSON.stringify(SAMPLE_TOOLS), format: 'canonical' },
      'sample',
      config,
    )
    expect(imported.format).toBe('canonical')
    expect(indexed.manifest.source).toEqual({ format: 'canonical' })
    expect(indexed.dir).toBeUndefined()
    const served = slots()
    const published = await publishLibrary(served, indexed, { indexDir: config.library.indexDir })
    expect(published.dir).toBe(join(config.library.indexDir, 'sample'))
    expect(served.get('sample')).toBe(published)
    expect(await readdir(published.dir!)).toContain('manifest.json')

    const loaded = await loadLibraryReference('sample', config, logger)
    expect(loaded.library.contentHash).toBe(indexed.library.contentHash)
    const query = { k: 3 }
    expect(await loaded.retrievers.get('bm25')!.retrieve('weather forecast', query)).toEqual(
      await indexed.retrievers.get('bm25')!.retrieve('weather forecast', query),
    )
  })

  it('a tool file served under the name of a saved index with other tools says which one it serves', async () => {
    const file = join(config.library.indexDir, '..', `${Date.now()}-sample.json`)
    await writeFile(file, JSON.stringify(SAMPLE_TOOLS))
    const name = basename(file, '.json')
    const lines: string[] = []
    const capture = createLogger('warn', (line) => lines.push(line))
    // As after a PUT of that library: a saved index of the same name with other tools.
    const { indexed } = await importLibrary(
      { text: JSON.stringify(SAMPLE_TOOLS.slice(0, 2)), format: 'canonical' },
      name,
      config,
    )
    await publishLibrary(slots(), indexed, { indexDir: config.library.indexDir })

    const served = await loadLibraryReference(file, config, capture)
    expect(served.library.size).toBe(SAMPLE_TOOLS.length)
    expect(lines.join('\n')).toContain(
      `WARN Library "${name}": serving the ${SAMPLE_TOOLS.length} tools of ${file}; the index saved in ${join(config.library.indexDir, name)} (2 tools, `,
    )
    // The same tools saved (an example write does that): nothing to say.
    await publishLibrary(slots(), served, { indexDir: config.library.indexDir })
    lines.length = 0
    await loadLibraryReference(file, config, capture)
    expect(lines).toEqual([])
  })

  it('publishes without saving when no index directory is given (the gateway library)', async () => {
    const indexed = await indexTools('gateway', SAMPLE_TOOLS, config)
    const served = slots()
    expect(await publishLibrary(served, indexed)).toBe(indexed)
    expect(served.get('gateway')?.dir).toBeUndefined()
    expect(await readdir(config.library.indexDir)).toEqual([])
  })

  it('a refused commit leaves what is served and saved as it was', async () => {
    const served = slots()
    const first = await publishLibrary(served, await indexTools('lib', SAMPLE_TOOLS, config), {
      indexDir: config.library.indexDir,
    })
    const next = await indexTools('lib', SAMPLE_TOOLS.slice(0, 2), config)
    await expect(
      publishLibrary(served, next, {
        indexDir: config.library.indexDir,
        beforeCommit: () => {
          throw new Error('client gone')
        },
      }),
    ).rejects.toThrow('client gone')
    expect(served.get('lib')).toBe(first)
    const manifest = JSON.parse(await readFile(join(first.dir!, 'manifest.json'), 'utf8'))
    expect(manifest.toolCount).toBe(SAMPLE_TOOLS.length)
  })

  it('imports a path with its source recorded; the demo reference imports the shipped demo', async () => {
    const demo = await loadLibraryReference(DEMO_LIBRARY_NAME, config, logger)
    expect(demo.library.name).toBe('demo')
    expect(demo.library.size).toBeGreaterThan(100)
    expect(demo.manifest.source.format).toBe('mcp')
    expect(demo.manifest.source.path).toMatch(/library\/demo\/servers$/)
  })

  it('a saved demo whose files changed since (a git pull) is rebuilt from them, keeping its parts and usage examples, and saved', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const [added, kept] = tools
    // As saved before the pull: one tool the files have now missing, one they no longer have.
    const retired = { ...SAMPLE_TOOLS[0]!, id: 'retired.old_tool' }
    const examples = ExampleSet.of([
      { instruction: 'the example of a tool still there', tools: [kept!.id] },
      { instruction: 'the example of a retired tool', tools: [retired.id] },
    ])
    const { dir } = await saveDemo([...tools.slice(1), retired], {
      retriever: 'bm25,regex',
      examples,
    })
    const lines: string[] = []
    const capture = createLogger('info', (line) => lines.push(line))

    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, capture)
    expect(loaded.library.size).toBe(tools.length)
    expect(loaded.library.has(added!.id)).toBe(true)
    expect(loaded.library.has(retired.id)).toBe(false)
    expect([...loaded.retrievers.keys()].sort()).toEqual(['bm25', 'regex'])
    expect(loaded.examples?.set.examples.map((example) => example.instruction)).toEqual([
      'the example of a tool still there',
    ])
    expect(loaded.dir).toBe(dir)
    expect(lines.join('\n')).toContain('Library "demo": rebuilt from ')
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))
    expect(manifest.toolCount).toBe(tools.length)
    expect(manifest.examples.count).toBe(1)

    // Saved: the next start loads it as it is.
    lines.length = 0
    const again = await loadLibraryReference(DEMO_LIBRARY_NAME, config, capture)
    expect(again.manifest.createdAt).toBe(manifest.createdAt)
    expect(again.examples?.set.size).toBe(1)
    expect(lines.join('\n')).not.toContain('rebuilt')
  })

  it('a saved demo whose rebuild cannot be saved (an index dir it may not write) loads as saved, with a warning', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const { dir } = await saveDemo(tools.slice(1), { retriever: 'bm25' })
    const before = await readFile(join(dir, 'manifest.json'), 'utf8')
    // Written by a newer toolsel (a rolled-back deploy): this one reads it, and refuses to write
    // there (root ignores a read-only mode; this refusal holds for every user).
    await writeFile(
      join(config.library.indexDir, WRITER_PROTOCOL_FILE),
      `toolsel-writer-protocol ${WRITER_PROTOCOL + 1}\n`,
    )
    const lines: string[] = []
    const capture = createLogger('info', (line) => lines.push(line))

    // Until hard38 (round 43) the failed save of the rebuild failed the start.
    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, capture)
    expect(loaded.library.size).toBe(tools.length - 1)
    expect(loaded.dir).toBe(dir)
    expect(lines.join('\n')).toMatch(
      /WARN Library "demo": .* could not be rebuilt .*; loaded as saved/,
    )
    expect(lines.join('\n')).toContain('writer protocol')
    expect(await readFile(join(dir, 'manifest.json'), 'utf8')).toBe(before)
  })

  it("a saved demo that records its files' fingerprint as it is now loads as saved: no import to compare", async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    // Tools other than the files' (one missing) under the files' fingerprint: only a start that
    // imports the files to compare (before round 44, every start) would rebuild it.
    await saveDemo(tools.slice(1), {
      source: { fingerprint: await demoFingerprint(DEMO_LIBRARY_DIR) },
    })
    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, logger)
    expect(loaded.library.size).toBe(tools.length - 1)
    // Another fingerprint (the files or the importer changed): compared, rebuilt.
    await saveDemo(tools.slice(1), { source: { fingerprint: 'sha256:0' } })
    const rebuilt = await loadLibraryReference(DEMO_LIBRARY_NAME, config, logger)
    expect(rebuilt.library.size).toBe(tools.length)
    expect(rebuilt.manifest.source.fingerprint).toBe(await demoFingerprint(DEMO_LIBRARY_DIR))
  })

  it('a saved demo without a fingerprint (an older save) of the same tools is compared once, then saved with it', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const examples = ExampleSet.of([{ instruction: 'text Ann', tools: [tools[0]!.id] }])
    const { indexed: older, dir } = await saveDemo(tools, { retriever: 'bm25,regex', examples })
    const lines: string[] = []
    const capture = createLogger('debug', (line) => lines.push(line))
    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, capture)
    expect(loaded.library.contentHash).toBe(older.library.contentHash)
    expect([...loaded.retrievers.keys()].sort()).toEqual(['bm25', 'regex'])
    expect(loaded.examples?.set.size).toBe(1)
    expect(lines.join('\n')).toContain('saved again with their fingerprint')
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))
    expect(manifest.source.fingerprint).toBe(await demoFingerprint(DEMO_LIBRARY_DIR))
    expect(manifest.examples.version).toBe(older.manifest.examples!.version)
    lines.length = 0
    const again = await loadLibraryReference(DEMO_LIBRARY_NAME, config, capture)
    expect(again.manifest.createdAt).toBe(manifest.createdAt)
    expect(lines.join('\n')).not.toContain('to compare')
  })

  it('a saved demo built by another tokenizer (a pull changed the code, not the files) is rebuilt, not refused', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    // The fingerprint of the code before the pull.
    const { dir } = await saveDemo(tools, {
      retriever: 'bm25',
      source: { fingerprint: 'sha256:0' },
    })
    // The terms of the tokenizer before the pull: its probe.
    const path = join(dir, 'manifest.json')
    const manifest = JSON.parse(await readFile(path, 'utf8'))
    manifest.retrievers.bm25.tokenizerCoreProbe = 'sha256:older'
    manifest.build.parts.bm25.tokenizerCoreProbe = 'sha256:older'
    await writeFile(path, JSON.stringify(manifest))
    // Until round 45 (qa16): its tools the same and its build settings not this toolsel's, it was
    // loaded as saved, and refused: the start failed.
    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, logger)
    expect(loaded.library.size).toBe(tools.length)
    const saved = JSON.parse(await readFile(path, 'utf8'))
    expect(saved.retrievers.bm25.tokenizerCoreProbe).toBe(tokenizerProbes().core)
    expect(saved.source.fingerprint).toBe(await demoFingerprint(DEMO_LIBRARY_DIR))
  })

  it('a start that serves every saved index checks the saved demo against its files when it is not the default', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    await saveDemo(tools.slice(1))
    await saveIndexedLibrary(
      config.library.indexDir,
      await indexTools('sample', SAMPLE_TOOLS, config),
    )
    const served = { ...config, library: { ...config.library, default: 'sample', loadAll: true } }
    const loaded = await loadStartupLibraries(served, logger)
    const demo = loaded.find((indexed) => indexed.library.name === DEMO_LIBRARY_NAME)
    // Until round 45 (qa16) loaded as saved: one tool short of its files.
    expect(demo?.library.size).toBe(tools.length)
  })

  it("a saved demo built from another checkout's demo directory (a moved checkout, a shared index dir) is rebuilt from this one's", async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const elsewhere = '/srv/old-checkout/toolsel/dist/library/demo/servers'
    const { dir } = await saveDemo(tools.slice(1), { source: { path: elsewhere } })
    // Until round 44 it loaded as saved, never rebuilt.
    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, logger)
    expect(loaded.library.size).toBe(tools.length)
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))
    expect(manifest.source.path).toBe(DEMO_LIBRARY_DIR)
  })

  it('a rebuild of the saved demo first removes the temporary directory of one killed before its commit', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    await saveDemo(tools.slice(1))
    // What a `toolsel select` killed while it saved the rebuilt demo leaves (a pid that is gone).
    const left = join(config.library.indexDir, `.tmp-demo+${deadPid()}-0123456789ab`)
    await mkdir(left)
    await writeFile(join(left, 'tools.jsonl'), '')
    // Until round 44 only a server's start removed it; a `toolsel select` left it there.
    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, logger)
    expect(loaded.library.size).toBe(tools.length)
    expect(await readdir(config.library.indexDir)).not.toContain(basename(left))
  })

  it('train and train-data read a saved demo whose files changed as a start serves it: the tools of its files', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const retired = { ...SAMPLE_TOOLS[0]!, id: 'retired.old_tool' }
    const { dir } = await saveDemo([...tools.slice(1), retired])
    const before = await readFile(join(dir, 'manifest.json'), 'utf8')
    // Until round 44 the saved tools (the retired one in, the new one out) until a start.
    const read = await readLibraryReferenceTools(DEMO_LIBRARY_NAME, config.library.indexDir)
    expect(read.map((tool) => tool.id)).toEqual(tools.map((tool) => tool.id))
    // Nothing written.
    expect(await readFile(join(dir, 'manifest.json'), 'utf8')).toBe(before)
    // Saved by a PUT: its own tools.
    await saveIndexedLibrary(
      config.library.indexDir,
      await indexTools('demo', SAMPLE_TOOLS, config),
    )
    const put = await readLibraryReferenceTools(DEMO_LIBRARY_NAME, config.library.indexDir)
    expect(put.length).toBe(SAMPLE_TOOLS.length)
  })

  it('a demo saved with tools of its own (a PUT) loads as saved, whatever the demo files hold', async () => {
    const uploaded = await indexTools(DEMO_LIBRARY_NAME, SAMPLE_TOOLS, config)
    await saveIndexedLibrary(config.library.indexDir, uploaded)
    const loaded = await loadLibraryReference(DEMO_LIBRARY_NAME, config, logger)
    expect(loaded.library.size).toBe(SAMPLE_TOOLS.length)
  })

  it('rebuilds a library with the parts it was built with, keeping its source', async () => {
    const indexed = await indexTools('rx', SAMPLE_TOOLS, config, {
      retriever: 'regex',
      source: { path: '/data/rx.json' },
    })
    const examples = ExampleSet.of(
      [{ instruction: 'what will the weather be tomorrow', tools: ['weather.get_forecast'] }],
      { cap: config.library.maxExamples },
    )
    const rebuilt = await rebuildLibrary(indexed, config, { examples })
    expect([...rebuilt.retrievers.keys()]).toEqual(['bm25', 'regex'])
    expect(rebuilt.manifest.defaultRetriever).toBe('regex')
    expect(rebuilt.manifest.source).toEqual({ path: '/data/rx.json' })
    expect(rebuilt.examples?.set.size).toBe(1)
  })

  it("a rebuild for new usage examples keeps the tool postings; its saved BM25 files are a fresh build's", async () => {
    const asked = (instruction: string, ...tools: string[]) => ({ instruction, tools })
    const first = ExampleSet.of([
      asked('will it rain in Paris tomorrow', 'weather.get_forecast'),
      asked('forecast for the weekend', 'weather.get_forecast'),
      asked('mail the report to Ana', 'mail.send_email'),
    ])
    const second = first.with([
      asked('email Bob the invoice', 'mail.send_email'),
      asked('text my sister I am late', 'sms.send_sms'),
      asked('sms the code to Jo', 'sms.send_sms'),
    ]).set
    const indexed = await indexTools('keep', SAMPLE_TOOLS, config, { examples: first })
    const rebuilt = await rebuildLibrary(indexed, config, { examples: second })
    const bm25 = (lib: IndexedLibrary) => lib.retrievers.get('bm25') as Bm25Retriever
    // Same tools: the tool index is the very same object, the expansion index is new.
    expect(bm25(rebuilt).postings).toBe(bm25(indexed).postings)
    expect(bm25(rebuilt).expansionPostings).not.toBe(bm25(indexed).expansionPostings)
    const fresh = await indexTools('keep', SAMPLE_TOOLS, config, { examples: second })
    const kept = await saveIndexedLibrary(join(config.library.indexDir, 'a'), rebuilt)
    const built = await saveIndexedLibrary(join(config.library.indexDir, 'b'), fresh)
    for (const file of ['bm25.bin', 'bm25-examples.bin'])
      expect((await readFile(join(kept, file))).equals(await readFile(join(built, file)))).toBe(
        true,
      )
    for (const query of ['text someone', 'send the invoice by email', 'rain tomorrow']) {
      expect(await bm25(rebuilt).retrieve(query, { k: 5 })).toEqual(
        await bm25(fresh).retrieve(query, { k: 5 }),
      )
    }
    // Other tools: built afresh.
    const fewer = await rebuildLibrary(rebuilt, config, {
      tools: SAMPLE_TOOLS.slice(0, -1),
      examples: second,
    })
    expect(bm25(fewer).postings).not.toBe(bm25(rebuilt).postings)
  })

  it('a scoped view holds only the tools in scope, BM25 only, under the library name', async () => {
    const indexed = await indexTools('full', SAMPLE_TOOLS, config, { retriever: 'regex' })
    const weather = SAMPLE_TOOLS.filter((tool) => tool.namespace === 'weather')
    const view = await scopedView(indexed, weather, config)
    expect(view.library.name).toBe('full')
    expect(view.library.size).toBe(weather.length)
    expect([...view.retrievers.keys()]).toEqual(['bm25'])
    const hits = await view.retrievers.get('bm25')!.retrieve('send a message', { k: 10 })
    expect(hits.every((hit) => hit.id.startsWith('weather.'))).toBe(true)
  })

  it('is the only module that imports the index builder and store (no second lifecycle path)', async () => {
    const root = join(import.meta.dirname, '../..')
    const offenders: string[] = []
    for (const folder of ['src', 'bench', 'scripts']) {
      for (const file of await readdir(join(root, folder), { recursive: true })) {
        if (!file.endsWith('.ts')) continue
        const path = join(root, folder, file)
        const text = await readFile(path, 'utf8')
        if (/from '[./]*(store\/)?(build-index|index-store)\.ts'/.test(text))
          offenders.push(relative(root, path))
      }
    }
    expect(offenders).toEqual(['src/store/library-lifecycle.ts'])
  })
})
