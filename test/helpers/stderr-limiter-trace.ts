/**
 * Whether a log of an upstream's stderr lines could have come from its limiter
 * (src/mcp/gateway/upstream-stderr.ts): a window starts at a line's arrival, holds at most `max`
 * lines logged, and ends 1 s later; the first line logged after drops (a window's first) names
 * them. A log's times are the logger's, taken just after the limiter's own clock: `slackMs` is
 * how far the two may be apart.
 *
 * Counting lines between two drop notes is no such check: a flood that reaches a window not full
 * (the start-up line's, its end a few lines into the flood) crosses into the next one without a
 * note, and the count passes `max` while the limiter is right.
 * @module
 */

/** One stderr line as logged: when, and whether it names lines dropped before it. */
export interface LoggedStderrLine {
  at: number
  note: boolean
}

/**
 * True when some choice of window starts explains `lines` (in their order): the first line
 * starts one; a line with a note starts one; a window holds at most `max` lines, all within
 * 1 s (give or take `slackMs`) of its first, and the next starts no sooner than that.
 */
export function fitsStderrLimiter(
  lines: readonly LoggedStderrLine[],
  max: number,
  slackMs: number,
): boolean {
  // fits[s]: the lines from s on fit when a window starts at line s (filled from the end).
  const fits: boolean[] = new Array<boolean>(lines.length + 1).fill(false)
  fits[lines.length] = true
  for (let start = lines.length - 1; start >= 0; start--) {
    // The window holds lines start..next-1; line `next` starts the next one (or there is none).
    for (let next = start + 1; next <= lines.length && next - start <= max; next++) {
      const last = lines[next - 1]
      if (next - 1 > start && (last.note || last.at - lines[start].at >= 1000 + slackMs)) break
      const after = lines[next]
      if (after !== undefined && after.at - lines[start].at < 1000 - slackMs) continue
      if (fits[next]) {
        fits[start] = true
        break
      }
    }
  }
  return fits[0]
}
