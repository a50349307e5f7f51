/**
 * Several processes writing one index directory (`serve --workers N`): real child processes
 * save, list and load the same library at once; work directories and locks of a live process
 * are left alone, those of a dead one are recovered.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import { isToolselError } from '../../src/errors.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  buildIndexedLibrary,
  deleteIndex,
  listIndexes,
  loadIndexedLibrary,
  publishLibrary,
  recoverIndexDir,
  saveIndexedLibrary,
  syncSavedLibrary,
  type IndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import {
  startTime,
  WRITER_PROTOCOL,
  WRITER_PROTOCOL_FILE,
} from '../../src/store/index-dir-claims.ts'
import { readJournal } from '../../src/store/restore-journal.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const config = defaultConfig()
let indexDir: string
const children: ChildProcess[] = []

beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-index-processes-'))
})

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  await rm(indexDir, { recursive: true, force: true })
})

/**
 * A child process that saves library `shared` (`tools` tools of `SAMPLE_TOOLS`) `rounds` times,
 * listing and loading the index directory between its saves, as a worker does after another's
 * change. Exits 0 when every step succeeded, else prints the error and exits 1.
 */
const WRITER = `
import { defaultConfig } from './src/config/schema.ts'
import { ToolLibrary } from './src/library/tool-library.ts'
import { buildIndexedLibrary, listIndexes, loadIndexedLibrary, saveIndexedLibrary } from './src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from './test/helpers/sample-tools.ts'
const [indexDir, count, rounds] = process.argv.slice(-3)
const config = defaultConfig()
const indexed = await buildIndexedLibrary(new ToolLibrary('shared', SAMPLE_TOOLS.slice(0, Number(count))), config, { source: { path: 'child' } })
let failures = 0
for (let round = 0; round < Number(rounds); round++) {
  await saveIndexedLibrary(indexDir, indexed)
  await listIndexes(indexDir)
  // A load may meet another writer's commit half-way (a checked load fails then); never a save.
  await loadIndexedLibrary(indexDir + '/shared', config).catch(() => failures++)
}
process.stdout.write(JSON.stringify({ failures }))
`

function runWriter(count: number, rounds: number): Promise<{ code: number; out: string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      WRITER,
      indexDir,
      String(count),
      String(rounds),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  children.push(child)
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code: code ?? -1, out })))
}

/** A process that lives until killed: its pid is a live writer's. */
async function liveProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  children.push(child)
  await new Promise((resolve) => child.once('spawn', resolve))
  return child
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = await liveProcess()
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid!
}

async function saveSample(count = SAMPLE_TOOLS.length) {
  const indexed = await buildIndexedLibrary(
    new ToolLibrary('shared', SAMPLE_TOOLS.slice(0, count)),
    config,
    { source: { path: 'test' } },
  )
  return saveIndexedLibrary(indexDir, indexed)
}

