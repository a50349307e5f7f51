import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { runCli } from './run-cli.ts'
import {
  TINY_EMBEDDER as TINY,
  TINY_EMBEDDER_MISSING as TINY_MISSING,
} from '../helpers/tiny-embedder.ts'

const run = (...argv: string[]) => runCli(argv)

let scratch: string
let toolsFile: string

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'toolsel-cli-dense-'))
  toolsFile = join(scratch, 'sample.json')
  await writeFile(toolsFile, JSON.stringify(SAMPLE_TOOLS))
})

describe('toolsel index and select with dense and hybrid retrieval', () => {
  it('indexes with --retriever hybrid and selects with --retriever hybrid --json', async () => {
    const indexDir = join(scratch, 'hashing')
    const indexed = await run(
      'index',
      toolsFile,
      '--name',
      'x',
      '--retriever',
      'hybrid',
      '--embedder',
      'hashing',
      '--dense-index',
      'flat',
      '--index-dir',
      indexDir,
    )
    expect(indexed).toMatchObject({ code: 0 })
    expect(indexed.stderr).toContain(`Imported ${SAMPLE_TOOLS.length} tools`)
    const manifest = JSON.parse(await readFile(join(indexDir, 'x', 'manifest.json'), 'utf8'))
    expect(manifest).toMatchObject({
      defaultRetriever: 'hybrid',
      retrievers: { dense: { embedderId: 'hashing:256', kind: 'flat' }, hybrid: {} },
    })

    const selected = await run(
      'select',
      'send an SMS text message to Bob',
      '--library',
      'x',
      '--retriever',
      'hybrid',
      '--embedder',
      'hashing',
      '--index-dir',
      indexDir,
      '--json',
    )
    expect(selected.code).toBe(0)
    const result = JSON.parse(selected.stdout)
    expect(result.components.retriever).toBe('hybrid(bm25+dense:hashing:256)')
    expect(result.tools.map((tool: { id: string }) => tool.id)).toEqual(['sms.send_sms'])

    const dense = await run(
      'select',
      'send an SMS text message to Bob',
      '--library',
      'x',
      '--retriever',
      'dense',
      '--embedder',
      'hashing',
      '--index-dir',
      indexDir,
    )
    expect(dense.stdout).toContain('Components: rule → dense:hashing:256 → learned')
  })

  it('refuses a select whose embedder differs from the index, naming both', async () => {
    const indexDir = join(scratch, 'mismatch')
    await run(
      'index',
      toolsFile,
      '--name',
      'x',
      '--retriever',
      'dense',
      '--embedder',
      'hashing',
      '--index-dir',
      indexDir,
    )
    const selected = await run(
      'select',
      'send an email',
      '--library',
      'x',
      '--embedder',
      'hashing:64',
      '--index-dir',
      indexDir,
    )
    expect(selected.code).toBe(1)
    expect(selected.stderr).toContain(
      'error [INDEX_MISMATCH]: Index "x" was built with embedder hashing:256 (256 dims); the config asks for hashing:64 (64 dims).',
    )
    expect(selected.stderr).toContain(
      `toolsel index ${toolsFile} --name x --retriever dense --embedder hashing:64`,
    )
  })

  it('tells how to rebuild a BM25-only index asked for hybrid or a dense:<embedder> part, keeping its parts', async () => {
    const indexDir = join(scratch, 'parts')
    expect((await run('index', toolsFile, '--name', 'p', '--index-dir', indexDir)).code).toBe(0)
    // Before: "--retriever hybrid" / "--retriever dense": the latter built the configured
    // embedder's part, not the one asked for, and made it the library's default (other answers
    // for every request naming no retriever).
    for (const retriever of ['hybrid', 'dense:hashing:64']) {
      const refused = await run(
        'select',
        'send an email',
        ...['--library', 'p', '--retriever', retriever, '--index-dir', indexDir],
      )
      // UNKNOWN_COMPONENT (400 over HTTP): input refused, exit 2.
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(
        `Library "p" has no "${retriever}" retriever (available: bm25). Rebuild it with: toolsel index <file> --name p --retriever bm25,${retriever}.`,
      )
    }
    const rebuilt = await run(
      'index',
      toolsFile,
      '--name',
      'p',
      '--retriever',
      'bm25,dense:hashing:64',
      '--dense-index',
      'flat',
      '--index-dir',
      indexDir,
    )
    expect(rebuilt.code, rebuilt.stderr).toBe(0)
    const manifest = JSON.parse(await readFile(join(indexDir, 'p', 'manifest.json'), 'utf8')) as {
      defaultRetriever: string
      retrievers: Record<string, unknown>
    }
    expect(manifest.defaultRetriever).toBe('bm25')
    expect(Object.keys(manifest.retrievers).sort()).toEqual(['bm25', 'dense:hashing:64'])
    const selected = await run(
      'select',
      'send an email',
      '--library',
      'p',
      '--retriever',
      'dense:hashing:64',
      '--index-dir',
      indexDir,
      '--json',
    )
    expect(selected.code, selected.stderr).toBe(0)
  })

  it('indexes a tool file in memory with what --retriever needs', async () => {
    const selected = await run(
      'select',
      'what is the weather forecast for Paris',
      '--library',
      toolsFile,
      '--retriever',
      'dense',
      '--embedder',
      'hashing',
      '--json',
    )
    expect(selected.code).toBe(0)
    expect(JSON.parse(selected.stdout).components.retriever).toBe('dense:hashing:256')
  })

  it('warns that --device cuda does not apply to a CPU-only embedder', async () => {
    const indexed = await run(
      'index',
      toolsFile,
      '--name',
      'x',
      '--retriever',
      'dense',
      '--embedder',
      'hashing',
      '--device',
      'cuda',
      '--index-dir',
      join(scratch, 'cuda'),
    )
    expect(indexed.code).toBe(0)
    expect(indexed.stderr).toContain('retrieve.dense.device "cuda" is ignored')
  })

  it.skipIf(TINY_MISSING !== undefined)(
    'passes --device cuda to an onnx:<dir> embedder, which falls back to cpu with a warning',
    async () => {
      const indexed = await run(
        'index',
        toolsFile,
        '--name',
        'x',
        '--retriever',
        'dense',
        '--embedder',
        `onnx:${TINY}`,
        '--device',
        'cuda',
        '--index-dir',
        join(scratch, 'onnx-cuda'),
      )
      expect(indexed.code).toBe(0)
      // A machine with a working CUDA provider has nothing to fall back from.
      if (!indexed.stderr.includes('"device":"cuda"')) {
        expect(indexed.stderr).toContain('falling back to CPU')
      }
    },
  )

  it('refuses an unknown --retriever and --dense-index with the config path', async () => {
    const bad = await run(
      'index',
      toolsFile,
      '--retriever',
      'splade',
      '--index-dir',
      join(scratch, 'bad'),
    )
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(
      'Invalid config value at "retrieve.build" (from command-line flag)',
    )
    const kind = await run(
      'index',
      toolsFile,
      '--dense-index',
      'ivf',
      '--index-dir',
      join(scratch, 'bad'),
    )
    expect(kind.stderr).toContain('"retrieve.dense.index"')
  })

  it('documents the dense flags in --help', async () => {
    const index = await run('index', '--help')
    for (const flag of ['--retriever', '--embedder', '--dense-index', '--device']) {
      expect(index.stdout).toContain(flag)
    }
    const select = await run('select', '--help')
    for (const flag of ['--retriever', '--embedder', '--device', '--index-dir']) {
      expect(select.stdout).toContain(flag)
    }
  })

  // The offline acceptance path with the real default embedder (use-lite ships in node_modules).
  it('indexes and selects with the default use-lite embedder, offline', async () => {
    const indexDir = join(scratch, 'use-lite')
    const indexed = await run(
      'index',
      toolsFile,
      '--name',
      'x',
      '--retriever',
      'hybrid',
      '--index-dir',
      indexDir,
    )
    expect(indexed.code).toBe(0)
    const selected = await run(
      'select',
      'text Bob that I am running late',
      '--library',
      'x',
      '--retriever',
      'hybrid',
      '--index-dir',
      indexDir,
      '--json',
    )
    expect(selected.code).toBe(0)
    const result = JSON.parse(selected.stdout)
    expect(result.components.retriever).toBe('hybrid(bm25+dense:use-lite)')
    expect(result.steps[0].candidates[0].id).toBe('sms.send_sms')
  })
})
