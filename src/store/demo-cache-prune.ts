/**
 * Bounds `toolsel select`'s demo cache (`demoCacheIndexDir`, library-lifecycle.ts): one
 * subdirectory per build config (round 50) was never removed, nor the round-48 layout's
 * `indexes/demo` that round 50 left behind.
 * @module
 */
import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** How many build configs keep their cached demo (about 0.2 MB each for BM25, more with dense). */
export const DEMO_CACHE_KEEP = 4

/** A build config's subdirectory: `demoCacheKey`'s 16 hex digits. */
const KEY_DIR = /^[0-9a-f]{16}$/

/**
 * After a build saved its demo in `cacheDir/<keep>`: removes the round-48 layout's `demo` and
 * all configs' subdirectories but the `DEMO_CACHE_KEEP` last used (each one's time is its
 * directory's modification time, which a save sets and a cached load renews), `keep` always
 * among them. Each subdirectory goes whole (`rm` of the directory; a run loading from it
 * meanwhile fails its load and builds the demo, as it does for any cache it cannot read).
 * @returns The names removed.
 */
export async function pruneDemoCache(cacheDir: string, keep: string): Promise<string[]> {
  const entries = await readdir(cacheDir, { withFileTypes: true })
  const keys: { name: string; used: number }[] = []
  for (const entry of entries) {
    if (!entry.isDirectory() || !KEY_DIR.test(entry.name) || entry.name === keep) continue
    const used = await stat(join(cacheDir, entry.name)).then(
      (stats) => stats.mtimeMs,
      () => undefined,
    )
    if (used !== undefined) keys.push({ name: entry.name, used })
  }
  keys.sort((a, b) => b.used - a.used)
  const removed = keys.slice(DEMO_CACHE_KEEP - 1).map((key) => key.name)
  if (entries.some((entry) => entry.isDirectory() && entry.name === 'demo')) removed.push('demo')
  for (const name of removed) await rm(join(cacheDir, name), { recursive: true, force: true })
  return removed
}
