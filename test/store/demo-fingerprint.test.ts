import { execFileSync } from 'node:child_process'
import { constants, openSync, closeSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  BUILD_ENTRY_MODULES,
  demoFingerprint,
  demoFingerprintCache,
  moduleClosure,
  moduleClosureHash,
} from '../../src/store/demo-fingerprint.ts'
import { importAsLibrary } from '../../src/store/library-lifecycle.ts'
import { busyMs } from '../helpers/busy-time.ts'

// Round 44 (hard41): what a file in the demo's directory can do to the fingerprint that a start
// (and `serve --workers N`'s primary) takes before anything else.
describe('demoFingerprint', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolsel-demo-fp-'))
    await writeFile(join(dir, 'a.json'), '{"tools":[{"name":"a"}]}')
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('fails at once, unread, for a link to /dev/zero (was read whole: GBs, minutes)', async () => {
    await symlink('/dev/zero', join(dir, 'zero.json'))
    // Busy time, not wall time: a loaded machine's waits are not the work (helpers/busy-time.ts);
    // reading /dev/zero is CPU time (system), so the read it was is over the bound.
    const busy = await busyMs(() =>
      expect(demoFingerprint(dir)).rejects.toThrow(/not a regular file/),
    )
    expect(busy).toBeLessThan(5000)
  }, 60_000)

  it('fails for a link to a FIFO without hanging on its open', async () => {
    const fifo = join(dir, 'pipe')
    execFileSync('mkfifo', [fifo])
    await symlink(fifo, join(dir, 'pipe.json'))
    try {
      await expect(demoFingerprint(dir)).rejects.toThrow(/not a regular file/)
    } finally {
      // A reader still blocked in its open (the code before the fix) is let go.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
      } catch {
        // ENXIO: nobody reads it.
      }
    }
  }, 10_000)

  it('fails for a file past maxFileBytes, as the import refuses it', async () => {
    await writeFile(join(dir, 'big.json'), 'x'.repeat(1000))
    await expect(demoFingerprint(dir, 999)).rejects.toThrow(/larger than 999 bytes/)
    await expect(demoFingerprint(dir, 1000)).resolves.toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('changes with a file of the same size and mtime, one added, removed, renamed or linked', async () => {
    const base = await demoFingerprint(dir)
    expect(await demoFingerprint(dir)).toBe(base)
    const file = join(dir, 'a.json')
    const { mtime } = await stat(file)
    await writeFile(file, '{"tools":[{"name":"b"}]}')
    await utimes(file, mtime, mtime)
    const sameSize = await demoFingerprint(dir)
    expect(sameSize).not.toBe(base)
    await writeFile(join(dir, 'b.yaml'), '')
    const added = await demoFingerprint(dir)
    expect(added).not.toBe(sameSize)
    await rm(join(dir, 'b.yaml'))
    expect(await demoFingerprint(dir)).toBe(sameSize)
    const target = join(dir, 'target.txt')
    await writeFile(target, '{"tools":[]}')
    await symlink(target, join(dir, 'c.json'))
    const linked = await demoFingerprint(dir)
    expect(linked).not.toBe(sameSize)
    await writeFile(target, '{"tools":[{"name":"c"}]}')
    const retargeted = await demoFingerprint(dir)
    expect(retargeted).not.toBe(linked)
    // Files the import leaves alone are left alone here too.
    await writeFile(join(dir, '.hidden.json'), 'x')
    await writeFile(join(dir, 'notes.md'), 'x')
    expect(await demoFingerprint(dir)).toBe(retargeted)
  })
})

