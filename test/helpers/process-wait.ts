/** Waiting on real processes in tests: whether one is alive, and polling until a condition holds. */
import { execFileSync } from 'node:child_process'

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

/** Resolves once `condition` holds (looked at every 50 ms); throws naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  condition: () => boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
