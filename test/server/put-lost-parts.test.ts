/**
 * An upload (or `toolsel index`) builds the retriever parts it asks for (`?retriever=`,
 * `--retriever`, default retrieve.build), not those of the index it replaces: a library built
 * hybrid and uploaded again without `?retriever=` comes back BM25 only. The answer's `warnings`,
 * the log and the CLI say which parts were lost and give the list that builds them again; that
 * list does. Real HTTP, real index files, the GloVe and hashing embedders.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/main.ts'
import { listenApp } from '../helpers/listen-app.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp, readJson } from './test-service.ts'

const PARTS = 'bm25,dense:static:glove-100d,hybrid:bm25+dense:static:glove-100d'
let app: Awaited<ReturnType<typeof createTestApp>>
let url: string
let close: () => Promise<void>

beforeAll(async () => {
  app = await createTestApp()
  ;({ url, close } = await listenApp(app.app.fetch))
}, 120_000)

afterAll(async () => {
  await close()
  await rm(app.indexDir, { recursive: true, force: true })
})

const put = async (query: string, tools: unknown = SAMPLE_TOOLS) => {
  const response = await fetch(`${url}/v1/libraries/mixed${query}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(tools),
  })
  return { status: response.status, body: await readJson(response) }
}

describe('a rebuild without the parts of the index it replaces', () => {
  it('PUT: warns naming the lost parts and the ?retriever= list that keeps them; that list does', async () => {
    const first = await put(`?retriever=${encodeURIComponent(PARTS)}`)
    expect(first.status).toBe(201)
    expect(first.body.warnings.join('\n')).not.toContain('lost')

    const again = await put('', SAMPLE_TOOLS.slice(0, 3))
    expect(again.status).toBe(200)
    expect(again.body.retrievers).toEqual(['bm25'])
    const lost = again.body.warnings.find((warning: string) => warning.includes('lost'))
    expect(lost).toBe(
      `Library "mixed" lost the retriever parts dense:static:glove-100d, hybrid:bm25+dense:static:glove-100d: this build made bm25 (the parts asked for, default retrieve.build), not the parts of the index it replaced. Requests naming a lost part are refused. To build them again: ?retriever=${PARTS}.`,
    )
    expect(app.logger.lines.join('\n')).toContain('Library "mixed" lost the retriever parts')

    const back = await put(`?retriever=${encodeURIComponent(PARTS)}`, SAMPLE_TOOLS.slice(0, 3))
    expect(back.status).toBe(200)
    expect(back.body.retrievers).toEqual(PARTS.split(','))
    expect(back.body.warnings.join('\n')).not.toContain('lost')
  }, 120_000)

  it('toolsel index: the default retriever changed too, and the --retriever list keeps them', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolsel-lost-parts-'))
    try {
      const file = join(root, 'tools.json')
      await writeFile(file, JSON.stringify(SAMPLE_TOOLS))
      const index = async (...args: string[]) => {
        let stderr = ''
        const code = await main(['index', file, '--name', 'lib', '--index-dir', root, ...args], {
          stdout: () => {},
          stderr: (text) => (stderr += text),
          env: { TOOLSEL_EMBEDDER: 'hashing' },
        })
        expect(code, stderr).toBe(0)
        return stderr
      }
      expect(await index('--retriever', 'hybrid')).not.toContain('Warning')
      const rebuilt = await index('--retriever', 'bm25')
      expect(rebuilt).toContain(
        'Warning: Library "lib" lost the retriever parts dense, hybrid: this build made bm25 (the parts asked for, default retrieve.build), not the parts of the index it replaced; its default retriever is now bm25, was hybrid. Requests naming a lost part are refused. To build them again: --retriever hybrid,bm25,dense.',
      )
      const kept = await index('--retriever', 'hybrid,bm25,dense')
      expect(kept).not.toContain('Warning')
      const manifest = JSON.parse(await readFile(join(root, 'lib', 'manifest.json'), 'utf8'))
      expect(Object.keys(manifest.retrievers)).toEqual(['bm25', 'dense', 'hybrid'])
      expect(manifest.defaultRetriever).toBe('hybrid')
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  }, 120_000)
})
