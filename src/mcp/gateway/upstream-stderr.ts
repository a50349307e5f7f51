/**
 * An upstream process's stderr lines into our log (debug), bounded and redacted: at most
 * `MAX_STDERR_LINES_PER_SECOND` lines a second per upstream (the lines dropped past it are
 * counted in the next line logged), each cut at `MAX_STDERR_LINE_CHARS` by the transport, and
 * without the credentials its configuration holds (`redactUpstream`: a server that prints its
 * own command line or env puts our tokens there).
 * @module
 */
import type { UpstreamConfig } from '../../config/schema.ts'
import type { Logger } from '../../log.ts'
import { redactUpstream } from './upstream-redaction.ts'

/** Most stderr lines of one upstream logged in one second. */
export const MAX_STDERR_LINES_PER_SECOND = 20

export function upstreamStderrLog(
  name: string,
  config: UpstreamConfig,
  logger: Logger,
  now: () => number = Date.now,
): (line: string) => void {
  let windowStart = -Infinity
  let logged = 0
  let dropped = 0
  return (line) => {
    const time = now()
    if (time - windowStart >= 1000) {
      windowStart = time
      logged = 0
    }
    if (logged >= MAX_STDERR_LINES_PER_SECOND) {
      dropped += 1
      return
    }
    logged += 1
    const note =
      dropped > 0
        ? ` (${dropped} earlier stderr line(s) dropped: over ${MAX_STDERR_LINES_PER_SECOND} a second)`
        : ''
    dropped = 0
    logger.debug(`[${name}] ${redactUpstream(line, config)}${note}`)
  }
}
