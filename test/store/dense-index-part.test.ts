import { copyFile, cp, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { clearEmbeddingModelCache } from '../../src/models/create-embedding-model.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { requireRetriever, type IndexedLibrary } from '../../src/store/indexed-library.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import {
  TINY_EMBEDDER as TINY,
  TINY_EMBEDDER_MISSING as TINY_MISSING,
} from '../helpers/tiny-embedder.ts'

let indexDir: string

beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-dense-'))
})

function denseConfig(dense: ConfigLayer = {}, retrieve: ConfigLayer = {}) {
  return parseConfig({ retrieve: { ...retrieve, dense: { embedder: 'hashing', ...dense } } })
}

async function buildAndSave(config = denseConfig(), retriever: 'dense' | 'hybrid' = 'hybrid') {
  const library = new ToolLibrary('sample', SAMPLE_TOOLS)
  const indexed = await buildIndexedLibrary(library, config, {
    source: { path: '/data/sample.json' },
    retriever,
  })
  return { indexed, dir: await saveIndexedLibrary(indexDir, indexed) }
}

function weightsOf(bm25: number, dense: number) {
  return [
    { retriever: 'bm25', weight: bm25 },
    { retriever: 'dense', weight: dense },
  ]
}

const QUERIES = ['send an email to Ann', 'weather in Paris tomorrow', 'book a hotel room']

