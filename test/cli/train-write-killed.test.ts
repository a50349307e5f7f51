/**
 * `toolsel train --out <file>` killed (SIGKILL) between writing `<file>.<pid>.<start>@<host>.tmp`
 * and renaming it left that file for good: the next write of `<file>` removes it, and says so,
 * never a live writer's. The writers stop themselves there with the test-only
 * `TOOLSEL_TEST_STOP_IN_FILE_WRITE=1` (SIGSTOP once the temporary file is written).
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEMO_LIBRARY_DIR } from '../../src/store/library-lifecycle.ts'
import { exited, stoppedWriter } from '../helpers/process-wait.ts'
import { ROOT } from '../helpers/start-serve.ts'

const CLI = join(ROOT, 'bin/toolsel.mjs')
const EXAMPLES = join(ROOT, 'test/fixtures/learn/demo-usage-examples.jsonl')

const train = (out: string) => [
  CLI,
  'train',
  '--examples',
  EXAMPLES,
  '--library',
  DEMO_LIBRARY_DIR,
  '--seed',
  '7',
  '--out',
  out,
]

const stoppedTrainWriter = (out: string) =>
  stoppedWriter(train(out), {
    cwd: ROOT,
    env: { TOOLSEL_TEST_STOP_IN_FILE_WRITE: '1' },
    timeoutMs: 60_000,
  })

describe.skipIf(process.platform !== 'linux')('toolsel train --out killed mid-write', () => {
  it('leaves <file>.<pid>.<start>@<host>.tmp that the next write of the file removes, never a live writer’s', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-train-killed-'))
    const out = join(dir, 'model.json')
    const [killed, live] = await Promise.all([stoppedTrainWriter(out), stoppedTrainWriter(out)])
    try {
      const temporaries = (await readdir(dir)).sort()
      const killedTemp = temporaries.find((entry) => entry.startsWith(`model.json.${killed.pid}.`))
      const liveTemp = temporaries.find((entry) => entry.startsWith(`model.json.${live.pid}.`))
      expect(killedTemp).toMatch(/^model\.json\.\d+\.\d+@[0-9a-f]{8}\.tmp$/)
      expect(liveTemp).toMatch(/^model\.json\.\d+\.\d+@[0-9a-f]{8}\.tmp$/)
      killed.kill('SIGKILL')
      await exited(killed)

      const next = spawnSync(process.execPath, train(out), {
        cwd: ROOT,
        env: { PATH: process.env.PATH },
        encoding: 'utf8',
      })
      expect(next.status, next.stderr).toBe(0)
      expect(next.stderr).toContain(
        `Removed ${join(dir, killedTemp!)}: left half-written by a process that is gone`,
      )
      expect((await readdir(dir)).sort()).toEqual([liveTemp, 'model.json'].sort())

      // The live writer, let go on, finishes whole.
      live.kill('SIGCONT')
      expect(await exited(live)).toBe(0)
      expect(await readdir(dir)).toEqual(['model.json'])
      expect(JSON.parse(readFileSync(out, 'utf8')).dataCard.seed).toBe(7)
    } finally {
      for (const child of [killed, live]) if (child.exitCode === null) child.kill('SIGKILL')
    }
  }, 120_000)
})
