/**
 * A `toolsel snapshot restore` stopped between its renames is undone whole by the next start on
 * the index directory, through the restore's journal:
 *
 * - killed (SIGKILL) after two of three libraries are renamed in: a running `toolsel serve`
 *   (its index watch) and one started afterwards serve all three as before the restore, and
 *   nothing of the restore is left; with no server running, the next start undoes it, also
 *   when the library renamed in is its default library (loaded before the others);
 * - a rename failing part-way whose undo fails too (a regular file where a directory must be
 *   renamed back: ENOTDIR, which root gets too): the error names what is left where and that the
 *   journal is kept; a server started on it serves what is on disk and logs the same; once the
 *   file is gone the next start undoes the restore whole; a running index watch tries the stuck
 *   undo again on a backoff, not at every poll, at once when the obstacle goes, and says so.
 *
 * The restoring process stops itself at the point under test with the test-only
 * `TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES=<n>` (SIGSTOP after the n-th library is renamed in).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { watch } from 'node:fs'
import { readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { buildIndexedLibrary } from '../../src/store/build-index.ts'
import { saveIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { indexDirWarnings } from '../../src/store/index-dir-claims.ts'
import { undoBackoff } from '../../src/store/restore-journal.ts'
import { IndexDirPoller } from '../../src/service/index-dir-watch.ts'
import { parcelAnswers } from '../helpers/parcel-answers.ts'
import { ROOT } from '../helpers/start-serve.ts'
import { servePerTest } from '../helpers/serve-per-test.ts'
import { toolselHere } from '../helpers/toolsel-here.ts'

const { workDir, serve } = servePerTest('toolsel-restore-killed-')

const LIBRARIES = ['alpha', 'bravo', 'charlie']

/** Saves every library in `edition` into `indexDir` (select-tools' pick tells the edition). */
async function saveEdition(indexDir: string, edition: string): Promise<void> {
  const config = parseConfig({ log: { level: 'silent' } })
  for (const name of LIBRARIES) {
    const tools = [
      {
        id: `${name}.${edition}_lookup`,
        name: `${edition}_lookup`,
        namespace: name,
        description: `Look up a parcel (${edition} edition).`,
        parameters: { type: 'object', properties: {} },
      },
      {
        id: `${name}.${edition}_cancel`,
        name: `${edition}_cancel`,
        namespace: name,
        description: 'Cancel a booking.',
        parameters: { type: 'object', properties: {} },
      },
    ]
    const indexed = await buildIndexedLibrary(new ToolLibrary(name, tools), config)
    await saveIndexedLibrary(indexDir, indexed)
  }
}

/** The first tool select-tools picks for a parcel in each library. */
const answers = (url: string) => parcelAnswers(url, LIBRARIES)

const edition = (name: string) =>
  Object.fromEntries(LIBRARIES.map((library) => [library, `${name}_lookup`]))

const manifest = (indexDir: string, name: string) =>
  readFile(join(indexDir, name, 'manifest.json'), 'utf8')

/** The restore's work left in `indexDir`: work directories, locks, journals. */
const leftovers = async (indexDir: string) =>
  (await readdir(indexDir)).filter((entry) => /^\.(tmp|old|lock|toolsel-restore)/.test(entry))

