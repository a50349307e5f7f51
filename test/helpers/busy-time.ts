/**
 * Time bounds that tell linear work from quadratic (or worse) work without reading a loaded
 * machine's waits as work: the wall-clock time of a piece of work stretches with the run queue
 * (2 cores shared by other test files and other work: load 10-20 makes 100 ms of CPU take a
 * second or more of wall time), the CPU time this process spent does not. Both grow with the
 * work itself, so a bound on the smaller of the two proves what a bound on the wall time proved
 * on a quiet machine, where the two are about the same.
 * @module
 */

/** This process's CPU time so far (user + system, every thread), in ms. */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/**
 * The smaller of the wall-clock and the CPU time (ms) that `work` took: nothing else may run in
 * this process meanwhile (it would count as the work's CPU time; the bound still holds for work
 * that is over it).
 */
export async function busyMs(work: () => unknown): Promise<number> {
  const wall = performance.now()
  const cpu = processCpuMs()
  await work()
  return Math.min(performance.now() - wall, processCpuMs() - cpu)
}

/** `busyMs` for synchronous `work`. */
export function busyMsSync(work: () => unknown): number {
  const wall = performance.now()
  const cpu = processCpuMs()
  work()
  return Math.min(performance.now() - wall, processCpuMs() - cpu)
}
