/**
 * Ctrl-C (SIGINT) in the middle of `toolsel index` and `toolsel snapshot <dir>`: the work
 * directory being written is removed and the process ends by the signal (a shell's exit status
 * 130), nothing else changed. Before, both left it (`.tmp-<name>+<pid>…` in the index directory,
 * `.snapshot-tmp-<name>+<pid>…` beside <dir>) until the next writer's sweep.
 *
 * The writers stop themselves mid-write (test-only TOOLSEL_TEST_STOP_IN_INDEX_WRITE /
 * …_SNAPSHOT_WRITE: SIGSTOP); the SIGINT sent while stopped is handled once they go on (SIGCONT),
 * as a Ctrl-C at that point would be.
 */
import { spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { stoppedWriter } from '../helpers/process-wait.ts'
import { ROOT } from '../helpers/start-serve.ts'

const CLI = join(ROOT, 'bin/toolsel.mjs')

const tools = (description: string) =>
  JSON.stringify([
    {
      type: 'function',
      function: { name: 'send_sms', description, parameters: { type: 'object', properties: {} } },
    },
  ])

/** SIGINT to a stopped writer, then SIGCONT: how it ended. */
async function interrupt(child: ChildProcess) {
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  child.kill('SIGINT')
  child.kill('SIGCONT')
  return ended
}

/** A work directory with a tool file indexed once (`toolsel index`, to the end) in `indexes`. */
async function indexedOnce(prefix: string) {
  const work = await mkdtemp(join(tmpdir(), prefix))
  const indexDir = join(work, 'indexes')
  const file = join(work, 'tools.json')
  await writeFile(file, tools('Send a text message'))
  const indexed = spawnSync(process.execPath, [CLI, 'index', file, '--index-dir', indexDir], {
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
  })
  expect(indexed.status, indexed.stderr).toBe(0)
  return { work, indexDir, file }
}

describe.skipIf(process.platform !== 'linux')('Ctrl-C mid-write', () => {
  it('toolsel index: removes its work directory, the saved index stays as it was', async () => {
    const { indexDir, file } = await indexedOnce('toolsel-index-sigint-')
    const manifest = await readFile(join(indexDir, 'tools', 'manifest.json'), 'utf8')

    await writeFile(file, tools('Send an SMS text message to a phone number'))
    const writer = await stoppedWriter([CLI, 'index', file, '--index-dir', indexDir], {
      env: { TOOLSEL_TEST_STOP_IN_INDEX_WRITE: '1' },
    })
    const entries = await readdir(indexDir)
    expect(entries.filter((entry) => entry.startsWith('.tmp-tools+'))).toHaveLength(1)
    expect(await interrupt(writer)).toEqual({ code: null, signal: 'SIGINT' })
    // Was: [".tmp-tools+<pid>…", ".toolsel-writer-protocol", "tools"].
    expect((await readdir(indexDir)).sort()).toEqual(['.toolsel-writer-protocol', 'tools'])
    expect(await readFile(join(indexDir, 'tools', 'manifest.json'), 'utf8')).toBe(manifest)
  }, 90_000)

  it('toolsel snapshot <dir>: removes its temporary directory, no <dir>', async () => {
    const { work, indexDir } = await indexedOnce('toolsel-snapshot-sigint-')
    const parent = join(work, 'snapshots')
    const writer = await stoppedWriter(
      [CLI, 'snapshot', join(parent, 'snap'), '--index-dir', indexDir],
      { env: { TOOLSEL_TEST_STOP_IN_SNAPSHOT_WRITE: '1' } },
    )
    expect((await readdir(parent)).filter((e) => e.startsWith('.snapshot-tmp-'))).toHaveLength(1)
    expect(await interrupt(writer)).toEqual({ code: null, signal: 'SIGINT' })
    // Was: [".snapshot-tmp-snap+<pid>…"].
    expect(await readdir(parent)).toEqual([])
  }, 90_000)
})
