/** Counts the event-loop turns (a setImmediate chain) while `work` runs. */
export async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0
  let running = true
  const tick = () => {
    turns += 1
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  await work()
  running = false
  return turns
}
