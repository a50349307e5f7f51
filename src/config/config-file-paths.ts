/**
 * Relative model paths in a config file are read from the config file's directory (the usual
 * convention: a config file and the models it names move together), not from wherever the
 * process was started. Only the file's own values are rewritten: a path given by a flag or an
 * environment variable stays relative to the current directory.
 * @module
 */
import { isAbsolute, relative, resolve, sep } from 'node:path'

/**
 * Config keys whose values are component ids that may hold a model path (`learned:<model.json>`,
 * `llm:onnx:<dir>`, `onnx:<dir>`), and the one key that is a model directory itself.
 */
const COMPONENT_KEYS: ReadonlyArray<readonly [string, string]> = [
  ['plan', 'planner'],
  ['plan', 'fallback'],
  ['select', 'selector'],
  ['select', 'fallback'],
]
const DIRECTORY_KEYS: ReadonlyArray<readonly [string, string]> = [['mcp', 'tokenizerDir']]

/** The component id's path part (after `learned:`, `onnx:` or `llm:onnx:`) and what precedes it. */
function splitModelPath(id: string): { prefix: string; path: string } | undefined {
  const match = /^(learned:|(?:llm:)?onnx:)(.+)$/.exec(id)
  return match ? { prefix: match[1], path: match[2] } : undefined
}

/**
 * `path` read from `baseDir`, written relative to the current directory when it lies below it
 * (so ids in answers and logs stay as short as the user wrote them), else absolute.
 */
function fromDirectory(path: string, baseDir: string, cwd: string): string {
  if (path === '' || isAbsolute(path)) return path
  const absolute = resolve(baseDir, path)
  const fromCwd = relative(cwd, absolute)
  return fromCwd === '' || fromCwd === '..' || fromCwd.startsWith(`..${sep}`) || isAbsolute(fromCwd)
    ? absolute
    : fromCwd
}

/** A component id with its relative model path read from `baseDir`; other ids unchanged. */
export function resolveComponentPath(id: string, baseDir: string, cwd = process.cwd()): string {
  const split = splitModelPath(id)
  return split ? `${split.prefix}${fromDirectory(split.path, baseDir, cwd)}` : id
}

/**
 * Rewrites the relative model paths of a config file's layer (`select.selector`,
 * `plan.planner`, their fallbacks, `mcp.tokenizerDir`) against `baseDir`, the file's directory.
 * Other values, and values of other types (reported later by the schema), are left alone.
 */
export function resolveConfigFilePaths(
  layer: Record<string, unknown>,
  baseDir: string,
  cwd = process.cwd(),
): void {
  const rewrite = (
    keys: ReadonlyArray<readonly [string, string]>,
    map: (value: string) => string,
  ) => {
    for (const [section, key] of keys) {
      const values = layer[section]
      if (values === null || typeof values !== 'object' || Array.isArray(values)) continue
      const record = values as Record<string, unknown>
      if (typeof record[key] === 'string') record[key] = map(record[key])
      // A fallback list (`plan.fallback: ["onnx:models/small", "rule"]`): each id.
      else if (Array.isArray(record[key]))
        record[key] = record[key].map((entry) => (typeof entry === 'string' ? map(entry) : entry))
    }
  }
  rewrite(COMPONENT_KEYS, (id) => resolveComponentPath(id, baseDir, cwd))
  rewrite(DIRECTORY_KEYS, (dir) => fromDirectory(dir, baseDir, cwd))
}
