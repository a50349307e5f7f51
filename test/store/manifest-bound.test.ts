/**
 * A saved index's manifest (and a dense part's header) is read up to a bound, from a regular file
 * only: before round 45 `readManifest` read whatever was at the name whole (a planted file of
 * GBs, or a FIFO that hangs the read). Real files: a manifest padded past MAX_MANIFEST_BYTES with
 * spaces (still valid JSON, so it loaded before), a FIFO at the name.
 */
import { execFileSync } from 'node:child_process'
import { appendFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  readVectorIndexHeader,
  VECTOR_INDEX_HEADER_FILE,
  VECTOR_INDEX_FORMAT,
} from '../../src/retrieve/dense/vector-index.ts'
import { readManifest } from '../../src/store/index-store.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import {
  MANIFEST_FILE,
  MAX_MANIFEST_BYTES,
  readManifestTextSync,
} from '../../src/store/manifest.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const config = defaultConfig()
let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-manifest-bound-'))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

async function savedIndex(): Promise<string> {
  const indexed = await buildIndexedLibrary(new ToolLibrary('bound', SAMPLE_TOOLS), config)
  return saveIndexedLibrary(join(root, 'indexes'), indexed)
}

describe('a saved index read from disk', () => {
  it('refuses a manifest larger than MAX_MANIFEST_BYTES unread (INDEX_CORRUPT)', async () => {
    const dir = await savedIndex()
    const manifest = join(dir, MANIFEST_FILE)
    expect((await readFile(manifest)).length).toBeLessThan(16 * 1024)
    expect((await readManifest(dir)).library).toBe('bound')
    // Spaces after the JSON: still a valid manifest, which loaded before the bound.
    await appendFile(manifest, ' '.repeat(MAX_MANIFEST_BYTES))
    await expect(readManifest(dir)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: `The manifest at ${manifest} is not read: it is larger than ${MAX_MANIFEST_BYTES} bytes (one is a few KB). Rebuild the index with: toolsel index <file> --name <library>.`,
    })
    await expect(loadIndexedLibrary(dir, config)).rejects.toMatchObject({ code: 'INDEX_CORRUPT' })
    expect(readManifestTextSync(dir)).toBeUndefined()
  })

  it.skipIf(process.platform === 'win32')(
    'refuses a FIFO at the manifest name without waiting for a writer',
    async () => {
      const dir = await savedIndex()
      const manifest = join(dir, MANIFEST_FILE)
      await rename(manifest, `${manifest}.saved`)
      execFileSync('mkfifo', [manifest])
      await expect(readManifest(dir)).rejects.toMatchObject({
        code: 'INDEX_CORRUPT',
        message: expect.stringContaining('it is not a regular file'),
      })
      expect(readManifestTextSync(dir)).toBeUndefined()
    },
  )

  it("refuses a dense part's header larger than its bound", async () => {
    const dir = join(root, 'dense')
    await mkdir(dir)
    const header = {
      format: VECTOR_INDEX_FORMAT,
      kind: 'flat',
      dimensions: 4,
      count: 0,
      embedderId: 'x',
      params: {},
    }
    await writeFile(join(dir, VECTOR_INDEX_HEADER_FILE), JSON.stringify(header))
    await expect(readVectorIndexHeader(dir)).resolves.toMatchObject({ kind: 'flat' })
    await appendFile(join(dir, VECTOR_INDEX_HEADER_FILE), ' '.repeat(64 * 1024))
    await expect(readVectorIndexHeader(dir)).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining('larger than 65536 bytes'),
    })
  })
})
