/**
 * This host's own directories taken out of what HTTP answers say (an error's message, a
 * warning): the log and the CLI keep the full text; a caller of the service learns what failed,
 * not where this server keeps its files. `/readyz` failedIndexes, PUT and DELETE of a library
 * and POST /v1/snapshots use it.
 * @module
 */
import { isAbsolute, resolve, sep } from 'node:path'
import { ToolselError } from '../errors.ts'
import { escapeRegExp } from '../escape-regexp.ts'

/** A directory of this host and what an answer says instead (`<library.indexDir>`). */
export type HostPath = readonly [path: string, shown: string]

/** `[dir, shown]` for `dir` as given and as resolved (the two differ for a relative one). */
export function hostDir(dir: string, shown: string): HostPath[] {
  return [...new Set([dir, resolve(dir)])].map((path) => [path, shown] as const)
}

/**
 * `text` with every occurrence of each path replaced by what stands for it, the longest first
 * (one path may hold another). Only whole paths are replaced: where one starts a word (after a
 * space, a quote or a parenthesis) and ends it or goes on with `/`; a one-word relative one
 * (`indexes`) only where a path goes on under it, so that the word "indexes" of a text stays. The root directory and empty paths are skipped.
 */
export function withoutHostPaths(text: string, paths: readonly HostPath[]): string {
  const sorted = paths
    .filter(([path]) => path.length > 1 && path !== '.')
    .sort(([one], [other]) => other.length - one.length)
  let shown = text
  for (const [path, instead] of sorted) {
    const escaped = escapeRegExp(path)
    // A one-word relative path is a path only where one goes on under it.
    const word = !isAbsolute(path) && !path.includes(sep)
    const end = word ? '(?=/)' : `(?=$|/|[\\s'"):,;\`]|\\.(?:\\s|$))`
    shown = shown.replace(new RegExp(`(?<=^|[\\s'"(\`])${escaped}${end}`, 'g'), () => instead)
  }
  return shown
}

/**
 * `error` as an HTTP answer may carry it: a ToolselError whose message names one of `paths`
 * becomes one with the paths replaced (same code; the original is its cause, details without
 * them); `onHidden` is called with the original first (to log it whole). Anything else is
 * returned as it is.
 */
export function pathFreeError(
  error: unknown,
  paths: readonly HostPath[],
  onHidden?: (original: ToolselError) => void,
): unknown {
  if (!(error instanceof ToolselError)) return error
  const message = withoutHostPaths(error.message, paths)
  if (message === error.message) return error
  onHidden?.(error)
  const details = Object.fromEntries(
    Object.entries(error.details).map(([key, value]) => [
      key,
      typeof value === 'string' ? withoutHostPaths(value, paths) : value,
    ]),
  )
  return new ToolselError(error.code, message, { cause: error, details })
}
