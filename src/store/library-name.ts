/**
 * The library name a tool file or directory gets when none is given (`toolsel index <file>`,
 * `--library <file>`).
 * @module
 */
import { basename, extname } from 'node:path'

/** `tools/my-tools.json` → `my-tools`; characters not allowed in library names become `-`. */
export function libraryNameFromPath(path: string): string {
  const stem = basename(path, extname(path))
    .replace(/[^a-zA-Z0-9._-]/g, '-')
    .replace(/^[^a-zA-Z0-9]+/, '')
  return stem.slice(0, 64) || 'library'
}
