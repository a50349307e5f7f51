/**
 * Bounds a list of import warnings for an answer or a log: warnings of one kind (the same words
 * but for names, numbers, the record and the operation) are listed up to a number each, and the
 * rest are counted. A spec of 10,000 operations warns 10,000 times the same way (Microsoft
 * Graph: 11,422 times "operationId … is used as the name …", a 2.4 MB answer before round 28).
 * @module
 */

/** How many warnings of one kind are listed. */
export const WARNINGS_PER_KIND = 20
/** How many kinds are counted, `other` included: the warnings of kinds past the first 19. */
export const MAX_WARNING_KINDS = 20
/** The kind that counts the warnings of the kinds past the first `MAX_WARNING_KINDS - 1`. */
export const OTHER_WARNINGS = 'other'

export interface WarningKindCount {
  /** The warning's words with names as `"…"`, numbers as `N`, no file, record or operation. */
  kind: string
  /** How many warnings were of this kind. */
  count: number
  /** How many of them are listed in `warnings`. */
  listed: number
}

export interface GroupedWarnings {
  /** At most `perKind` warnings of each kind, in their order; a last line counts the rest. */
  warnings: string[]
  /** Present when some warnings were left out of `warnings`. */
  counts?: { total: number; kinds: WarningKindCount[] }
}

const RECORD_PREFIX = /^.*?: (?:record|line) \d+: /
const OPERATION_PREFIX = /^(?:GET|PUT|POST|DELETE|OPTIONS|HEAD|PATCH|TRACE) \S*: /
const QUOTED = /"(?:[^"\\]|\\.)*"/g
const NUMBER = /\d+/g
/** A kind is cut to this many characters (a long warning's kind is its start). */
const MAX_KIND_CHARS = 160

/** The kind of one warning (what groups it with others). */
export function warningKind(warning: string): string {
  const kind = warning
    .replace(RECORD_PREFIX, '')
    .replace(OPERATION_PREFIX, '')
    .replace(QUOTED, '"…"')
    .replace(NUMBER, 'N')
  return kind.length > MAX_KIND_CHARS ? `${kind.slice(0, MAX_KIND_CHARS)}…` : kind
}

/**
 * `warnings` with at most `perKind` of each kind listed. When some are left out, the list ends
 * with a line that says how many and `counts` gives the total and each kind's count.
 */
export function groupWarnings(
  warnings: readonly string[],
  perKind = WARNINGS_PER_KIND,
): GroupedWarnings {
  const kinds = new Map<string, WarningKindCount>()
  const listed: string[] = []
  for (const warning of warnings) {
    let kind = warningKind(warning)
    if (!kinds.has(kind) && kinds.size >= MAX_WARNING_KINDS - 1) kind = OTHER_WARNINGS
    let entry = kinds.get(kind)
    if (entry === undefined) {
      entry = { kind, count: 0, listed: 0 }
      kinds.set(kind, entry)
    }
    entry.count += 1
    if (entry.listed < perKind) {
      entry.listed += 1
      listed.push(warning)
    }
  }
  const leftOut = warnings.length - listed.length
  if (leftOut === 0) return { warnings: listed }
  const cut = [...kinds.values()].filter((entry) => entry.listed < entry.count)
  listed.push(
    `${leftOut} more warning(s) not listed (at most ${perKind} of each kind): ${cut
      .map((entry) => `${entry.count - entry.listed} more of "${entry.kind}"`)
      .join('; ')}`,
  )
  return { warnings: listed, counts: { total: warnings.length, kinds: [...kinds.values()] } }
}
