/** Waiting on real processes in tests: whether one is alive, and polling until a condition holds. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** Process ids whose command line holds `marker` (`ps`: orphans, with another parent, too). */
export function processesWith(marker: string): number[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker))
    .map((line) => Number.parseInt(line.trim(), 10))
}

/** Whether process `pid` exists (a signal 0 reaches it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Resolves once `condition` holds (looked at every 50 ms); throws naming `what` after `timeoutMs`,
 * with what `seen` returns then (a log, a state) so that the failure explains itself.
 */
export async function until(
  what: string,
  condition: () => boolean,
  timeoutMs = 30_000,
  seen?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what} (${timeoutMs} ms)${seen ? `; seen meanwhile:\n${seen()}` : ''}`,
      )
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** `/proc/<pid>/stat`'s state letter ('T' once the process has stopped itself), if it still runs. */
export function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2)[0]
  } catch {
    return undefined
  }
}

/**
 * Starts `node <args>` with only PATH and `env` in its environment, and resolves once it has stopped
 * itself (SIGSTOP: the test-only `TOOLSEL_TEST_STOP_IN_…` switches, Linux /proc); throws with its
 * output if it exits first or after `timeoutMs`.
 */
export async function stoppedWriter(
  args: readonly string[],
  options: { env: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    ...(options.cwd && { cwd: options.cwd }),
    env: { PATH: process.env.PATH, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  while (procState(child.pid!) !== 'T') {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the writer did not stop mid-write (exit ${child.exitCode}): ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return child
}

/** `child`'s exit code once it has exited (null when a signal ended it). */
export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}
