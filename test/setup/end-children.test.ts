/**
 * test/setup/end-children.ts with a real vitest run: a run killed by SIGTERM (a CI job's timeout,
 * `kill`) leaves no process its tests started and no `toolsel-tests-*` directory. Before it, the
 * child (and the test process, kept alive by it) lived on with the directory.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { ROOT } from '../helpers/start-serve.ts'

const pids: number[] = []
let dir: string | undefined

afterAll(async () => {
  // What a failure left behind.
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL')
  if (dir) await rm(dir, { recursive: true, force: true })
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits until `done` holds, `ms` at most; whether it did. */
async function within(ms: number, done: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

it('a vitest run killed by SIGTERM ends the processes its tests started and removes its directory', async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-end-children-'))
  const out = join(dir, 'said.json')
  let logs = ''
  const vitest = spawn(
    process.execPath,
    [
      join(ROOT, 'node_modules/vitest/vitest.mjs'),
      'run',
      '--config',
      'test/fixtures/end-children/vitest.config.ts',
    ],
    {
      cwd: ROOT,
      env: { ...process.env, END_CHILDREN_OUT: out },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  vitest.stdout.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  vitest.stderr.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  const exited = new Promise((resolve) => vitest.once('exit', resolve))
  pids.push(vitest.pid!)
  // The fixture says what it started (the run's start: a few seconds, more under load).
  expect(await within(90_000, () => existsSync(out) || vitest.exitCode !== null), logs).toBe(true)
  const said = JSON.parse(await readFile(out, 'utf8')) as {
    child: number
    testProcess: number
    tmpDir: string
  }
  pids.push(said.child, said.testProcess)
  expect(said.tmpDir).toMatch(/toolsel-tests-/)
  expect(alive(said.child)).toBe(true)

  vitest.kill('SIGTERM')
  await exited
  // Each is gone at once on the SIGTERM it is sent; 20 s leaves room for a loaded machine.
  expect(await within(20_000, () => !alive(said.child)), 'the child process').toBe(true)
  expect(await within(20_000, () => !alive(said.testProcess)), 'the test process').toBe(true)
  expect(await within(20_000, () => !existsSync(said.tmpDir)), said.tmpDir).toBe(true)
}, 150_000)