describe('index directory shared by processes', () => {
  it('two processes saving, listing and loading one library at once all succeed, and one save is left whole', async () => {
    const results = await Promise.all([runWriter(3, 40), runWriter(5, 40)])
    for (const result of results) expect(result.code, result.out).toBe(0)
    const loaded = await loadIndexedLibrary(join(indexDir, 'shared'), config)
    expect([3, 5]).toContain(loaded.library.size)
    expect(loaded.library.tools).toEqual(SAMPLE_TOOLS.slice(0, loaded.library.size))
    expect(await indexDirEntries(indexDir)).toEqual(['shared'])
  }, 120_000)

  it("leaves a live process's temporary and old directories alone, and recovers a dead one's", async () => {
    await saveSample()
    const live = (await liveProcess()).pid!
    const dead = await deadPid()
    const entries = {
      liveTmp: `.tmp-shared+${live}-0123456789ab`,
      // A live writer's old index, being removed after its commit.
      liveOld: `.old-shared+${live}-0123456789ab`,
      deadTmp: `.tmp-shared+${dead}-0123456789ab`,
      legacyTmp: '.tmp-shared-ba9876543210',
    }
    for (const entry of Object.values(entries)) await mkdir(join(indexDir, entry))
    // A load of the library and a listing recover the directory first.
    await loadIndexedLibrary(join(indexDir, 'shared'), config)
    expect(await listIndexes(indexDir)).toEqual(['shared'])
    expect(await indexDirEntries(indexDir)).toEqual(
      [entries.liveOld, entries.liveTmp, 'shared'].sort(),
    )
    // A dead writer between its two renames: its old index goes back.
    await rename(join(indexDir, 'shared'), join(indexDir, `.old-shared+${dead}-0123456789ab`))
    await writeFile(join(indexDir, '.lock-shared'), `${dead}\n`)
    await recoverIndexDir(indexDir)
    expect(await indexDirEntries(indexDir)).toEqual(
      [entries.liveOld, entries.liveTmp, 'shared'].sort(),
    )
    expect((await loadIndexedLibrary(join(indexDir, 'shared'), config)).library.size).toBe(
      SAMPLE_TOOLS.length,
    )
  }, 60_000)

  it("takes over a dead process's lock, and says LIBRARY_BUSY when a live one keeps it", async () => {
    await writeFile(join(indexDir, '.lock-shared'), `${await deadPid()}\n`)
    await saveSample(2)
    expect(await indexDirEntries(indexDir)).toEqual(['shared'])
    const live = (await liveProcess()).pid!
    await writeFile(join(indexDir, '.lock-shared'), `${live}\n`)
    const indexed = await buildIndexedLibrary(new ToolLibrary('shared', SAMPLE_TOOLS), config, {
      source: { path: 'test' },
    })
    const error = await saveIndexedLibrary(indexDir, indexed, { lockTimeoutMs: 200 }).catch(
      (caught: unknown) => caught,
    )
    expect(isToolselError(error, 'LIBRARY_BUSY'), String(error)).toBe(true)
    expect((error as Error).message).toContain(`pid ${live}`)
    // Nothing changed: the saved index, and no temporary directory left.
    expect((await loadIndexedLibrary(join(indexDir, 'shared'), config)).library.size).toBe(2)
    expect(await indexDirEntries(indexDir)).toEqual(['.lock-shared', 'shared'])
    // A lock older than a commit takes: left by a crash, its pid since reused.
    const past = new Date(Date.now() - 60_000)
    await utimes(join(indexDir, '.lock-shared'), past, past)
    expect(await deleteIndex(indexDir, 'shared')).toBe(true)
    expect(await indexDirEntries(indexDir)).toEqual([])
  }, 60_000)

  it("restores a dead writer's old index whose pid another process has since (its start time differs)", async () => {
    await saveSample()
    const live = (await liveProcess()).pid!
    const started = startTime(live)
    expect(started, 'this test needs /proc/<pid>/stat').toBeDefined()
    // A live process's own work directory (its pid and start time) is left alone...
    const liveOld = `.old-other+${live}.${started}-0123456789ab`
    await mkdir(join(indexDir, liveOld))
    // ...but a writer that had its pid and died between its two renames started at another time.
    await rename(
      join(indexDir, 'shared'),
      join(indexDir, `.old-shared+${live}.${started! + 1}-0123456789ab`),
    )
    expect(await listIndexes(indexDir)).toEqual(['shared'])
    expect(await indexDirEntries(indexDir)).toEqual([liveOld, 'shared'])
    expect((await loadIndexedLibrary(join(indexDir, 'shared'), config)).library.size).toBe(
      SAMPLE_TOOLS.length,
    )
  }, 60_000)

  it('removes a stale lock that a process died breaking, and keeps one a live process is breaking', async () => {
    await saveSample()
    const live = (await liveProcess()).pid!
    const dead = await deadPid()
    const kept = `.lock-shared+${live}.${startTime(live)}-0123456789ab`
    for (const stray of [
      `.lock-shared+${dead}.12345-0123456789ab`,
      // Names before round 27 (no start time), and a live pid that started at another time.
      `.lock-shared+${dead}-0123456789ab`,
      `.lock-shared+${live}.${startTime(live)! + 1}-0123456789ab`,
      kept,
    ])
      await writeFile(join(indexDir, stray), `${dead}\n`)
    expect(await listIndexes(indexDir)).toEqual(['shared'])
    expect(await indexDirEntries(indexDir)).toEqual([kept, 'shared'])
  }, 60_000)

  it("leaves names of another version's grammar alone (a newer writer's), warning once each", async () => {
    await saveSample()
    const dead = await deadPid()
    // What a later format might name its work: more fields, other separators. A dead pid in
    // each, so that a rule that half-parses them would take them for a crashed writer's.
    const unknown = [
      `.tmp-shared+${dead}.12345.7-0123456789ab`,
      `.old-shared+${dead}.12345.7-0123456789ab`,
      `.tmp-shared~${dead}-0123456789ab`,
      `.old-shared+${dead}-0123456789abcdef`,
      `.lock-shared+${dead}.12345.7-0123456789ab`,
    ]
    for (const entry of unknown.slice(0, 4)) await mkdir(join(indexDir, entry))
    await writeFile(join(indexDir, unknown[4]!), `${dead}\n`)
    // Without the library: an .old- half-parsed would be "restored" under some name.
    await rm(join(indexDir, 'shared'), { recursive: true })
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on('warning', onWarning)
    try {
      expect(await listIndexes(indexDir)).toEqual([])
      await recoverIndexDir(indexDir)
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    expect(await indexDirEntries(indexDir)).toEqual([...unknown].sort())
    for (const entry of unknown)
      expect(warnings.filter((warning) => warning.includes(entry))).toHaveLength(1)
  }, 60_000)

  it("a dead restore's journal: a partial one is removed, one it can't read keeps its .old- directories and warns once", async () => {
    await saveSample()
    const dead = await deadPid()
    const partial = `.toolsel-restore+${dead}-0123456789ab.partial`
    await writeFile(join(indexDir, partial), '{"format":')
    await recoverIndexDir(indexDir)
    expect(await indexDirEntries(indexDir)).toEqual(['shared'])

    // A journal naming a path outside its work directories is not one this version reads: its
    // restore's .old- directory (a previous index, its library in place) stays, with a warning.
    const journal = `.toolsel-restore+${dead}-0123456789ab`
    const old = `.old-shared+${dead}-0123456789ab`
    await writeFile(
      join(indexDir, journal),
      JSON.stringify({
        format: 'toolsel-restore-journal',
        version: 1,
        libraries: [{ name: 'shared', staged: '../../x', old, dev: '1', ino: '2' }],
      }),
    )
    await mkdir(join(indexDir, old))
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on('warning', onWarning)
    try {
      expect(await listIndexes(indexDir)).toEqual(['shared'])
      await recoverIndexDir(indexDir)
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    expect(await indexDirEntries(indexDir)).toEqual([journal, old, 'shared'].sort())
    expect(warnings.filter((warning) => warning.includes(journal))).toHaveLength(1)
    expect(warnings[0]).toContain("is a restore journal this version can't read")
    // Removed by hand: the .old- directory is an abandoned one again, removed (its library is there).
    await rm(join(indexDir, journal))
    // A journal gone meanwhile (another process finished its undo) is no unreadable one.
    expect(await readJournal(join(indexDir, journal))).toBeNull()
    await recoverIndexDir(indexDir)
    expect(await indexDirEntries(indexDir)).toEqual(['shared'])
  }, 60_000)

  it('writes a writer-protocol marker, and refuses to write or recover where it names a newer one', async () => {
    await saveSample(2)
    const marker = join(indexDir, WRITER_PROTOCOL_FILE)
    expect(await readFile(marker, 'utf8')).toBe(`toolsel-writer-protocol ${WRITER_PROTOCOL}\n`)
    await writeFile(marker, `toolsel-writer-protocol ${WRITER_PROTOCOL + 1}\n`)
    const dead = await deadPid()
    const deadTmp = `.tmp-shared+${dead}-0123456789ab`
    await mkdir(join(indexDir, deadTmp))
    const refused = async (write: Promise<unknown>, says = `protocol ${WRITER_PROTOCOL + 1}`) => {
      const error = await write.catch((caught: unknown) => caught)
      expect(isToolselError(error, 'INDEX_MISMATCH'), String(error)).toBe(true)
      expect((error as Error).message).toContain(says)
    }
    await refused(saveSample())
    await refused(deleteIndex(indexDir, 'shared'))
    // The newer version's rules decide what is abandoned: nothing removed, nothing changed.
    expect(await listIndexes(indexDir)).toEqual(['shared'])
    expect(await indexDirEntries(indexDir)).toEqual([deadTmp, 'shared'])
    expect((await loadIndexedLibrary(join(indexDir, 'shared'), config)).library.size).toBe(2)
    // A marker this version can't read at all is refused too.
    await writeFile(marker, 'protocol: next\n')
    await refused(saveSample(), 'whose writer protocol this one can not read')
    // One that can't be read at all (here a directory; no read permission alike; a FIFO, not
    // waited on) says so, with its path and why, not "another protocol"; nothing changes.
    await rm(marker)
    await mkdir(marker)
    const unreadable = await saveSample().catch((caught: unknown) => caught)
    expect(isToolselError(unreadable, 'INDEX_WRITE_FAILED'), String(unreadable)).toBe(true)
    expect((unreadable as Error).message).toContain(
      `its writer-protocol marker ${marker} can't be read (it is not a regular file (a device, pipe, socket or directory))`,
    )
    expect(await indexDirEntries(indexDir)).toEqual([deadTmp, 'shared'])
  }, 60_000)

  it('a sync on an index directory that can not be written: nothing to do while the disk holds what is served, a clear INDEX_WRITE_FAILED once it changed', async (context) => {
    const slots = new Map<string, IndexedLibrary>()
    const target = {
      get: (name: string) => slots.get(name),
      set: (indexed: IndexedLibrary) => void slots.set(indexed.library.name, indexed),
      delete: (name: string) => void slots.delete(name),
    }
    const own = await buildIndexedLibrary(new ToolLibrary('shared', SAMPLE_TOOLS), config, {
      source: { path: 'test' },
    })
    const served = await publishLibrary(target, own, { indexDir })
    // Immutable (chattr +i): no entry can be made in it, as on a read-only mount. Needs
    // CAP_LINUX_IMMUTABLE (root here); skipped where it can't be set.
    const immutable = (flag: '+i' | '-i') =>
      new Promise<boolean>((resolve) =>
        spawn('chattr', [flag, indexDir])
          .on('exit', (code) => resolve(code === 0))
          .on('error', () => resolve(false)),
      )
    if (!(await immutable('+i'))) return context.skip()
    try {
      await syncSavedLibrary(target, 'shared', indexDir, config)
      expect(slots.get('shared')).toBe(served)
      await immutable('-i')
      await saveSample(2)
      await immutable('+i')
      const failed = await syncSavedLibrary(target, 'shared', indexDir, config).catch(
        (error: unknown) => error,
      )
      expect(isToolselError(failed, 'INDEX_WRITE_FAILED'), String(failed)).toBe(true)
      expect((failed as Error).message).toContain(
        `The lock ${join(indexDir, '.lock-shared')} can't be made (EPERM`,
      )
      expect((failed as Error).message).toContain('read-only, or not writable')
      expect(slots.get('shared')).toBe(served)
    } finally {
      await immutable('-i')
    }
  }, 60_000)

  it('a relayed change leaves what is saved now served, whatever order the changes come in', async () => {
    const served = new Map<string, IndexedLibrary>()
    const slots = {
      get: (name: string) => served.get(name),
      set: (indexed: IndexedLibrary) => void served.set(indexed.library.name, indexed),
      delete: (name: string) => void served.delete(name),
    }
    const own = await buildIndexedLibrary(new ToolLibrary('shared', SAMPLE_TOOLS), config, {
      source: { path: 'test' },
    })
    const published = await publishLibrary(slots, own, { indexDir })
    expect(served.get('shared')).toBe(published)
    // A relayed change of an older save, after this process's own commit: nothing to load, and
    // no lock taken (a directory where the lock file goes: a read-only index directory, or one
    // whose lock is held, can't hold one; a worker's start-up reconcile of a library served
    // from such a directory needs none while the disk holds what it loaded).
    await mkdir(join(indexDir, '.lock-shared'))
    await syncSavedLibrary(slots, 'shared', indexDir, config)
    expect(served.get('shared')).toBe(published)
    await rm(join(indexDir, '.lock-shared'), { recursive: true })
    // Another process commits a new version: it is loaded.
    const writer = await runWriter(3, 1)
    expect(writer.code, writer.out).toBe(0)
    await syncSavedLibrary(slots, 'shared', indexDir, config)
    expect(served.get('shared')!.library.size).toBe(3)
    // A manifest that can't be read fails the change, and what is served stays.
    await writeFile(join(indexDir, 'shared', 'manifest.json'), '{ not json')
    const failed = await syncSavedLibrary(slots, 'shared', indexDir, config).catch(
      (error: unknown) => error,
    )
    expect(isToolselError(failed, 'INDEX_CORRUPT'), String(failed)).toBe(true)
    expect(served.get('shared')!.library.size).toBe(3)
    // A relayed delete that arrives after a newer commit keeps the library, as saved.
    await saveSample(2)
    await syncSavedLibrary(slots, 'shared', indexDir, config)
    expect(served.get('shared')!.library.size).toBe(2)
    // Deleted on disk: dropped.
    expect(await deleteIndex(indexDir, 'shared')).toBe(true)
    await syncSavedLibrary(slots, 'shared', indexDir, config)
    expect(served.has('shared')).toBe(false)
    expect(await indexDirEntries(indexDir)).toEqual([])
  }, 60_000)
})
