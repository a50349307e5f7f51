/**
 * A library upload's import in a worker thread (store/upload-import.ts): real workers, real HTTP
 * uploads. The worker path must write the index byte for byte as the import in the process does,
 * answer the importer's errors as the process does, turn a worker's death into a 500 that
 * changes nothing, and stop when its request does.
 */
import { execFile } from 'node:child_process'
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { isToolselError } from '../../src/errors.ts'
import { importTools } from '../../src/library/importers/index.ts'
import { MAX_TOOL_LINE_BYTES } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { toolLineIndexOfBytes } from '../../src/store/tools-index-file.ts'
import { idleImportWorkers, importUploadInWorker } from '../../src/store/upload-import.ts'
import { importLibrary, importUploadedLibrary } from '../../src/store/library-lifecycle.ts'
import { Bm25Retriever } from '../../src/retrieve/bm25/bm25-retriever.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import { bm25Settings } from '../../src/store/kinds/bm25-kind.ts'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { describedTool } from '../helpers/oversized-tools.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures')
const work = await mkdtemp(join(tmpdir(), 'toolsel-upload-import-'))
afterAll(() => rm(work, { recursive: true, force: true }))

/**
 * Canonical tools with what the importer rewrites (parameters as a bare property map, an
 * optional marker), ids with escapes and non-ASCII text.
 */