describe('dense index part', () => {
  for (const kind of ['flat', 'hnsw'] as const) {
    it(`round-trips a hybrid ${kind} index: same files, manifest and results`, async () => {
      const config = denseConfig({ index: kind })
      const { indexed, dir } = await buildAndSave(config)
      const files = (await readdir(dir)).sort()
      expect(files).toEqual(
        [
          'bm25.bin',
          'dense-ids.json',
          kind === 'flat' ? 'dense.f32' : 'dense.hnsw',
          'dense.json',
          'embeddings.cache',
          'manifest.json',
          'tools.idx',
          'tools.jsonl',
        ].sort(),
      )
      const loaded = await loadIndexedLibrary(dir, config)
      expect(loaded.manifest.defaultRetriever).toBe('hybrid')
      expect(loaded.manifest.retrievers.dense).toMatchObject({
        embedderId: 'hashing:256',
        dimensions: 256,
        kind,
        text: 'full',
        cacheFile: 'embeddings.cache',
      })
      expect(loaded.manifest.retrievers.hybrid).toEqual({ inputs: ['bm25', 'dense'] })
      expect([...loaded.retrievers.keys()]).toEqual(['bm25', 'dense', 'hybrid'])
      expect(requireRetriever(loaded).name).toBe('hybrid(bm25+dense:hashing:256)')
      for (const kindName of ['dense', 'hybrid']) {
        for (const query of QUERIES) {
          const before = await indexed.retrievers.get(kindName)!.retrieve(query, { k: 5 })
          const after = await loaded.retrievers.get(kindName)!.retrieve(query, { k: 5 })
          expect(after).toEqual(before)
          expect(after.length).toBeGreaterThan(0)
        }
      }
    })
  }

  it('builds dense without hybrid when asked for dense', async () => {
    const config = denseConfig()
    const { dir } = await buildAndSave(config, 'dense')
    const loaded = await loadIndexedLibrary(dir, config)
    expect([...loaded.retrievers.keys()]).toEqual(['bm25', 'dense'])
    expect(loaded.manifest.defaultRetriever).toBe('dense')
    expect(loaded.manifest.retrievers.hybrid).toBeUndefined()
  })

  it('ranks the tool that serves a query first with the dense retriever', async () => {
    const { indexed } = await buildAndSave()
    const [first] = await indexed.retrievers.get('dense')!.retrieve('send an SMS text message', {
      k: 3,
    })
    expect(first.id).toBe('sms.send_sms')
  })

  it('refuses an index built with another embedder, naming both and the rebuild command', async () => {
    const { dir } = await buildAndSave()
    const other = denseConfig({ embedder: 'hashing:128' })
    const error = await loadIndexedLibrary(dir, other).catch((caught: unknown) => caught)
    expect(error).toMatchObject({
      code: 'INDEX_MISMATCH',
      details: { builtWith: 'hashing:256', configured: 'hashing:128' },
    })
    expect((error as Error).message).toBe(
      'Index "sample" was built with embedder hashing:256 (256 dims); the config asks for hashing:128 (128 dims). ' +
        'Rebuild it with: toolsel index /data/sample.json --name sample --retriever hybrid --embedder hashing:128. ' +
        "Or use the index's embedder: --embedder hashing:256, TOOLSEL_EMBEDDER or retrieve.dense.embedder.",
    )
  })

  it('names the model and the configured id when they differ', async () => {
    const { dir } = await buildAndSave()
    await expect(loadIndexedLibrary(dir, denseConfig({ embedder: 'hashing:64' }))).rejects.toThrow(
      'the config asks for hashing:64 (64 dims)',
    )
    const { dir: other } = await buildAndSave(denseConfig({ embedder: 'hashing:64' }))
    await expect(loadIndexedLibrary(other, denseConfig())).rejects.toThrow(
      'the config asks for hashing:256 ("hashing") (256 dims)',
    )
  })

  it('answers a dense request on a BM25-only library with the rebuild command', async () => {
    const config = denseConfig()
    const library = new ToolLibrary('plain', SAMPLE_TOOLS)
    const dir = await saveIndexedLibrary(indexDir, await buildIndexedLibrary(library, config))
    const loaded = await loadIndexedLibrary(dir, config)
    expect(() => requireRetriever(loaded, 'dense')).toThrow(
      expect.objectContaining({
        code: 'UNKNOWN_COMPONENT',
        message:
          'Library "plain" has no "dense" retriever (available: bm25). Rebuild it with: toolsel index <file> --name plain --retriever bm25,dense.',
      }),
    )
  })

  it('serves "dense" from a dense:<configured embedder> part and the reverse, and says what to ask for otherwise', async () => {
    const config = denseConfig()
    const library = new ToolLibrary('named', SAMPLE_TOOLS)
    const named = await buildIndexedLibrary(library, config, { retriever: 'bm25,dense:hashing' })
    const part = named.retrievers.get('dense:hashing')!
    // The same part under two names: retrieve.dense.embedder is hashing.
    expect(requireRetriever(named, 'dense', config)).toBe(part)
    const fused = requireRetriever(named, 'hybrid', config)
    expect(await fused.retrieve('weather in Paris tomorrow', { k: 3 })).toEqual(
      await requireRetriever(named, 'hybrid:bm25+dense:hashing', config).retrieve(
        'weather in Paris tomorrow',
        { k: 3 },
      ),
    )
    const plain = await buildIndexedLibrary(library, config, { retriever: 'bm25,dense' })
    expect(requireRetriever(plain, 'dense:hashing', config)).toBe(plain.retrievers.get('dense'))
    // Another embedder configured: not the same part; the message names the one it has.
    const other = denseConfig({ embedder: 'hashing:128' })
    expect(() => requireRetriever(named, 'dense', other)).toThrow(
      expect.objectContaining({
        code: 'UNKNOWN_COMPONENT',
        message:
          'Library "named" has no "dense" retriever (available: bm25, dense:hashing). It has no "dense" ("dense" is the dense part of the configured embedder, retrieve.dense.embedder: hashing:128); to use the dense part it has, ask for "dense:hashing" instead. Rebuild it with: toolsel index <file> --name named --retriever bm25,dense:hashing,dense.',
      }),
    )
    expect(() => requireRetriever(named, 'hybrid', other)).toThrow(
      'to use the dense part it has, ask for "hybrid:bm25+dense:hashing" instead.',
    )
  })

  it('resolves `auto` to the library default', async () => {
    const { indexed } = await buildAndSave(denseConfig(), 'dense')
    expect(requireRetriever(indexed, 'auto').name).toBe('dense:hashing:256')
  })

  it('refuses dense vectors that belong to other tools', async () => {
    const config = denseConfig()
    const { dir } = await buildAndSave(config)
    const idsFile = join(dir, 'dense-ids.json')
    const ids = JSON.parse(await readFile(idsFile, 'utf8')) as string[]
    await writeFile(idsFile, JSON.stringify([...ids.slice(1), ids[0]]))
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({ code: 'INDEX_CORRUPT' })
  })

  it('keeps HNSW build parameters from the file and takes efSearch from the config', async () => {
    const { dir } = await buildAndSave(denseConfig({ hnsw: { m: 8, efConstruction: 50 } }))
    const header = JSON.parse(await readFile(join(dir, 'dense.json'), 'utf8'))
    expect(header.params).toMatchObject({ m: 8, efConstruction: 50, efSearch: 256 })
    const loaded = await loadIndexedLibrary(dir, denseConfig({ hnsw: { efSearch: 20 } }))
    expect(await loaded.retrievers.get('dense')!.retrieve('send email', { k: 3 })).toHaveLength(3)
  })

  it("applies a call's minScore (a request's tau) to the hybrid's BM25 input, not to fused scores", async () => {
    const { indexed } = await buildAndSave(
      denseConfig({}, { hybrid: { fusion: 'rrf', inputs: weightsOf(1, 1) } }),
    )
    const hybrid = indexed.retrievers.get('hybrid')!
    const query = 'send an email message'
    // A BM25-scale threshold on RRF scores (at most 2/61) would leave nothing. Here BM25 keeps
    // no candidate, so only the dense list counts: every fused score is at most 1/61.
    const strict = await hybrid.retrieve(query, { k: 5, minScore: 1000 })
    expect(strict).toHaveLength(5)
    expect(strict[0]).toEqual({ id: 'mail.send_email', score: 1 / 61 })
    expect(strict.every((candidate) => candidate.score <= 1 / 61)).toBe(true)
    const open = await hybrid.retrieve(query, { k: 5, minScore: 0 })
    expect(open[0].id).toBe('mail.send_email')
    expect(open[0].score).toBeCloseTo(2 / 61)
  })

  it('fuses with weighted min-max, bm25 0.7 and dense 0.3, by default', async () => {
    const { indexed } = await buildAndSave()
    const hybrid = indexed.retrievers.get('hybrid')!
    const [best] = await hybrid.retrieve('send an email message', { k: 5, minScore: 0 })
    // The top of both lists scales to 1 in each: 0.7 + 0.3.
    expect(best).toEqual({ id: 'mail.send_email', score: 1 })
    const denseOnly = await hybrid.retrieve('send an email message', { k: 5, minScore: 1000 })
    expect(denseOnly[0]).toEqual({ id: 'mail.send_email', score: 0.3 })
  })

  it('warns that a CPU-only embedder ignores device cuda', async () => {
    const logger = createMemoryLogger()
    const config = denseConfig({ device: 'cuda' })
    await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config, {
      retriever: 'dense',
      logger,
    })
    expect(logger.lines.join('\n')).toContain(
      'Embedder "hashing" runs on the CPU only; retrieve.dense.device "cuda" is ignored',
    )
  })
})

