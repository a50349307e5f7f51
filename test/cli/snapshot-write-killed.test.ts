/**
 * A `toolsel snapshot <dir>` killed (SIGKILL) while it writes leaves its temporary directory
 * (`.snapshot-tmp-<name>+<pid>.<start>@<host>-<hex>`) next to `<dir>`, a full copy of the indexes
 * written so far: the next snapshot written beside it removes it, and says so, while it leaves
 * alone the one of a writer that is still at work (stopped here; it then finishes whole), one
 * written on another host (a shared disk) and names of any other shape.
 *
 * The writers stop themselves mid-write with the test-only `TOOLSEL_TEST_STOP_IN_SNAPSHOT_WRITE=1`
 * (SIGSTOP once the first library is in the temporary directory). Before round 38 the temporary
 * name carried no pid and nothing removed it: the killed writer's directory stayed for good.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { buildIndexedLibrary } from '../../src/store/build-index.ts'
import { saveIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { readSnapshotManifest } from '../../src/store/snapshot.ts'
import { exited, stoppedWriter } from '../helpers/process-wait.ts'
import { ROOT, startServe } from '../helpers/start-serve.ts'

const CLI = join(ROOT, 'bin/toolsel.mjs')

async function saveLibraries(indexDir: string): Promise<void> {
  const config = parseConfig({ log: { level: 'silent' } })
  for (const name of ['alpha', 'bravo']) {
    const tools = [
      {
        id: `${name}.lookup`,
        name: 'lookup',
        namespace: name,
        description: `Look up a ${name} parcel.`,
        parameters: { type: 'object', properties: {} },
      },
    ]
    await saveIndexedLibrary(
      indexDir,
      await buildIndexedLibrary(new ToolLibrary(name, tools), config),
    )
  }
}

/** A snapshot writer started to stop itself mid-write, once it has (its temporary dir written). */
const stoppedSnapshotWriter = (dir: string, indexDir: string) =>
  stoppedWriter([CLI, 'snapshot', dir, '--index-dir', indexDir], {
    env: { TOOLSEL_TEST_STOP_IN_SNAPSHOT_WRITE: '1' },
  })

const temporaries = async (parent: string) =>
  (await readdir(parent)).filter((entry) => entry.startsWith('.snapshot-tmp-')).sort()

describe.skipIf(process.platform !== 'linux')('toolsel snapshot killed mid-write', () => {
  it('leaves a temporary directory the next snapshot removes, never a live writer’s', async () => {
    const work = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-killed-'))
    const indexDir = join(work, 'indexes')
    const parent = join(work, 'snapshots')
    await saveLibraries(indexDir)

    const killed = await stoppedSnapshotWriter(join(parent, 'a'), indexDir)
    const live = await stoppedSnapshotWriter(join(parent, 'b'), indexDir)
    try {
      const [killedTemp, liveTemp] = await temporaries(parent)
      expect(killedTemp).toMatch(
        new RegExp(`^\\.snapshot-tmp-a\\+${killed.pid}\\.\\d+@[0-9a-f]{8}-`),
      )
      expect(liveTemp).toMatch(new RegExp(`^\\.snapshot-tmp-b\\+${live.pid}\\.\\d+@[0-9a-f]{8}-`))
      expect(await readdir(join(parent, killedTemp, 'indexes'))).toContain('alpha')
      killed.kill('SIGKILL')
      await exited(killed)

      // Left alone: another host's (a dead pid here says nothing of that host's processes), and
      // the pid-less names of versions before round 38.
      const ours = createHash('sha256').update(hostname()).digest('hex').slice(0, 8)
      const otherHost = ours === '00000000' ? '11111111' : '00000000'
      const foreign = [
        `.snapshot-tmp-x+${killed.pid}.1@${otherHost}-0123456789ab`,
        '.tmp-old-0123456789ab',
      ]
      for (const entry of foreign) await mkdir(join(parent, entry))

      const next = spawnSync(
        process.execPath,
        [CLI, 'snapshot', join(parent, 'c'), '--index-dir', indexDir],
        {
          env: { PATH: process.env.PATH },
          encoding: 'utf8',
        },
      )
      expect(next.status, next.stderr).toBe(0)
      expect(next.stderr).toContain(
        `Removed ${join(parent, killedTemp)}: a snapshot left half-written by a process that is gone`,
      )
      expect(next.stderr).not.toContain(liveTemp)
      expect((await readdir(parent)).sort()).toEqual([...foreign, liveTemp, 'c'].sort())

      // The live writer, let go on, finishes whole.
      live.kill('SIGCONT')
      expect(await exited(live)).toBe(0)
      const written = await readSnapshotManifest(join(parent, 'b'))
      expect(written.libraries.map((library) => library.name)).toEqual(['alpha', 'bravo'])
      expect((await readdir(parent)).sort()).toEqual([...foreign, 'b', 'c'].sort())
    } finally {
      for (const child of [killed, live]) if (child.exitCode === null) child.kill('SIGKILL')
    }
  }, 90_000)

  it('is removed by `toolsel serve` when it starts (library.snapshotDir), a live writer’s not', async () => {
    const work = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-killed-serve-'))
    const indexDir = join(work, 'indexes')
    const parent = join(work, 'snapshots')
    await saveLibraries(indexDir)
    const killed = await stoppedSnapshotWriter(join(parent, 'a'), indexDir)
    const live = await stoppedSnapshotWriter(join(parent, 'b'), indexDir)
    const [killedTemp, liveTemp] = await temporaries(parent)
    killed.kill('SIGKILL')
    await exited(killed)
    const server = await startServe([], { env: { TOOLSEL_SNAPSHOT_DIR: parent } })
    try {
      expect(server.logs()).toContain(
        `INFO Removed ${join(parent, killedTemp!)}: a snapshot left half-written by a process that is gone`,
      )
      expect(await temporaries(parent)).toEqual([liveTemp])
    } finally {
      await server.stop()
      live.kill('SIGKILL')
    }
  }, 90_000)
})
