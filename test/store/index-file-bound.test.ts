/**
 * Every file of a saved index is read with a bound, from a regular file only
 * (store/index-file-read.ts): before round 46 the tools file, its line index, the BM25 files, the
 * usage examples and a dense part's ids, vectors and graph were read whole with readFile (or
 * opened blocking), so a FIFO at a name hung the load and a file far larger than the save wrote
 * (or /dev/zero behind a link) was read into memory. Real files: FIFOs made with mkfifo, files
 * padded past their recorded size, a link to /dev/zero, an index whose manifest has no record.
 */
import { execFileSync } from 'node:child_process'
import { appendFile, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { readStoredExamples } from '../../src/store/examples-part.ts'
import {
  INDEX_FILE_SLACK_BYTES,
  UNRECORDED_INDEX_FILE_MAX_BYTES,
} from '../../src/store/index-file-read.ts'
import { readIndexTools } from '../../src/store/index-store.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { MANIFEST_FILE } from '../../src/store/manifest.ts'
import { SAMPLE_EXAMPLES, SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const EXAMPLES = SAMPLE_EXAMPLES

let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-index-file-bound-'))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const denseConfig = (index: 'flat' | 'hnsw') =>
  parseConfig({ retrieve: { dense: { embedder: 'hashing', index } } })

/** A saved index of the sample tools: BM25 and usage examples, or hybrid with a dense part. */
async function savedIndex(config = defaultConfig()): Promise<string> {
  const dense = config.retrieve.dense.embedder === 'hashing'
  const indexed = await buildIndexedLibrary(new ToolLibrary('bound', SAMPLE_TOOLS), config, {
    examples: ExampleSet.of(EXAMPLES),
    ...(dense && { retriever: 'hybrid' }),
  })
  return saveIndexedLibrary(join(root, 'indexes'), indexed)
}

/** Puts a FIFO (no writer) where `file` was. */
async function fifoAt(file: string): Promise<void> {
  await rename(file, `${file}.saved`)
  execFileSync('mkfifo', [file])
}

/** The size the manifest records for `name`. */
async function recordedSize(dir: string, name: string): Promise<number> {
  const manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8'))
  return manifest.files.entries[name].size
}

const fifos = it.skipIf(process.platform === 'win32')

describe('a saved index whose files are not what the save wrote', () => {
  it('loads as saved (the bound takes what the save wrote)', async () => {
    const dir = await savedIndex()
    const loaded = await loadIndexedLibrary(dir, defaultConfig())
    expect(loaded.library.size).toBe(SAMPLE_TOOLS.length)
    expect(loaded.examples?.set.size).toBe(EXAMPLES.length)
  })

  for (const name of [
    'tools.jsonl',
    'tools.idx',
    'bm25.bin',
    'bm25-examples.bin',
    'examples.jsonl',
  ])
    fifos(`refuses a FIFO at ${name} without waiting for a writer (INDEX_CORRUPT)`, async () => {
      const dir = await savedIndex()
      await fifoAt(join(dir, name))
      await expect(loadIndexedLibrary(dir, defaultConfig())).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringMatching(
          new RegExp(`${name.replace('.', '\\.')}.* not read: it is not a regular file`),
        ),
      })
    })

  it('refuses a tools file far larger than the manifest records, unread (it loaded before)', async () => {
    const dir = await savedIndex()
    const tools = join(dir, 'tools.jsonl')
    const recorded = await recordedSize(dir, 'tools.jsonl')
    // Blank lines after the tools: the same tools and hash, which a load took before (the size
    // differs from the line index's, so the file was read whole and every tool hashed).
    await appendFile(tools, '\n'.repeat(INDEX_FILE_SLACK_BYTES + 1))
    await expect(loadIndexedLibrary(dir, defaultConfig())).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining(
        `its tools file ${tools} is not read: it is larger than the ${recorded} bytes the manifest records for it (read up to ${recorded + INDEX_FILE_SLACK_BYTES})`,
      ),
      details: { file: tools },
    })
    await expect(readIndexTools(dir)).rejects.toMatchObject({ code: 'INDEX_CORRUPT' })
  })

  it('refuses a BM25 file and usage examples padded past their bound', async () => {
    const dir = await savedIndex()
    const bm25 = join(dir, 'bm25.bin')
    await appendFile(bm25, Buffer.alloc(INDEX_FILE_SLACK_BYTES + 1))
    await expect(loadIndexedLibrary(dir, defaultConfig())).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining(`The BM25 index file ${bm25} is not read: it is larger`),
      details: { file: bm25 },
    })
    const again = await savedIndex()
    const examples = join(again, 'examples.jsonl')
    await appendFile(examples, '\n'.repeat(INDEX_FILE_SLACK_BYTES + 1))
    await expect(loadIndexedLibrary(again, defaultConfig())).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('its usage examples (examples.jsonl) are not read'),
    })
    await expect(readStoredExamples(again)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining(`The usage examples file ${examples} is not read`),
    })
  })

  it('refuses /dev/zero behind a link (a device, not a regular file), unread', async () => {
    const dir = await savedIndex()
    const tools = join(dir, 'tools.jsonl')
    await rm(tools)
    await symlink('/dev/zero', tools)
    await expect(loadIndexedLibrary(dir, defaultConfig())).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('is not read: it is not a regular file'),
    })
  })

  fifos(
    'bounds an index saved without a record of its files by UNRECORDED_INDEX_FILE_MAX_BYTES',
    async () => {
      const dir = await savedIndex()
      const path = join(dir, MANIFEST_FILE)
      const manifest = JSON.parse(await readFile(path, 'utf8'))
      delete manifest.files
      await writeFile(path, JSON.stringify(manifest))
      // Padding within the 2 GiB of an unrecorded file still loads (its own checks pass).
      await appendFile(join(dir, 'bm25.bin'), Buffer.alloc(INDEX_FILE_SLACK_BYTES + 1))
      expect((await loadIndexedLibrary(dir, defaultConfig())).library.size).toBe(
        SAMPLE_TOOLS.length,
      )
      await fifoAt(join(dir, 'bm25.bin'))
      await expect(loadIndexedLibrary(dir, defaultConfig())).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringContaining('not read: it is not a regular file'),
      })
      expect(UNRECORDED_INDEX_FILE_MAX_BYTES).toBe(2 ** 31)
    },
  )

  for (const kind of ['flat', 'hnsw'] as const) {
    const vectors = kind === 'flat' ? 'dense.f32' : 'dense.hnsw'
    fifos(`refuses a FIFO at a ${kind} dense part's ${vectors} and dense-ids.json`, async () => {
      const config = denseConfig(kind)
      const dir = await savedIndex(config)
      expect((await loadIndexedLibrary(dir, config)).retrievers.has('dense')).toBe(true)
      await fifoAt(join(dir, vectors))
      await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringContaining(`${vectors}" is not read: it is not a regular file`),
      })
      await rename(join(dir, `${vectors}.saved`), join(dir, vectors))
      await fifoAt(join(dir, 'dense-ids.json'))
      await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringContaining('dense-ids.json" are not read: it is not a regular file'),
      })
    })

    it(`refuses a ${kind} dense part's vectors padded past their bound`, async () => {
      const config = denseConfig(kind)
      const dir = await savedIndex(config)
      await appendFile(join(dir, vectors), Buffer.alloc(INDEX_FILE_SLACK_BYTES + 1))
      await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringContaining(`${vectors}" is not read`),
      })
    })
  }

  fifos(
    'refuses to write over a FIFO at the writer-protocol marker, without waiting on it',
    async () => {
      const dir = await savedIndex()
      const indexDir = join(dir, '..')
      await fifoAt(join(indexDir, '.toolsel-writer-protocol'))
      const indexed = await buildIndexedLibrary(
        new ToolLibrary('bound', SAMPLE_TOOLS),
        defaultConfig(),
      )
      await expect(saveIndexedLibrary(indexDir, indexed)).rejects.toMatchObject({
        code: 'INDEX_WRITE_FAILED',
        message: expect.stringContaining('it is not a regular file'),
      })
    },
  )
})
