/** Waiting on real processes in tests: whether one is alive, and polling until a condition holds. */

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
