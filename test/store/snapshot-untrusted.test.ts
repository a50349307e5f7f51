/**
 * `toolsel snapshot restore` of a snapshot directory from elsewhere (downloaded, restored from a
 * backup someone else made): names that leave the snapshot, links and devices inside it, file
 * names in an index manifest that leave the index directory, an endless snapshot.json. Each is
 * refused before anything is written; run as child processes (a /dev/zero read is unbounded).
 */
import {
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  truncate,
  unlink,
  writeFile,
} from 'node:fs/promises'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/main.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { runToolselChild } from '../helpers/run-toolsel-child.ts'

let root: string
let snapshot: string

const quiet = { stdout: () => undefined, stderr: () => undefined, env: {} }

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-untrusted-'))
  const tools = join(root, 'tools.json')
  await writeFile(tools, JSON.stringify(SAMPLE_TOOLS))
  const indexDir = join(root, 'indexes')
  for (const name of ['one', 'two']) {
    expect(await main(['index', tools, '--name', name, '--index-dir', indexDir], quiet)).toBe(0)
  }
  snapshot = join(root, 'snapshot')
  expect(await main(['snapshot', snapshot, '--index-dir', indexDir], quiet)).toBe(0)
}, 60_000)

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/**
 * How long a restore may run before it is taken for hung (SIGKILL: `run.signal` set, and the
 * test fails). A hang (reading /dev/zero, opening a FIFO without a writer) is forever, so the
 * bound only has to be well past a slow start: 20 s was passed by a restore that worked, on a
 * machine at load 15-19 (round 37). A passing run never waits for it. Each test's timeout is
 * its restores times this, and 30 s.
 */
const RUN_BOUND_MS = 90_000

/** A copy of the good snapshot, changed by `damage`, restored into a new index directory. */
async function restoreDamaged(case_: string, damage: (dir: string) => Promise<void>) {
  const dir = join(root, case_, 'snapshot')
  await cp(snapshot, dir, { recursive: true })
  await damage(dir)
  const indexDir = join(root, case_, 'restored')
  const run = await runToolselChild(['snapshot', 'restore', dir, '--index-dir', indexDir], {
    timeoutMs: RUN_BOUND_MS,
  })
  const written = await readdir(indexDir).catch(() => [])
  return { ...run, written: written.filter((entry) => !entry.startsWith('.')) }
}

async function editJson(file: string, edit: (value: Record<string, any>) => void) {
  const value = JSON.parse(await readFile(file, 'utf8'))
  edit(value)
  await writeFile(file, JSON.stringify(value))
}

