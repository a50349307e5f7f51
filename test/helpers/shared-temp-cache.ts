/**
 * A word-vector package whose `node_modules/.cache` can't be made (a file is in the way, as in a
 * read-only install), so its caches go to the OS temp directory, where any local user can make
 * files (models/static/word-vectors.ts `cacheFiles`).
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

/**
 * Makes `<root>/node_modules/vectors/` (the package; `source` is its vectors.json, not written)
 * and `<root>/tmp`, and runs `run` with TMPDIR set to that directory (restored after).
 */
export async function inSharedTempCache<T>(
  root: string,
  run: (paths: { source: string; temp: string }) => Promise<T>,
): Promise<T> {
  const source = join(root, 'node_modules', 'vectors', 'vectors.json')
  await mkdir(dirname(source), { recursive: true })
  await writeFile(join(root, 'node_modules', '.cache'), 'not a directory\n')
  const temp = join(root, 'tmp')
  await mkdir(temp)
  const tmpdirBefore = process.env.TMPDIR
  process.env.TMPDIR = temp
  try {
    return await run({ source, temp })
  } finally {
    if (tmpdirBefore === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = tmpdirBefore
  }
}