// Round 46 (qa17): the code's part cost 30-120 ms at every cold start; cached by the identities
// (inode, size, mtime, ctime…) of everything it read.
describe("demoFingerprint's cache", () => {
  let dir: string
  let cacheDir: string
  const cache = () => [{ file: join(cacheDir, 'fingerprints.json'), shared: false }]
  /** Replaces the cached fingerprint of every entry: what a start that hashes nothing returns. */
  const plant = async (value: string) => {
    const file = cache()[0]!.file
    const json = JSON.parse(await readFile(file, 'utf8'))
    for (const entry of json.entries) entry.fingerprint = value
    await writeFile(file, JSON.stringify(json), { mode: 0o644 })
  }
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolsel-demo-fp-cache-'))
    cacheDir = await mkdtemp(join(tmpdir(), 'toolsel-demo-fp-cache-dir-'))
    await writeFile(join(dir, 'a.json'), '{"tools":[{"name":"a"}]}')
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
    await rm(cacheDir, { recursive: true, force: true })
  })

  it('answers from the cache while nothing it read changed; a file rewritten (same size and mtime), added or removed is hashed again', async () => {
    // Files written within the racy margin (2 s) of their reading are never cached.
    await demoFingerprint(dir, undefined, cache())
    await expect(stat(cache()[0]!.file)).rejects.toThrow(/ENOENT/)
    await new Promise((done) => setTimeout(done, 2100))
    const base = await demoFingerprint(dir)
    expect(await demoFingerprint(dir, undefined, cache())).toBe(base)
    await plant('sha256:cached')
    expect(await demoFingerprint(dir, undefined, cache())).toBe('sha256:cached')
    // Another maxFileBytes is another key.
    expect(await demoFingerprint(dir, 10_000, cache())).toBe(base)
    const file = join(dir, 'a.json')
    const { mtime } = await stat(file)
    await writeFile(file, '{"tools":[{"name":"b"}]}')
    await utimes(file, mtime, mtime)
    const rewritten = await demoFingerprint(dir, undefined, cache())
    expect(rewritten).not.toBe(base)
    expect(rewritten).toBe(await demoFingerprint(dir))
    await writeFile(join(dir, 'b.json'), '{"tools":[]}')
    const added = await demoFingerprint(dir, undefined, cache())
    expect(added).toBe(await demoFingerprint(dir))
    expect(added).not.toBe(rewritten)
    await rm(join(dir, 'b.json'))
    expect(await demoFingerprint(dir, undefined, cache())).toBe(rewritten)
  }, 20_000)

  it('a cache file that is no JSON, or not of this layout, is ignored', async () => {
    const base = await demoFingerprint(dir)
    for (const text of ['{"version":1,"entr', '[]', '{"version":1,"entries":[null,{"key":1}]}']) {
      await writeFile(cache()[0]!.file, text, { mode: 0o644 })
      expect(await demoFingerprint(dir, undefined, cache())).toBe(base)
    }
  })

  it('an entry of this key that is not of the layout is a miss, computed and cached again (was: rejected, at every start)', async () => {
    await new Promise((done) => setTimeout(done, 2100))
    const base = await demoFingerprint(dir, undefined, cache())
    const file = cache()[0]!.file
    const json = JSON.parse(await readFile(file, 'utf8'))
    for (const entry of json.entries) entry.read = [5]
    await writeFile(file, JSON.stringify(json), { mode: 0o644 })
    expect(await demoFingerprint(dir, undefined, cache())).toBe(base)
    const again = JSON.parse(await readFile(file, 'utf8'))
    expect(again.entries).toHaveLength(1)
    expect(again.entries[0].read.length).toBeGreaterThan(1)
    expect(again.entries[0].read.every((item: unknown) => Array.isArray(item))).toBe(true)
  }, 20_000)

  it("is kept next to the packages, in node_modules/.cache/toolsel/, else in the user's temp one", () => {
    const [installed, shared] = demoFingerprintCache()
    expect(installed!.file).toMatch(
      /[\\/]node_modules[\\/]\.cache[\\/]toolsel[\\/]demo-fingerprint\.v1\.json$/,
    )
    expect(shared).toMatchObject({ shared: true })
  })
})

describe("the demo's import", () => {
  it('refuses a link to a FIFO among its files, not hanging in its open (hard41)', async () => {
    // Any checkout's src/library/demo/servers is the demo (isDemoSource).
    const root = await mkdtemp(join(tmpdir(), 'toolsel-demo-import-'))
    const dir = join(root, 'src/library/demo/servers')
    await mkdir(dir, { recursive: true })
    await writeFile(
      join(dir, 'a.json'),
      JSON.stringify({ tools: [{ name: 'a', inputSchema: { type: 'object' } }] }),
    )
    const fifo = join(root, 'pipe')
    execFileSync('mkfifo', [fifo])
    await symlink(fifo, join(dir, 'b.json'))
    try {
      await expect(importAsLibrary({ path: dir }, 'demo')).rejects.toThrow(/not a regular file/)
    } finally {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
      } catch {
        // ENXIO: nobody reads it.
      }
      await rm(root, { recursive: true, force: true })
    }
  }, 10_000)
})

