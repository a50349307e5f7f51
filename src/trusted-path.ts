/**
 * Whether state read from disk and trusted (an index directory, a learned model, an ONNX model
 * directory, `mcp.tokenizerDir`, the config file) could have been changed by another local user: the one rule, after
 * ssh's StrictModes, for every such load. Each file or directory read, and every directory above
 * it (where a writer could rename or replace it), is looked at with `stat` (links followed: what
 * is read):
 * - writable by every user (`o+w`; a directory with the sticky bit, such as /tmp, excepted: others
 *   can't rename or remove what they don't own in it) is refused (`assertTrustedPath` throws);
 * - owned by a uid other than this process's or root's, or writable by its group (sticky
 *   directories excepted), is a warning, once per process and path: a Docker image's user reading
 *   a volume its host user owns, or a group-writable directory of umask 002 (Debian's per-user
 *   groups), is usual and safe, and refusing it would stop those servers at start.
 * Devices are not looked at (/dev/zero is 666; what it gives does not change); the readers bound
 * and refuse them. Not checked where the system has no uids (Windows). The embedding and word-vectors caches take
 * the same rule, read stricter (`cacheTrustProblem`: such a cache is ignored and rebuilt, never
 * refused).
 * @module
 */
import { type Dir, opendirSync, realpathSync, type Stats, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { type ErrorCode, ToolselError } from './errors.ts'
import { indexDirWarnings } from './store/index-dir-claims.ts'

/** Most entries of a directory tree looked at (`recursive`): an index or a model has dozens. */
export const MAX_TRUST_CHECKED_ENTRIES = 10_000

export interface TrustProblem {
  /** The file or directory at fault. */
  path: string
  /** `refuse`: anyone can write it; `warn`: another uid owns it, or its group can write it. */
  level: 'refuse' | 'warn'
  /** Why, and the fix: `any user can write it (mode 777): chmod o-w <path>`. */
  reason: string
}

/** What is wrong with one stat of `path`, or undefined (worst first: refuse, then warn). */
export function statTrustProblem(path: string, info: Stats): TrustProblem | undefined {
  const uid = process.getuid?.()
  // A device's mode says nothing of what reading it gives (/dev/zero is 666): its own checks.
  if (uid === undefined || info.isCharacterDevice() || info.isBlockDevice()) return undefined
  const mode = (info.mode & 0o777).toString(8).padStart(3, '0')
  const sticky = info.isDirectory() && (info.mode & 0o1000) !== 0
  if ((info.mode & 0o002) !== 0 && !sticky)
    return {
      path,
      level: 'refuse',
      reason: `any user can write it (mode ${mode}): chmod o-w ${path}`,
    }
  if (info.uid !== uid && info.uid !== 0)
    return {
      path,
      level: 'warn',
      reason: `it belongs to uid ${info.uid}, not this process's (${uid}) or root: that user can change it (chown ${uid} ${path} if they should not)`,
    }
  if ((info.mode & 0o020) !== 0 && !sticky)
    return {
      path,
      level: 'warn',
      reason: `its group (gid ${info.gid}) can write it (mode ${mode}): chmod g-w ${path} if other users are in that group`,
    }
  return undefined
}

/**
 * The problems (`statTrustProblem`) of `path`, of every directory above it up to the root (both
 * as named and once links are resolved), and with `recursive`, of everything under it (at most
 * MAX_TRUST_CHECKED_ENTRIES entries, listed as they are walked). A path that can't be stat'ed or
 * listed is left to the read's own error.
 */
export function pathTrustProblems(
  path: string,
  options: { recursive?: boolean } = {},
): TrustProblem[] {
  if (process.getuid?.() === undefined) return []
  const checked = new Set<string>()
  const problems: TrustProblem[] = []
  const look = (at: string): Stats | undefined => {
    if (checked.has(at)) return undefined
    checked.add(at)
    let info: Stats
    try {
      info = statSync(at)
    } catch {
      return undefined
    }
    const problem = statTrustProblem(at, info)
    if (problem) problems.push(problem)
    return info
  }
  const up = (from: string) => {
    for (let at = from; ; at = dirname(at)) {
      look(at)
      if (dirname(at) === at) break
    }
  }
  const named = resolve(path)
  let real = named
  try {
    real = realpathSync(named)
  } catch {
    // Missing: the read fails with its own error.
  }
  up(real)
  up(named)
  if (options.recursive && statSync(real, { throwIfNoEntry: false })?.isDirectory()) {
    // Streamed (`opendir`: a directory's entries a few at a time) and stopped at the cap, breadth
    // first (a directory's own files before those of its subdirectories, as readdir's
    // `recursive`): a directory of millions of files costs MAX_TRUST_CHECKED_ENTRIES stats, not
    // its whole listing. A directory that can't be listed (removed meanwhile) is left to the read.
    let left = MAX_TRUST_CHECKED_ENTRIES
    const queue = [real]
    for (let next = 0; next < queue.length && left > 0; next++) {
      let handle: Dir
      try {
        handle = opendirSync(queue[next])
      } catch {
        continue
      }
      try {
        for (let entry = handle.readSync(); entry !== null && left > 0; entry = handle.readSync()) {
          left--
          const at = join(queue[next], entry.name)
          look(at)
          // A link is stat'ed (what is read), not walked into.
          if (entry.isDirectory()) queue.push(at)
        }
      } catch {
        // Gone while listed: the read says so.
      } finally {
        handle.closeSync()
      }
    }
  }
  return problems
}

/**
 * Why a cache file toolsel wrote (the embedding cache, the word-vectors caches) is not to be read,
 * or undefined: the same rule as state's, read stricter where it costs only time. The file itself
 * (`info`: the fstat of the handle that would read it) is ignored on any problem of
 * `statTrustProblem`, a warning's included (another uid than this process's or root's owns it, or
 * its group can write it): toolsel writes its caches itself, as this uid and mode 0644 whatever
 * the umask, so such a file is none it wrote, and ignoring it costs a rebuild (seconds), where
 * ignoring an index or a model it can't rebuild would stop the load. The directories above take
 * the state rule: one any user can write (not sticky) ignores the cache; one another uid owns or
 * its group can write (a Docker build's `node_modules`, umask 002) is read past, as the index
 * or package around the cache is (with its own warning there).
 */
export function cacheTrustProblem(file: string, info: Stats): string | undefined {
  if (process.getuid?.() === undefined) return undefined
  const own = statTrustProblem(file, info)
  if (own) return own.reason
  const above = pathTrustProblems(dirname(file)).find((problem) => problem.level === 'refuse')
  return above && `${above.path}: ${above.reason}`
}

/** Warnings given (path and reason), so that each is given once per process. */
const warned = new Set<string>()

/**
 * Checks `path` (`pathTrustProblems`): a path any user can write throws `code` naming `what`, the
 * path at fault and the fix; a warning goes to `indexDirWarnings.report` (the CLI's stderr,
 * `toolsel serve`'s log), once per process for one path and reason.
 */
export function assertTrustedPath(
  path: string,
  what: string,
  code: ErrorCode,
  options: { recursive?: boolean } = {},
): void {
  const problems = pathTrustProblems(path, options)
  const refused = problems.find((problem) => problem.level === 'refuse')
  if (refused) {
    throw new ToolselError(
      code,
      `${what} ${path} is not read: ${refused.path}: ${refused.reason}. Another local user could have changed what it holds.`,
      { details: { path: refused.path } },
    )
  }
  for (const problem of problems) {
    const key = `${problem.path}\u0000${problem.reason}`
    if (warned.has(key)) continue
    warned.add(key)
    indexDirWarnings.report(
      `${what} ${path} is read, though another local user may be able to change it: ${problem.path}: ${problem.reason}.`,
    )
  }
}
