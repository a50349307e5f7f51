/**
 * Vitest setup file (it runs in every test process): when vitest itself is gone (killed by
 * SIGTERM, as a CI job's timeout or `kill` does, it exits at once without stopping its test
 * processes or removing the run's temporary directory), the test process loses its IPC channel
 * to it. Then it ends what it started: SIGTERM to each of its child processes (a `toolsel serve
 * --workers N` primary stops its workers on it), waits for them (10 s at most; SIGKILL then),
 * removes the run's `toolsel-tests-*` directory (test/setup/tmp-dir.ts; kept with
 * `TOOLSEL_KEEP_TEST_TMP=1`) and ends itself by SIGTERM. Synchronously, so that nothing of the
 * test runs meanwhile, and also at 'exit' (vitest's own worker code exits at once when a message
 * to the gone vitest fails, which can come first). Before, the test process lived on as long as a
 * server it had started (forever), and after it the server, with ppid 1, and the directory stayed.
 * A run that ends normally never loses the channel early: nothing changes for it.
 * @module
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { basename } from 'node:path'

/** Set once per process: a setup file runs again for each test file the process runs. */
const INSTALLED = Symbol.for('toolsel.test.endChildren')
const WAIT_MS = 10_000
const sleeper = new Int32Array(new SharedArrayBuffer(4))

/** The pids of this process's children (Linux /proc; none elsewhere). */
function childPids(): number[] {
  try {
    return readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    )
  } catch {
    return []
  }
}

/** Whether `pid` still runs: not gone, not a zombie (ended, not reaped while this one blocks). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

function signal(pids: readonly number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name)
    } catch {
      // Gone already.
    }
  }
}

let ended = false

function endChildren(): void {
  if (ended) return
  ended = true
  const children = childPids()
  signal(children, 'SIGTERM')
  const deadline = Date.now() + WAIT_MS
  while (children.some(running) && Date.now() < deadline) Atomics.wait(sleeper, 0, 0, 50)
  signal(children.filter(running), 'SIGKILL')
  const dir = process.env.TMPDIR
  if (dir && basename(dir).startsWith('toolsel-tests-') && !process.env.TOOLSEL_KEEP_TEST_TMP)
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
}

const marks = globalThis as Record<symbol, unknown>
if (process.send && !marks[INSTALLED]) {
  marks[INSTALLED] = true
  process.once('disconnect', () => {
    endChildren()
    // vitest makes process.exit throw while a test runs.
    process.kill(process.pid, 'SIGTERM')
  })
  process.once('exit', () => {
    if (!process.connected) endChildren()
  })
}