/** `toolsel snapshot restore` as a process that stops itself after `renames` renames. */
function restoreStoppingAfter(snapshot: string, indexDir: string, renames: number) {
  let stderr = ''
  const child: ChildProcess = spawn(
    process.execPath,
    ['bin/toolsel.mjs', 'snapshot', 'restore', snapshot, '--index-dir', indexDir],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        TOOLSEL_LIBRARY: '',
        TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES: String(renames),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  return { child, exited, stderr: () => stderr }
}

/** Resolves once process `pid` is stopped (`T` in /proc/<pid>/stat); 60 s at most. */
async function stopped(pid: number): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => '')
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return
    if (stat === '' || Date.now() > deadline)
      throw new Error(`the restore (pid ${pid}) did not stop`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A restore of `snapshot` into `indexDir` whose rename of bravo fails after alpha is renamed in,
 * and whose undo then fails too: regular files where bravo's previous index must be moved aside
 * and where alpha's restored one must be moved back out. Its process has exited, its journal
 * (`journalName`) is left.
 */
async function stuckRestore(indexDir: string, snapshot: string) {
  const restore = restoreStoppingAfter(snapshot, indexDir, 1)
  await stopped(restore.child.pid!)
  const journalName = (await readdir(indexDir)).find((entry) =>
    /^\.toolsel-restore\+[^.]+\.\d+-[0-9a-f]{12}$/.test(entry),
  )!
  const journal = JSON.parse(await readFile(join(indexDir, journalName), 'utf8')) as {
    libraries: Array<{ name: string; staged: string; old: string }>
  }
  const [alpha, bravo] = journal.libraries
  const alphaBlock = join(indexDir, alpha.staged)
  await writeFile(join(indexDir, bravo.old), 'in the way\n')
  await writeFile(alphaBlock, 'in the way\n')
  restore.child.kill('SIGCONT')
  const { code } = await restore.exited
  return { journalName, alpha, alphaBlock, code, stderr: restore.stderr() }
}

/** An index directory of the second edition and a snapshot of the first. */
async function prepare() {
  const work = await workDir()
  const indexDir = join(work, 'indexes')
  await saveEdition(indexDir, 'first')
  const snapshot = join(work, 'snapshot')
  await toolselHere(indexDir, 'snapshot', snapshot)
  await saveEdition(indexDir, 'second')
  const first = await Promise.all(
    LIBRARIES.map((name) => manifest(join(snapshot, 'indexes'), name)),
  )
  const second = await Promise.all(LIBRARIES.map((name) => manifest(indexDir, name)))
  return { indexDir, snapshot, first, second }
}

describe.skipIf(process.platform !== 'linux')('toolsel snapshot restore stopped mid-way', () => {
  it('killed (SIGKILL) between its renames: a running server and the next start undo it whole', async () => {
    const { indexDir, snapshot, first, second } = await prepare()
    const env = { TOOLSEL_INDEX_WATCH_MS: '200' }
    let server = await serve([], { indexDir, env })
    expect(await answers(server.url)).toEqual(edition('second'))
    const restore = restoreStoppingAfter(snapshot, indexDir, 2)
    await stopped(restore.child.pid!)
    // Two of three renamed in, the journal naming all three on the disk.
    expect(await manifest(indexDir, 'alpha')).toBe(first[0])
    expect(await manifest(indexDir, 'bravo')).toBe(first[1])
    expect(await manifest(indexDir, 'charlie')).toBe(second[2])
    expect(
      (await leftovers(indexDir)).filter((entry) => entry.startsWith('.toolsel-restore+')),
    ).toHaveLength(1)
    restore.child.kill('SIGKILL')
    expect((await restore.exited).signal).toBe('SIGKILL')

    // The running server's index watch undoes it (its journal's process is gone) and serves the
    // previous indexes again.
    const until = async (what: string, done: () => Promise<boolean>) => {
      const deadline = Date.now() + 30_000
      while (!(await done())) {
        expect(Date.now(), what).toBeLessThan(deadline)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
    await until(
      'the running server did not undo the restore',
      async () => (await leftovers(indexDir)).length === 0,
    )
    expect(await Promise.all(LIBRARIES.map((name) => manifest(indexDir, name)))).toEqual(second)
    await until(
      'the running server did not serve the previous indexes again',
      async () => JSON.stringify(await answers(server.url)) === JSON.stringify(edition('second')),
    )
    // And a start after it serves the same.
    server = await serve([], { indexDir })
    expect(await answers(server.url)).toEqual(edition('second'))
  }, 180_000)

  it('killed between its renames with no server running: the next start undoes it whole', async () => {
    const { indexDir, snapshot, second } = await prepare()
    const restore = restoreStoppingAfter(snapshot, indexDir, 1)
    await stopped(restore.child.pid!)
    restore.child.kill('SIGKILL')
    expect((await restore.exited).signal).toBe('SIGKILL')
    const server = await serve([], { indexDir })
    expect(await answers(server.url)).toEqual(edition('second'))
    expect(await Promise.all(LIBRARIES.map((name) => manifest(indexDir, name)))).toEqual(second)
    expect(await leftovers(indexDir)).toEqual([])
  }, 180_000)

  it('killed after renaming in the default library: the next start serves that library as before too', async () => {
    // The default library is loaded first: it must be loaded after the undo, not before.
    const { indexDir, snapshot, first, second } = await prepare()
    const restore = restoreStoppingAfter(snapshot, indexDir, 1)
    await stopped(restore.child.pid!)
    expect(await manifest(indexDir, 'alpha')).toBe(first[0])
    restore.child.kill('SIGKILL')
    expect((await restore.exited).signal).toBe('SIGKILL')
    const server = await serve(['--library', 'alpha'], {
      indexDir,
      env: { TOOLSEL_INDEX_WATCH_MS: '0' },
    })
    expect(await answers(server.url)).toEqual(edition('second'))
    expect(await Promise.all(LIBRARIES.map((name) => manifest(indexDir, name)))).toEqual(second)
    expect(await leftovers(indexDir)).toEqual([])
  }, 180_000)

  it('an undo that fails says what is left where; the next start after the obstacle undoes it', async () => {
    const { indexDir, snapshot, first, second } = await prepare()
    const { journalName, alpha, alphaBlock, code, stderr } = await stuckRestore(indexDir, snapshot)
    expect(code).not.toBe(0)
    expect(stderr).toContain(
      `Library "bravo" could not be renamed into place in ${indexDir} (ENOTDIR), and undoing the libraries renamed in before it failed too.`,
    )
    expect(stderr).toContain(
      `Undoing the restore failed at library "alpha" (ENOTDIR); left as it is: "alpha": the snapshot's index is in place, its previous index is in ${alpha.old}.`,
    )
    expect(stderr).toContain(`The restore journal ${journalName} is kept`)
    expect(stderr).not.toContain('Nothing was restored')
    // As the error says: alpha restored, its previous index aside; bravo and charlie as they were.
    expect(await manifest(indexDir, 'alpha')).toBe(first[0])
    expect(await readFile(join(indexDir, alpha.old, 'manifest.json'), 'utf8')).toBe(second[0])
    expect(await manifest(indexDir, 'bravo')).toBe(second[1])
    expect(await manifest(indexDir, 'charlie')).toBe(second[2])

    // A server started meanwhile serves what is on disk, its undo failing the same way (logged).
    let server = await serve([], { indexDir })
    expect(await answers(server.url)).toEqual({ ...edition('second'), alpha: 'first_lookup' })
    expect(server.logs()).toContain(
      `a snapshot restore was left half-done (its process is gone). Undoing the restore failed at library "alpha" (ENOTDIR)`,
    )
    expect(await leftovers(indexDir)).toContain(journalName)

    // The obstacle gone, the next start undoes the restore whole.
    await rm(alphaBlock)
    server = await serve([], { indexDir })
    expect(await answers(server.url)).toEqual(edition('second'))
    expect(await Promise.all(LIBRARIES.map((name) => manifest(indexDir, name)))).toEqual(second)
    expect(await leftovers(indexDir)).toEqual([])
  }, 180_000)

  it('a stuck undo is tried again on a backoff, not at every index-watch poll, and its success is reported', async () => {
    const { indexDir, snapshot, second } = await prepare()
    const { journalName, alphaBlock } = await stuckRestore(indexDir, snapshot)
    const reported: string[] = []
    const report = indexDirWarnings.report
    const backoff = { ...undoBackoff }
    indexDirWarnings.report = (message) => void reported.push(message)
    // Each try takes alpha's lock: a file made and removed in the index directory.
    let lockTakes = 0
    const watcher = watch(indexDir, (event, file) => {
      if (event === 'rename' && file === '.lock-alpha') lockTakes++
    })
    const poller = new IndexDirPoller(indexDir, 10, async () => undefined)
    /** Polls every 10 ms for `ms`, and on until `more` polls were made (a loaded machine polls slower). */
    const pollFor = async (ms: number, more = 0) => {
      const end = Date.now() + ms
      const enough = poller.counts.polls + more
      while (Date.now() < end || poller.counts.polls < enough) {
        await poller.poll()
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
    try {
      // 100, 200, 400, then every 400 ms: about 6 tries in 2 s (was: one a poll, about 100).
      // At least 41 polls, however long they take (a loaded machine polls slower): the tries
      // are bounded by the time taken, 9 in 2 s as before; one a poll would be 41 or more.
      Object.assign(undoBackoff, { firstMs: 100, maxMs: 400 })
      await poller.baseline()
      const started = Date.now()
      await pollFor(2000, 41)
      const tries = lockTakes / 2 // made, then removed
      const polls = poller.counts.polls
      expect(polls).toBeGreaterThan(40)
      expect(tries).toBeGreaterThanOrEqual(2)
      expect(tries, `${polls} polls`).toBeLessThanOrEqual(
        4 + Math.ceil((Date.now() - started) / 400),
      )
      expect(reported.filter((line) => line.includes('left half-done'))).toHaveLength(1)

      // A minute's backoff now, but the obstacle gone: the next poll tries, and says it worked.
      Object.assign(undoBackoff, { firstMs: 60_000, maxMs: 60_000 })
      await pollFor(300)
      await rm(alphaBlock)
      await pollFor(500)
      expect(await leftovers(indexDir)).toEqual([])
      expect(await Promise.all(LIBRARIES.map((name) => manifest(indexDir, name)))).toEqual(second)
      expect(reported.at(-1)).toMatch(
        /the snapshot restore left half-done is undone now \(its undo failed \d+ times before\)/,
      )
      expect(reported.join('\n')).not.toContain(journalName + ' is gone')
    } finally {
      watcher.close()
      poller.stop()
      indexDirWarnings.report = report
      Object.assign(undoBackoff, backoff)
    }
  }, 180_000)
})
