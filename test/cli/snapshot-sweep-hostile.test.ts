/**
 * The sweep of a killed snapshot writer's temporary directory (`sweepSnapshotTemporaries`) meets
 * names other people made when `toolsel snapshot <dir>` writes into a shared directory (`/tmp`):
 * anyone who can write there can make a directory of the sweep's shape naming a dead pid and
 * this host. It must not remove one another user owns (its owner could swap a subdirectory for a
 * symlink while `rm` walks it), and the `Removed <path>` line must not print the escape sequences
 * a name may hold (they would clear or rewrite the user's terminal line) as they are.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmod, chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { buildIndexedLibrary } from '../../src/store/build-index.ts'
import { saveIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { ROOT } from '../helpers/start-serve.ts'

const CLI = join(ROOT, 'bin/toolsel.mjs')
/** A pid above Linux's largest (4194304): no process has it. */
const DEAD_PID = 4_999_999
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8)
const isRoot = process.getuid?.() === 0

let work: string | undefined
afterEach(async () => {
  if (work) await rm(work, { recursive: true, force: true })
  work = undefined
})

async function indexDirWithLibrary(parent: string): Promise<string> {
  const indexDir = join(parent, 'indexes')
  const tools = [
    {
      id: 'alpha.lookup',
      name: 'lookup',
      namespace: 'alpha',
      description: 'Look up a parcel.',
      parameters: { type: 'object', properties: {} },
    },
  ]
  const config = parseConfig({ log: { level: 'silent' } })
  await saveIndexedLibrary(
    indexDir,
    await buildIndexedLibrary(new ToolLibrary('alpha', tools), config),
  )
  return indexDir
}

describe.skipIf(process.platform !== 'linux')('toolsel snapshot into a shared directory', () => {
  it('removes only its own user’s dead temporaries and prints their names escaped', async () => {
    work = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-hostile-'))
    const indexDir = await indexDirWithLibrary(work)
    const shared = join(work, 'shared')
    await mkdir(shared)
    await chmod(shared, 0o1777)

    // Of this user, a dead writer's by its name, holding escape sequences: removed, shown escaped.
    const escaped = `.snapshot-tmp-\u001b[2K\u001b[1Gall fine\u001b[8m+${DEAD_PID}@${HOST}-bbbbbbbbbbbb`
    await mkdir(join(shared, escaped))
    // Another user's (nobody, 65534), of the same shape: left alone.
    const others = `.snapshot-tmp-x+${DEAD_PID}@${HOST}-aaaaaaaaaaaa`
    if (isRoot) {
      await mkdir(join(shared, others, 'sub'), { recursive: true })
      await writeFile(join(shared, others, 'sub', 'f'), 'theirs')
      for (const path of ['', 'sub', 'sub/f']) await chown(join(shared, others, path), 65534, 65534)
    }

    const run = spawnSync(
      process.execPath,
      [CLI, 'snapshot', join(shared, 'snap'), '--index-dir', indexDir],
      { env: { PATH: process.env.PATH }, encoding: 'utf8' },
    )
    expect(run.status, run.stderr).toBe(0)
    expect(run.stderr).not.toMatch(/\u001b/)
    expect(run.stderr).toContain(
      `Removed ${join(shared, '.snapshot-tmp-\\x1b[2K\\x1b[1Gall fine\\x1b[8m')}+${DEAD_PID}@${HOST}-bbbbbbbbbbbb: a snapshot left half-written by a process that is gone`,
    )
    expect(run.stderr).not.toContain(others)
    expect((await readdir(shared)).sort()).toEqual(isRoot ? [others, 'snap'] : ['snap'])
    if (isRoot) expect(await readdir(join(shared, others, 'sub'))).toEqual(['f'])
  }, 60_000)
})
