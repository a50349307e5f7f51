/**
 * Temporary files and work directories removed when Ctrl-C (SIGINT), SIGTERM or SIGHUP (the
 * terminal closed) ends the process while they are being written, and a last line for the user
 * (`toolsel bench`: how to resume): one listener for all of them.
 * @module
 */
import { rmSync } from 'node:fs'

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
type StopSignal = (typeof SIGNALS)[number]

/** The paths being written, each with whether it goes also when another listener stops the process. */
const paths = new Map<string, { always: boolean }>()

/** What to tell the user when a signal ends the process (`noteOnSignal`). */
const notes = new Set<() => void>()

function onSignal(signal: StopSignal): void {
  // Another listener (serve's or mcp's graceful stop, which finishes the writes it has begun):
  // only the `always` paths go, and that listener ends the process. Counted before the others
  // run (this one is prepended): a `process.once` listener (mcp stdio's) that ran first was
  // already removed, so this one counted itself alone and killed the process in its drain.
  const alone = process.listenerCount(signal) === 1
  for (const [path, { always }] of paths) {
    if (!always && !alone) continue
    removeNow(path)
    paths.delete(path)
  }
  if (!alone) return
  for (const note of notes) {
    // Never throwing, as removeNow: a note that threw was an uncaught exception (exit 1 and a
    // stack trace instead of the signal's 130/143/129), the later notes and the kill skipped.
    try {
      note()
    } catch {
      // The note is lost; the process still ends by the signal.
    }
  }
  notes.clear()
  stopListening()
  // No one else listens (a command: index, snapshot, train): end the process as the signal
  // would have (exit 130 in a shell for SIGINT).
  process.kill(process.pid, signal)
}

/** Attempts of `removeNow` (each lists the directory again). */
const REMOVE_ATTEMPTS = 20

/**
 * Removes `path` (and all under it), never throwing: it runs in the signal listener, where an
 * error was an uncaught exception (exit 1 and a stack trace, not the signal's 130/143/129, and
 * the later paths kept). The writes in flight on the thread pool go on meanwhile: one that
 * creates a file after rmSync listed the directory makes its rmdir fail with ENOTEMPTY (about
 * one Ctrl-C in two with 64 writes in flight, round 49), so it is tried again; what is still
 * left after that is the next writer's sweep of dead writers' work.
 */
function removeNow(path: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(path, { recursive: true, force: true })
      return
    } catch {
      if (attempt === REMOVE_ATTEMPTS) return
    }
  }
}

const listeners = SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const)
let listening = false

function startListening(): void {
  if (listening) return
  listening = true
  for (const [signal, listener] of listeners) process.prependListener(signal, listener)
}

function stopListening(): void {
  if (!listening || paths.size > 0 || notes.size > 0) return
  listening = false
  for (const [signal, listener] of listeners) process.off(signal, listener)
}

/**
 * Removes `path` (a file or a directory) if the process gets SIGINT, SIGTERM or SIGHUP before
 * the returned function is called (the write is done, or failed and cleaned up). A signal that
 * another listener handles (a server's graceful stop) leaves it to that listener's end unless
 * `always` (and to the next writer's sweep of dead writers' work); with no other listener the
 * process then ends by the signal.
 */
export function removeOnSignal(path: string, { always = false } = {}): () => void {
  paths.set(path, { always })
  startListening()
  return () => {
    paths.delete(path)
    stopListening()
  }
}

/**
 * Calls `note` (one line on stderr: what was kept, how to go on) if SIGINT, SIGTERM or SIGHUP
 * ends the process before the returned function is called, after the paths of `removeOnSignal`
 * are removed and before the process ends by the signal. Not when another listener (a server's
 * graceful stop) handles the signal. One listener with `removeOnSignal`'s: a second would make
 * each see the other and leave the process running.
 */
export function noteOnSignal(note: () => void): () => void {
  notes.add(note)
  startListening()
  return () => {
    notes.delete(note)
    stopListening()
  }
}