describe('snapshot restore of an untrusted snapshot', () => {
  it('a library name that leaves the snapshot (../, /abs, control characters) or is listed twice', async () => {
    // An index outside the snapshot that "../../../outside/two" reaches.
    await cp(join(snapshot, 'indexes', 'two'), join(root, 'names', 'outside', 'two'), {
      recursive: true,
    })
    const cases: Array<[string, (libraries: Array<{ name: string }>) => void, RegExp]> = [
      [
        'up',
        (l) => (l[1].name = '../../../outside/two'),
        /lists library "\.\.\/\.\.\/\.\.\/outside\/two", which is not a library name/,
      ],
      [
        'abs',
        (l) => (l[1].name = join(root, 'names', 'outside', 'two')),
        /which is not a library name/,
      ],
      ['ctrl', (l) => (l[1].name = 'two\u001b[2J'), /lists library "two\\u001b\[2J"/],
      ['twice', (l) => (l[1].name = 'one'), /lists library "one" twice/],
    ]
    for (const [name, edit, message] of cases) {
      const run = await restoreDamaged(join('names', name), (dir) =>
        editJson(join(dir, 'snapshot.json'), (value) => edit(value.libraries)),
      )
      expect(run.stderr, name).toMatch(message)
      expect(run.stderr).toContain('nothing was restored')
      expect(run.code).toBe(1)
      expect(run.written).toEqual([])
    }
  }, 390_000)

  it('an index listed under one name that holds another library', async () => {
    const run = await restoreDamaged('renamed', async (dir) => {
      await rename(join(dir, 'indexes', 'two'), join(dir, 'indexes', 'three'))
      await editJson(join(dir, 'snapshot.json'), (value) => (value.libraries[1].name = 'three'))
    })
    // It would be saved as "two", a library the snapshot does not list.
    expect(run.stderr).toMatch(/index "three" holds library "two"/)
    expect(run.code).toBe(1)
    expect(run.written).toEqual([])
  }, 120_000)

  it('symbolic links inside an index (to a file outside, to /dev/zero, the directory itself)', async () => {
    const outsideTools = join(root, 'links-outside-tools.jsonl')
    await cp(join(snapshot, 'indexes', 'one', 'tools.jsonl'), outsideTools)
    const cases: Array<[string, (index: string) => Promise<void>, RegExp]> = [
      [
        'tools-outside',
        async (index) => {
          await unlink(join(index, 'tools.jsonl'))
          await symlink(outsideTools, join(index, 'tools.jsonl'))
        },
        /indexes\/one\/tools\.jsonl is a symbolic link/,
      ],
      [
        'bm25-dev-zero',
        async (index) => {
          await unlink(join(index, 'bm25.bin'))
          await symlink('/dev/zero', join(index, 'bm25.bin'))
        },
        /indexes\/one\/bm25\.bin is a symbolic link/,
      ],
      [
        'directory',
        async (index) => {
          const elsewhere = join(root, 'links-elsewhere-one')
          await cp(index, elsewhere, { recursive: true })
          await rm(index, { recursive: true })
          await symlink(elsewhere, index)
        },
        /indexes\/one is a symbolic link/,
      ],
    ]
    for (const [name, damage, message] of cases) {
      const run = await restoreDamaged(join('links', name), (dir) =>
        damage(join(dir, 'indexes', 'one')),
      )
      expect(run.signal, name).toBeNull()
      expect(run.stderr, name).toMatch(message)
      expect(run.code).toBe(1)
      expect(run.written).toEqual([])
    }
  }, 300_000)

  it('a file name in an index manifest that leaves the index directory is neither read nor written', async () => {
    const run = await restoreDamaged('file-names', async (dir) => {
      // What the save would write: <restored>/.tmp-one…/../../escaped/bm25.bin.
      await mkdir(join(root, 'file-names', 'escaped'), { recursive: true })
      await mkdir(join(dir, 'escaped'))
      await cp(join(dir, 'indexes', 'one', 'bm25.bin'), join(dir, 'escaped', 'bm25.bin'))
      await editJson(join(dir, 'indexes', 'one', 'manifest.json'), (value) => {
        value.retrievers.bm25.file = '../../escaped/bm25.bin'
      })
    })
    expect(run.stderr).toMatch(
      /manifest\.json is invalid \(a file name inside the index directory\)/,
    )
    expect(run.code).toBe(1)
    expect(run.written).toEqual([])
    expect(await readdir(join(root, 'file-names', 'escaped'))).toEqual([])
  }, 120_000)

  it('a snapshot.json that is a device (/dev/zero) or a FIFO is refused unread; one larger than 16 MiB by its size', async () => {
    // Before: /dev/zero read up to 16 MiB; a FIFO without a writer hung the restore (the open).
    for (const [name, damage] of [
      ['endless', (file: string) => symlink('/dev/zero', file)],
      ['fifo', async (file: string) => execFileSync('mkfifo', [file])],
    ] as const) {
      const run = await restoreDamaged(name, async (dir) => {
        await unlink(join(dir, 'snapshot.json'))
        await damage(join(dir, 'snapshot.json'))
      })
      expect(run.signal).toBeNull()
      expect(run.stderr).toMatch(
        /snapshot\.json is not a valid snapshot manifest: it is not a regular file \(a device, pipe, socket or directory\); nothing was restored/,
      )
      expect(run.code).toBe(1)
      expect(run.written).toEqual([])
    }
    const run = await restoreDamaged('large', async (dir) => {
      await truncate(join(dir, 'snapshot.json'), 16 * 1024 * 1024 + 1)
    })
    expect(run.stderr).toMatch(
      /snapshot\.json is not a valid snapshot manifest: it is larger than 16777216 bytes/,
    )
    expect(run.code).toBe(1)
    expect(run.written).toEqual([])
  }, 300_000)

  it('the untouched snapshot still restores', async () => {
    const run = await restoreDamaged('good', async () => undefined)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.written.sort()).toEqual(['one', 'two'])
  }, 120_000)
})
