/** Counting the AbortSignals requests make (see src/lazy-abort.ts). */
import { LazyAbort } from '../../src/lazy-abort.ts'

/** How many LazyAbort signals `run` makes (reads of `LazyAbort.prototype.signal`). */
export async function signalsMade(run: () => Promise<void>): Promise<number> {
  const descriptor = Object.getOwnPropertyDescriptor(LazyAbort.prototype, 'signal')!
  let made = 0
  Object.defineProperty(LazyAbort.prototype, 'signal', {
    ...descriptor,
    get() {
      made += 1
      return descriptor.get!.call(this)
    },
  })
  try {
    await run()
  } finally {
    Object.defineProperty(LazyAbort.prototype, 'signal', descriptor)
  }
  return made
}