function canonicalBody(version: string, count: number): string {
  return JSON.stringify(
    Array.from({ length: count }, (_, index) => ({
      id: index % 50 === 7 ? `odd "quoted" \\ id ${index}` : `ns.tool_${index}`,
      name: `tool_${index}`,
      description: `${version}: looks up thing ${index} (ünïcödé ${index % 3 === 0 ? '日本語' : 'text'})`,
      parameters:
        index % 4 === 0
          ? { city: { type: 'string', description: 'City' }, days: { type: 'integer' } }
          : { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    })),
  )
}

/** A service over `indexDir` served over HTTP; `inWorker` sends every upload to the worker. */
async function serve(indexDir: string, inWorker: boolean) {
  const config = parseConfig({
    library: { default: 'demo', indexDir, loadAll: true },
    server: { importWorkerMinChars: inWorker ? 0 : Number.MAX_SAFE_INTEGER },
    log: { level: 'silent' },
  })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const http = await listenApp(createApp(service).fetch)
  return { service, http, logger }
}

async function put(http: ListeningApp, library: string, body: string, query = '') {
  const response = await fetch(`${http.url}/v1/libraries/${library}${query}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body,
  })
  // The library's creation time differs from one service to the other.
  const { createdAt, ...json } = (await response.json()) as Record<string, unknown>
  return { status: response.status, json, created: typeof createdAt }
}

/** Every file of an index directory; the manifest without its creation time. */
async function indexFiles(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {}
  for (const name of (await readdir(dir)).sort()) {
    const bytes = await readFile(join(dir, name))
    if (name === 'manifest.json') {
      const { createdAt, ...manifest } = JSON.parse(bytes.toString()) as Record<string, unknown>
      expect(typeof createdAt).toBe('string')
      files[name] = JSON.stringify(manifest)
    } else files[name] = bytes.toString('base64')
  }
  return files
}

describe('a library upload imported in a worker thread', () => {
  it('writes the same index files, byte for byte, and answers the same as the import in the process', async () => {
    const inProcess = await serve(join(work, 'process'), false)
    const inWorker = await serve(join(work, 'worker'), true)
    try {
      const bodies: Array<[string, string, string]> = [
        ['generated', canonicalBody('v1', 600), ''],
        [
          'functions',
          await readFile(join(FIXTURES, 'formats/functions.json'), 'utf8'),
          '?onDuplicate=rename',
        ],
        ['chinese', await readFile(join(FIXTURES, 'formats/chinese-tools.json'), 'utf8'), ''],
        [
          'renamed',
          await readFile(join(FIXTURES, 'importers/duplicate-ids.jsonl'), 'utf8'),
          '?onDuplicate=rename',
        ],
      ]
      for (const [library, body, query] of bodies) {
        const a = await put(inProcess.http, library, body, query)
        const b = await put(inWorker.http, library, body, query)
        expect(a.status, JSON.stringify(a.json)).toBe(201)
        expect(b).toEqual(a)
        expect(await indexFiles(join(work, 'worker', library))).toEqual(
          await indexFiles(join(work, 'process', library)),
        )
        // The served libraries answer alike.
        const served = inWorker.service.library(library).library
        expect(served.size).toBe(inProcess.service.library(library).library.size)
        expect(served.tools).toEqual(inProcess.service.library(library).library.tools)
      }
      const select = async (http: ListeningApp) =>
        (
          await fetch(`${http.url}/v1/select-tools`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              instruction: 'look up thing 12 in Paris',
              library: 'generated',
            }),
          })
        ).json()
      const [x, y] = [await select(inProcess.http), await select(inWorker.http)]
      expect((x as { tools: unknown[] }).tools.length).toBeGreaterThan(0)
      const untimed = ({ timings, ...answer }: Record<string, unknown>) => answer
      expect(untimed(y as Record<string, unknown>)).toEqual(untimed(x as Record<string, unknown>))
      // A replace through the worker: the new version is served and saved.
      const replaced = await put(inWorker.http, 'generated', canonicalBody('v2', 300))
      expect(replaced.status).toBe(200)
      expect(inWorker.service.library('generated').library.size).toBe(300)
    } finally {
      await inProcess.http.close()
      await inWorker.http.close()
    }
  }, 120_000)

  it("answers a bad body with the importer's own 4xx, as in the process, and changes nothing", async () => {
    const inProcess = await serve(join(work, 'bad-process'), false)
    const inWorker = await serve(join(work, 'bad-worker'), true)
    try {
      for (const { http } of [inProcess, inWorker])
        expect((await put(http, 'lib', canonicalBody('v1', 40))).status).toBe(201)
      const before = await indexFiles(join(work, 'bad-worker', 'lib'))
      const bad = [
        ['{"tools": [', ''],
        [await readFile(join(FIXTURES, 'importers/duplicate-ids.jsonl'), 'utf8'), ''],
        ['[]', ''],
        [canonicalBody('v1', 3), '?format=gorilla'],
      ]
      for (const [body, query] of bad) {
        const a = await put(inProcess.http, 'lib', body, query)
        const b = await put(inWorker.http, 'lib', body, query)
        expect(a.status).toBeGreaterThanOrEqual(400)
        expect(a.status).toBeLessThan(500)
        expect(b).toEqual(a)
      }
      expect(await indexFiles(join(work, 'bad-worker', 'lib'))).toEqual(before)
      expect(inWorker.service.library('lib').library.size).toBe(40)
      expect(await indexDirEntries(join(work, 'bad-worker'))).toEqual(['lib'])
    } finally {
      await inProcess.http.close()
      await inWorker.http.close()
    }
  }, 120_000)

  it('over HTTP, the kept thread that refused uploads (importer 4xx) imports the next good one as the process does', async () => {
    const inProcess = await serve(join(work, 'kept-process'), false)
    const inWorker = await serve(join(work, 'kept-worker'), true)
    try {
      const both = async (body: string, query = '') => {
        const a = await put(inProcess.http, 'lib', body, query)
        const b = await put(inWorker.http, 'lib', body, query)
        expect(b).toEqual(a)
        return b
      }
      expect((await both(canonicalBody('k1', 60))).status).toBe(201)
      // One thread kept (server.importWorkers 1): the one that imported k1.
      const kept = idleImportWorkers()
      expect(kept).toHaveLength(1)
      const bad = [
        ['{"tools": [', ''],
        [await readFile(join(FIXTURES, 'importers/duplicate-ids.jsonl'), 'utf8'), ''],
        [canonicalBody('k2', 5), '?format=openapi'],
      ]
      for (const [body, query] of bad) {
        const refused = await both(body, query)
        expect(refused.status, JSON.stringify(refused)).toBe(400)
        // The importer's own error leaves the thread sound: kept, not ended.
        expect(idleImportWorkers()).toEqual(kept)
      }
      const next = await both(canonicalBody('k3', 80))
      expect(next.status).toBe(200) // replaced
      expect(idleImportWorkers()).toEqual(kept)
      const library = inWorker.service.library('lib').library
      expect(library.size).toBe(80)
      expect(library.get('ns.tool_3')?.description).toContain('k3: looks up thing 3')
      // Nothing of k1 or the refused bodies is left in what the thread handed back.
      expect(await indexFiles(join(work, 'kept-worker', 'lib'))).toEqual(
        await indexFiles(join(work, 'kept-process', 'lib')),
      )
    } finally {
      await inProcess.http.close()
      await inWorker.http.close()
    }
  }, 120_000)

  it('a worker out of memory is PAYLOAD_TOO_LARGE (413) naming the heap limit, and the upload changes nothing', async () => {
    const body = canonicalBody('big', 40_000)
    const error = await importUploadInWorker('big', body, {}, { workers: 1, heapLimitMb: 16 }).then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(isToolselError(error, 'PAYLOAD_TOO_LARGE'), String(error)).toBe(true)
    expect((error as Error).message).toMatch(
      /heap limit \(16 MiB, sized from server.bodyLimitBytes\)/,
    )
  }, 60_000)

  it("hands back every tool's content hash: toolHashes reads no tool on the event loop", async () => {
    // Hashing parses and serialises every tool: Google Chat's 5.5 MB tool alone took ~130 ms of
    // the main thread the first time something asked for the hashes (bench/README round 23).
    const body = canonicalBody('hashes', 120)
    const upload = await importUploadInWorker('hashes', body, {}, { workers: 1, heapLimitMb: 256 })
    const parse = vi.spyOn(JSON, 'parse')
    let hashes: ReadonlyMap<string, string>
    try {
      hashes = upload.library.toolHashes
      expect(parse).not.toHaveBeenCalled()
    } finally {
      parse.mockRestore()
    }
    const inProcess = new ToolLibrary('hashes', (await importTools(body, {})).tools)
    expect([...hashes]).toEqual([...inProcess.toolHashes])
    // tools.idx carries them too, so the library loaded from the saved index has them.
    const { bytes, toolLines, toolsFileHash } = upload.toolsIndex
    const lineIndex = await toolLineIndexOfBytes(bytes, toolLines, toolsFileHash)
    expect(Buffer.from(lineIndex.toolHashes!)).toEqual(inProcess.toolHashBytes())
    expect(upload.library.contentHash).toBe(inProcess.contentHash)
  }, 60_000)

  it('builds the BM25 postings in the worker: the index build reads no tool on the event loop', async () => {
    // A 7.9 MB tool was one step of the sliced BM25 build: decoding, parsing and tokenizing it
    // held the event loop ~100 ms (bench/README round 24). The first test compares the files.
    const config = parseConfig({ server: { importWorkerMinChars: 0 }, log: { level: 'silent' } })
    const body = canonicalBody('postings', 300)
    const build = vi.spyOn(Bm25Retriever, 'buildAsync')
    const walk = vi.spyOn(ToolLibrary.prototype, 'walk', 'get')
    try {
      const { indexed } = await importUploadedLibrary({ text: body }, 'postings', config)
      expect(build).not.toHaveBeenCalled()
      expect(walk).not.toHaveBeenCalled()
      const { indexed: inProcess } = await importLibrary({ text: body }, 'postings', config)
      expect(build).toHaveBeenCalledOnce()
      const query = { k: 5 }
      for (const text of ['looks up thing 42', 'ünïcödé 日本語 city'])
        expect(await indexed!.retrievers.get('bm25')!.retrieve(text, query)).toEqual(
          await inProcess.retrievers.get('bm25')!.retrieve(text, query),
        )
    } finally {
      build.mockRestore()
      walk.mockRestore()
    }
  }, 60_000)

  it('makes no BM25 postings for the tools of the saved index: a same-tools re-upload builds nothing', async () => {
    const config = parseConfig({ server: { importWorkerMinChars: 0 }, log: { level: 'silent' } })
    const body = canonicalBody('same', 200)
    const { indexed: saved } = await importUploadedLibrary({ text: body }, 'same', config)
    const { toolCount: count, contentHash } = saved!.manifest
    const settings = { workers: 1, heapLimitMb: 256, bm25: bm25Settings(config) }
    const known = await importUploadInWorker(
      'same',
      body,
      {},
      {
        ...settings,
        bm25Unless: { count, contentHash },
      },
    )
    expect(known.bm25).toBeUndefined()
    const other = await importUploadInWorker(
      'same',
      canonicalBody('other', 200),
      {},
      {
        ...settings,
        bm25Unless: { count, contentHash },
      },
    )
    expect(other.bm25?.postings.documents).toBe(200)

    // Through importUploadedLibrary: unchanged, and no BM25 build anywhere.
    const build = vi.spyOn(Bm25Retriever, 'buildAsync')
    try {
      const again = await importUploadedLibrary({ text: body }, 'same', config, {
        unchangedFrom: saved,
      })
      expect(again.unchanged).toBe(true)
      // The same tools with other usage examples are built, from the served library's postings.
      // (Two examples: a tool needs retrieve.bm25.examplesMinPerTool of them to be expanded.)
      const used = ['look up thing 3', 'find thing three'].map((instruction) => ({
        instruction,
        tools: ['ns.tool_3'],
      }))
      const examples = ExampleSet.of(used, { cap: 100, version: 1 })
      const withExamples = await importUploadedLibrary({ text: body }, 'same', config, {
        unchangedFrom: saved,
        prepare: () => ({ examples }),
      })
      expect(withExamples.unchanged).toBe(false)
      expect(build).not.toHaveBeenCalled()
      const bm25 = withExamples.indexed!.retrievers.get('bm25') as Bm25Retriever
      expect(bm25.postings).toEqual((saved!.retrievers.get('bm25') as Bm25Retriever).postings)
      expect(bm25.expansionPostings?.documents).toBe(200)
    } finally {
      build.mockRestore()
    }
  }, 60_000)

  it('refuses a tool whose saved line passes MAX_TOOL_LINE_BYTES, naming it (IMPORT_FAILED)', async () => {
    // Every read of a tool on the event loop decodes and parses its line: one of 30 MB held the
    // loop ~220-330 ms each time (bench/README round 23). 1,000 descriptions of 9,000 characters.
    const tool = (id: string, count: number) => describedTool(id, count, 9000)
    const body = JSON.stringify([tool('fits', 10), tool('huge', 1000)])
    const settings = { workers: 1, heapLimitMb: 512 }
    const error = await importUploadInWorker('huge', body, {}, settings).then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(isToolselError(error, 'IMPORT_FAILED'), String(error)).toBe(true)
    expect((error as Error).message).toMatch(/Tool "huge" is 9,0\d\d,\d{3} bytes as JSON/)
    expect((error as { details: object }).details).toMatchObject({ maxBytes: MAX_TOOL_LINE_BYTES })
    // Under the limit it imports.
    const upload = await importUploadInWorker(
      'fits',
      JSON.stringify([tool('fits', 900)]),
      {},
      settings,
    )
    expect(upload.library.size).toBe(1)
  }, 60_000)

  it('the abort of its request terminates the worker; uploads waiting for one run in arrival order', async () => {
    const controller = new AbortController()
    const settings = { workers: 1, heapLimitMb: 256 }
    const aborted = importUploadInWorker(
      'one',
      canonicalBody('a', 20_000),
      {},
      {
        ...settings,
        signal: controller.signal,
      },
    )
    const finished: string[] = []
    const queued = ['two', 'three', 'four'].map((name) =>
      importUploadInWorker(name, canonicalBody(name, 50), {}, settings).then((upload) => {
        finished.push(name)
        return upload
      }),
    )
    const waitingAborted = importUploadInWorker(
      'five',
      canonicalBody('e', 5),
      {},
      {
        ...settings,
        signal: AbortSignal.abort(),
      },
    ).catch((error: unknown) => error)
    setTimeout(() => controller.abort(), 30)
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' })
    expect(await waitingAborted).toMatchObject({ code: 'ABORTED' })
    const uploads = await Promise.all(queued)
    expect(finished).toEqual(['two', 'three', 'four'])
    expect(uploads.map((upload) => upload.library.size)).toEqual([50, 50, 50])
    // The worker's bytes are shared with it, not transferred (no external-memory collection at
    // their arrival on the event loop: bench/README round 16).
    for (const { toolsIndex } of uploads) {
      expect(toolsIndex.toolLines.buffer).toBeInstanceOf(SharedArrayBuffer)
      expect(toolsIndex.bytes.buffer).toBeInstanceOf(SharedArrayBuffer)
    }
    expect(uploads[0].library.get('ns.tool_3')?.description).toContain('two: looks up thing 3')
  }, 60_000)

  it('keeps its worker for the next upload (a fresh one each time was ~2x the CPU), not after a crash or an abort', async () => {
    // A heap limit no other test uses: its own worker.
    const settings = { workers: 1, heapLimitMb: 300 }
    const first = await importUploadInWorker('reuse', canonicalBody('r1', 30), {}, settings)
    expect(first.library.size).toBe(30)
    const [thread] = idleImportWorkers()
    expect(idleImportWorkers()).toEqual([thread])
    // The same thread imports the next upload, and is kept after an importer's own error.
    const second = await importUploadInWorker('reuse', canonicalBody('r2', 40), {}, settings)
    expect(second.library.get('ns.tool_3')?.description).toContain('r2: looks up thing 3')
    expect(idleImportWorkers()).toEqual([thread])
    const refused = await importUploadInWorker('reuse', '{"tools": [', {}, settings).catch(
      (error: unknown) => error,
    )
    expect(isToolselError(refused, 'IMPORT_FAILED'), String(refused)).toBe(true)
    expect(idleImportWorkers()).toEqual([thread])
    // An aborted upload ends its worker; the next gets a new one.
    const controller = new AbortController()
    const aborted = importUploadInWorker(
      'reuse',
      canonicalBody('a', 20_000),
      {},
      {
        ...settings,
        signal: controller.signal,
      },
    )
    setTimeout(() => controller.abort(), 30)
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' })
    expect(idleImportWorkers()).toEqual([])
    const third = await importUploadInWorker('reuse', canonicalBody('r3', 10), {}, settings)
    expect(third.library.size).toBe(10)
    const [next] = idleImportWorkers()
    expect(next).not.toBe(thread)
    // A worker that dies (out of memory) is not kept; the upload after it gets a new one.
    const crashed = await importUploadInWorker(
      'reuse',
      canonicalBody('big', 40_000),
      {},
      {
        workers: 1,
        heapLimitMb: 16,
      },
    ).catch((error: unknown) => error)
    expect(isToolselError(crashed, 'PAYLOAD_TOO_LARGE'), String(crashed)).toBe(true)
    expect(idleImportWorkers()).toEqual([])
    const small = await importUploadInWorker(
      'reuse',
      canonicalBody('s', 5),
      {},
      {
        workers: 1,
        heapLimitMb: 16,
      },
    )
    expect(small.library.size).toBe(5)
    // An idle worker is ended after idleMs.
    const [last] = idleImportWorkers()
    expect(last).not.toBe(next)
    await importUploadInWorker(
      'reuse',
      canonicalBody('s', 5),
      {},
      {
        workers: 1,
        heapLimitMb: 16,
        idleMs: 50,
      },
    )
    expect(idleImportWorkers()).toEqual([last])
    await vi.waitFor(() => expect(idleImportWorkers()).toEqual([]), { timeout: 10_000 })
  }, 120_000)

  it('a worker waiting for the next upload keeps no process alive', async () => {
    // Its idle time is a minute: a process that waited for it would be killed by the timeout.
    const module = (path: string) =>
      JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', '..', path)).href)
    const script = `
import { idleImportWorkers, importUploadInWorker } from ${module('src/store/upload-import.ts')}
const upload = await importUploadInWorker('alive', '[{"id":"a","name":"a","description":"d"}]', {}, { workers: 1, heapLimitMb: 256, idleMs: 60_000 })
console.log(upload.library.size, idleImportWorkers().length)
`
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 40_000 },
    )
    expect(stdout.trim()).toBe('1 1')
  }, 60_000)
})