/**
 * `rebuilt` (built over the previous index) answers as `fresh` (built from nothing) does, and
 * `fresh` unlike `old` (the previous build) for some query: no vector of `old` was reused.
 */
async function expectFreshVectors(
  built: Record<'rebuilt' | 'fresh' | 'old', IndexedLibrary>,
  change: string,
): Promise<void> {
  const hits = (indexed: IndexedLibrary, query: string) =>
    indexed.retrievers.get('dense')!.retrieve(query, { k: 8 })
  let differs = false
  for (const query of QUERIES) {
    expect(await hits(built.rebuilt, query), query).toEqual(await hits(built.fresh, query))
    differs ||=
      JSON.stringify(await hits(built.fresh, query)) !==
      JSON.stringify(await hits(built.old, query))
  }
  expect(differs, change).toBe(true)
}

describe.skipIf(TINY_MISSING !== undefined)('dense index part with the tiny ONNX embedder', () => {
  it('round-trips an index built with onnx:<dir>, and falls back from cuda to cpu with a warning', async () => {
    const config = denseConfig({ embedder: `onnx:${TINY}`, index: 'flat' })
    const { indexed, dir } = await buildAndSave(config)
    expect(indexed.manifest.retrievers.dense).toMatchObject({
      embedderId: 'onnx:tiny-embedder',
      dimensions: 32,
    })
    const logger = createMemoryLogger()
    const cuda = denseConfig({ embedder: `onnx:${TINY}`, device: 'cuda' })
    const loaded = await loadIndexedLibrary(dir, cuda, { logger })
    for (const query of QUERIES) {
      expect(await loaded.retrievers.get('hybrid')!.retrieve(query, { k: 5 })).toEqual(
        await indexed.retrievers.get('hybrid')!.retrieve(query, { k: 5 }),
      )
    }
    // On a machine with a working CUDA provider there is nothing to fall back from.
    const log = logger.lines.join('\n')
    if (!log.includes('"device":"cuda"')) expect(log).toContain('falling back to CPU')
  })

  it("re-embeds after a change of an onnx model's document prefix: its model id is the same, so the cache must not answer", async () => {
    const plain = denseConfig({ embedder: `onnx:${TINY}`, index: 'flat' })
    const { dir } = await buildAndSave(plain, 'dense')
    const prefixed = denseConfig({
      embedder: `onnx:${TINY}`,
      index: 'flat',
      documentPrefix: 'passage: ',
    })
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    const options = { source: { path: '/data/sample.json' }, retriever: 'dense' } as const
    const rebuilt = await buildIndexedLibrary(library, prefixed, {
      ...options,
      previousIndexDir: dir,
    })
    const fresh = await buildIndexedLibrary(library, prefixed, options)
    const plainBuilt = await buildIndexedLibrary(library, plain, options)
    // Was: the old vectors from the cache (keyed by model id and tool), as if nothing changed.
    await expectFreshVectors({ rebuilt, fresh, old: plainBuilt }, 'the prefix changes some scores')
    expect(rebuilt.manifest.build?.parts.dense).toMatchObject({ documentPrefix: 'passage: ' })
  })

  it('neither loads nor reuses vectors of an onnx model whose weights changed under the same directory', async () => {
    // A copy of the model, its weights replaced in place afterwards (a fine-tuned export
    // written over the old one): the id `onnx:<dir>` and every config setting stay the same.
    const model = join(await mkdtemp(join(tmpdir(), 'toolsel-model-')), 'tiny-embedder')
    await cp(TINY, model, { recursive: true })
    const config = denseConfig({ embedder: `onnx:${model}`, index: 'flat' })
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    const options = { source: { path: '/data/sample.json' }, retriever: 'dense' } as const
    const old = await buildIndexedLibrary(library, config, options)
    const dir = await saveIndexedLibrary(indexDir, old)
    await copyFile(join(model, 'onnx/model_quantized.onnx'), join(model, 'onnx/model.onnx'))
    clearEmbeddingModelCache() // What a restart does: the model is loaded from its files again.

    // Was: loaded, its tools' old vectors searched with the new model's query vectors.
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_MISMATCH',
      message: expect.stringMatching(/the model files of \S+ changed since the index was built/),
    })
    const rebuilt = await buildIndexedLibrary(library, config, {
      ...options,
      previousIndexDir: dir,
    })
    const fresh = await buildIndexedLibrary(library, config, options)
    // Was: every tool's old vector taken from the cache, mixed with the new model's queries.
    await expectFreshVectors({ rebuilt, fresh, old }, 'the new weights change some scores')
    const saved = await loadIndexedLibrary(await saveIndexedLibrary(indexDir, rebuilt), config)
    expect(saved.manifest.retrievers.dense).toMatchObject({
      modelFiles: rebuilt.manifest.retrievers.dense?.modelFiles,
    })
  })

  it("refuses an index whose onnx model directory's toolsel.json changed (its document prefix: not in the config)", async () => {
    const model = join(await mkdtemp(join(tmpdir(), 'toolsel-model-')), 'tiny-embedder')
    await cp(TINY, model, { recursive: true })
    const config = denseConfig({ embedder: `onnx:${model}`, index: 'flat' })
    const { dir } = await buildAndSave(config, 'dense')
    const settings = JSON.parse(await readFile(join(model, 'toolsel.json'), 'utf8'))
    await writeFile(
      join(model, 'toolsel.json'),
      JSON.stringify({ ...settings, documentPrefix: 'passage: ' }),
    )
    clearEmbeddingModelCache()
    // Was: loaded; the build settings record the config's prefix only, and it did not change.
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
      code: 'INDEX_MISMATCH',
      message: expect.stringMatching(/the model files of \S+ changed since the index was built/),
    })
  })

  it('accepts and reuses an index saved before model files were recorded, and records them on its next save', async () => {
    const config = denseConfig({ embedder: `onnx:${TINY}`, index: 'flat' })
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    const options = { source: { path: '/data/sample.json' }, retriever: 'dense' } as const
    const built = await buildIndexedLibrary(library, config, options)
    const modelFiles = built.manifest.retrievers.dense?.modelFiles
    expect(modelFiles).toMatch(/^sha256:[0-9a-f]{64}$/)
    const dir = await saveIndexedLibrary(indexDir, built)
    // As round 33 wrote it: no modelFiles in the dense entry.
    const manifestPath = join(dir, 'manifest.json')
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'))
    delete manifest.retrievers.dense.modelFiles
    await writeFile(manifestPath, JSON.stringify(manifest))

    expect((await loadIndexedLibrary(dir, config)).manifest.retrievers.dense).not.toHaveProperty(
      'modelFiles',
    )
    const logger = createMemoryLogger()
    const rebuilt = await buildIndexedLibrary(library, config, {
      ...options,
      previousIndexDir: dir,
      logger,
    })
    expect(logger.lines.join('\n')).toContain(`"cachedVectorsLoaded":${SAMPLE_TOOLS.length}`)
    expect(rebuilt.manifest.retrievers.dense).toMatchObject({ modelFiles })
  })
})
