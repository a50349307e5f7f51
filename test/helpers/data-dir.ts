/**
 * Where the benchmark data lives (see shared/data/README.md): `TOOLSEL_DATA_DIR`, else
 * `../shared/data` next to the repository. Tests that need it skip, with the reason in their
 * name, when it is absent, so runs without data stay green but show what they skipped.
 * @module
 */
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: this file is `<root>/test/helpers/data-dir.ts`. */
const REPOSITORY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

// Tests read the environment directly: they run outside main.ts and its config loader.
/** The benchmark data directory (absolute). */
export const DATA_DIR = resolve(
  process.env.TOOLSEL_DATA_DIR ?? join(REPOSITORY_ROOT, '..', 'shared', 'data'),
)

/** A path inside the data directory, e.g. `dataPath('gorilla', 'gorilla', 'data', 'api')`. */
export function dataPath(...segments: string[]): string {
  return join(DATA_DIR, ...segments)
}

/** Whether that path exists, for `describe.skipIf(!hasData(...))`. */
export function hasData(...segments: string[]): boolean {
  return existsSync(dataPath(...segments))
}
