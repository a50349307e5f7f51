/**
 * The manifest's `files` record (store/index-files-record.ts) and the check of an unchanged
 * upload that uses it: a saved index of BM25 and a dense HNSW part records every file's size and
 * sha256; `savedIndexProblem` of the served save tells from `lstat` alone that it is whole, and
 * falls back to a load (as before round 33) when a file was cut, written again, or the manifest
 * has no record.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
  savedIndexProblem,
} from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

let work: string | undefined
afterEach(async () => {
  if (work) await rm(work, { recursive: true, force: true })
  work = undefined
})

const config = parseConfig({ retrieve: { dense: { embedder: 'hashing', index: 'hnsw' } } })

/** A hybrid (BM25 + dense HNSW) index saved and loaded as a server serves it. */
async function savedHybrid() {
  work = await mkdtemp(join(tmpdir(), 'toolsel-files-record-'))
  const indexed = await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config, {
    retriever: 'hybrid',
  })
  const dir = await saveIndexedLibrary(join(work, 'indexes'), indexed)
  const served = await loadIndexedLibrary(dir, config)
  return { dir, served }
}

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex')

describe("the manifest's files record", () => {
  it('lists every file of the index with its size and sha256', async () => {
    const { dir, served } = await savedHybrid()
    const files = served.manifest.files as {
      version: number
      entries: Record<string, { size: number; sha256: string }>
    }
    expect(files.version).toBe(1)
    const names = Object.keys(files.entries)
    expect(names).toEqual(expect.arrayContaining(['tools.jsonl', 'tools.idx', 'bm25.bin']))
    // The dense part's vectors and HNSW graph too (the part's files, whatever their names).
    expect(names.length).toBeGreaterThanOrEqual(5)
    expect(names).not.toContain('manifest.json')
    for (const [name, entry] of Object.entries(files.entries)) {
      const bytes = await readFile(join(dir, name))
      expect(entry.size, name).toBe(bytes.length)
      expect(entry.sha256, name).toBe(await sha256(join(dir, name)))
    }
  })

  it('the check of the served save reads no index file: a same-size rewrite with its old time passes', async () => {
    const { dir, served } = await savedHybrid()
    expect(await savedIndexProblem(dir, config, served.manifest)).toBeUndefined()
    // Garbage of the same length in the tools file, its time set back: the load (no served save
    // to compare with) finds it, the check of the served save does not look (lstat only).
    const tools = join(dir, 'tools.jsonl')
    const before = (await readFile(tools)).length
    const { mtime } = await stat(tools)
    await writeFile(tools, 'x'.repeat(before))
    await utimes(tools, mtime, mtime)
    expect(await savedIndexProblem(dir, config)).toBeDefined()
    expect(await savedIndexProblem(dir, config, served.manifest)).toBeUndefined()
  })

  it('a file written again since the save, or cut, is checked by a load as before', async () => {
    const { dir, served } = await savedHybrid()
    const files = Object.keys((served.manifest.files as { entries: object }).entries)
    const denseFile = files.find((name) => !name.startsWith('tools.') && name !== 'bm25.bin')!
    // Written again with the same bytes (a later time): the load finds it whole.
    const path = join(dir, denseFile)
    const bytes = await readFile(path)
    await new Promise((resolve) => setTimeout(resolve, 20))
    await writeFile(path, bytes)
    expect(await savedIndexProblem(dir, config, served.manifest)).toBeUndefined()
    // Cut: the load fails on it.
    await truncate(join(dir, 'tools.jsonl'), 10)
    expect(await savedIndexProblem(dir, config, served.manifest)).toMatch(/sample/)
  })

  it('a manifest without the record (saved before round 33) is checked by a load', async () => {
    const { dir, served } = await savedHybrid()
    const manifestPath = join(dir, 'manifest.json')
    const { files: _files, ...older } = JSON.parse(await readFile(manifestPath, 'utf8'))
    await writeFile(manifestPath, `${JSON.stringify(older, null, 2)}\n`)
    expect(await savedIndexProblem(dir, config, served.manifest)).toBeUndefined()
    // Now the same-size garbage is found: the load reads the file.
    const tools = join(dir, 'tools.jsonl')
    await writeFile(tools, 'x'.repeat((await readFile(tools)).length))
    expect(await savedIndexProblem(dir, config, served.manifest)).toBeDefined()
  })
})