// Round 45 (qa16): until then the fingerprint's code was `library/` only, so a change of the
// tokenizer, the BM25 build, the store or an npm package left the saved demo "current".
describe("the fingerprint's code: what the demo's import, build and save import", () => {
  let root: string
  const write = async (path: string, text: string) => {
    await mkdir(join(root, path, '..'), { recursive: true })
    await writeFile(join(root, path), text)
  }
  const lock = (stemmer: string, helper: string) =>
    JSON.stringify({
      packages: {
        'node_modules/stemmer': { version: stemmer, dependencies: { helper: '^1' } },
        'node_modules/helper': { version: '1.0.0' },
        'node_modules/stemmer/node_modules/helper': { version: helper },
        'node_modules/unused': { version: '1.0.0' },
      },
    })
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'toolsel-demo-code-'))
    await write(
      'src/library/importers/import-tools-from-path.ts',
      "import type { Tool } from '../tool.ts'\nimport { parse } from 'yaml'\n",
    )
    await write('src/library/tool.ts', 'export type Tool = {}\n')
    await write('src/library/demo/servers/tool.ts', 'not code the build runs\n')
    await write(
      'src/store/build-index.ts',
      "export * from './kinds/bm25.ts'\nconst worker = siblingModule('build-worker', import.meta.url)\n",
    )
    await write('src/store/build-worker.ts', '// worker\n')
    await write(
      'src/store/kinds/bm25.ts',
      "import {\n  tokenize,\n} from '../../retrieve/tokenize.ts'\nconst words = new URL('./stop-words.txt', import.meta.url)\n",
    )
    await write('src/store/kinds/stop-words.txt', 'a the\n')
    await write('src/retrieve/tokenize.ts', "const stem = require('stemmer')\n")
    await write('src/server/unrelated.ts', "import { x } from 'unused'\n")
    await write('node_modules/.package-lock.json', lock('2.0.1', '1.0.0'))
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  const closure = async () => {
    const { files, packages } = await moduleClosure(join(root, 'src'), BUILD_ENTRY_MODULES)
    return {
      files: [...files.keys()].map((path) => relative(join(root, 'src'), path)).sort(),
      packages,
    }
  }

  it('follows imports, re-exports, requires, URLs and worker modules; leaves out the demo and the rest', async () => {
    expect(await closure()).toEqual({
      files: [
        'library/importers/import-tools-from-path.ts',
        'library/tool.ts',
        'retrieve/tokenize.ts',
        'store/build-index.ts',
        'store/build-worker.ts',
        'store/kinds/bm25.ts',
        'store/kinds/stop-words.txt',
      ],
      packages: [
        'node_modules/stemmer/node_modules/helper@1.0.0',
        'node_modules/stemmer@2.0.1',
        'yaml@missing',
      ],
    })
  })

  it('changes with a module the build imports or a package it uses (nested ones too), not with others', async () => {
    const hash = () => moduleClosureHash(join(root, 'src'), BUILD_ENTRY_MODULES)
    const base = await hash()
    await write('src/server/unrelated.ts', '// edited\n')
    await write('src/library/demo/servers/tool.ts', 'edited\n')
    expect(await hash()).toBe(base)
    await write('src/retrieve/tokenize.ts', "const stem = require('stemmer') // edited\n")
    const tokenizer = await hash()
    expect(tokenizer).not.toBe(base)
    await write('node_modules/.package-lock.json', lock('2.0.2', '1.0.0'))
    const stemmer = await hash()
    expect(stemmer).not.toBe(tokenizer)
    await write('node_modules/.package-lock.json', lock('2.0.2', '1.0.1'))
    expect(await hash()).not.toBe(stemmer)
  })

  it('fails when a package record cannot be read (was: read as missing, the same however it changed)', async () => {
    const hash = () => moduleClosureHash(join(root, 'src'), BUILD_ENTRY_MODULES)
    await rm(join(root, 'node_modules/.package-lock.json'))
    await mkdir(join(root, 'node_modules/.package-lock.json'))
    await expect(hash()).rejects.toThrow(/EISDIR/)
    await rm(join(root, 'node_modules/.package-lock.json'), { recursive: true })
    await mkdir(join(root, 'node_modules/stemmer/package.json'), { recursive: true })
    await expect(hash()).rejects.toThrow(/EISDIR/)
    // A lockfile cut short is no lockfile: the packages' own records are read.
    await rm(join(root, 'node_modules/stemmer/package.json'), { recursive: true })
    await write('node_modules/.package-lock.json', '{"packages":')
    expect((await closure()).packages).toEqual(['stemmer@missing', 'yaml@missing'])
  })

  it('reads a package.json where npm left no lockfile, and the compiled .js of a dist/ tree', async () => {
    await rm(join(root, 'node_modules/.package-lock.json'))
    await write('node_modules/stemmer/package.json', '{"version":"3.0.0"}')
    expect((await closure()).packages).toEqual(['stemmer@3.0.0', 'yaml@missing'])
    const dist = join(root, 'dist')
    await mkdir(join(dist, 'store'), { recursive: true })
    await writeFile(join(dist, 'store/build-index.js'), "import './other.ts'\n")
    await writeFile(join(dist, 'store/other.js'), '')
    const { files } = await moduleClosure(dist, ['store/build-index'])
    expect([...files.keys()].map((path) => relative(dist, path))).toEqual([
      'store/build-index.js',
      'store/other.js',
    ])
  })

  it("this checkout's: the tokenizer, the BM25 build, the store and their npm packages", async () => {
    const src = fileURLToPath(new URL('../../src', import.meta.url))
    const { files, packages } = await moduleClosure(src, BUILD_ENTRY_MODULES)
    const paths = [...files.keys()].map((path) => relative(src, path))
    expect(paths).toEqual(
      expect.arrayContaining([
        'retrieve/bm25/tokenize.ts',
        'retrieve/bm25/bm25-postings.ts',
        'store/kinds/bm25-kind.ts',
        'store/manifest.ts',
        'store/index-store.ts',
        'library/importers/import-tools-from-path.ts',
      ]),
    )
    expect(paths.filter((path) => path.startsWith('library/demo/'))).toEqual([])
    const names = packages.map((record) => record.split('@')[0])
    expect(names).toEqual(
      expect.arrayContaining([
        'node_modules/wink-porter2-stemmer',
        'node_modules/wink-bm25-text-search',
        'node_modules/yaml',
      ]),
    )
  })
})
