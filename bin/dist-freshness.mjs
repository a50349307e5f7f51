// Whether dist/ (the compiled TypeScript, `npm run build`) matches src/: same source files, none
// changed since the build. bin/toolsel.mjs runs dist/ when it does and src/ through tsx otherwise;
// scripts/build-dist.mjs records the fingerprint this compares. Plain JavaScript: it runs before
// any TypeScript can.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** The source files' count and newest modification time (ms). */
export function sourceFingerprint(srcDir) {
  let files = 0
  let newestMtimeMs = 0
  for (const entry of readdirSync(srcDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    files += 1
    const mtime = statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs
    if (mtime > newestMtimeMs) newestMtimeMs = mtime
  }
  return { files, newestMtimeMs }
}

export const BUILD_INFO_FILE = 'build-info.json'

/**
 * Whether `distDir` holds a build of `srcDir` as it is now. Without `srcDir` (a Docker image ships
 * dist/ only) any complete build is.
 */
export function isDistFresh(srcDir, distDir) {
  let recorded
  try {
    recorded = JSON.parse(readFileSync(join(distDir, BUILD_INFO_FILE), 'utf8'))
  } catch {
    return false
  }
  if (!existsSync(srcDir)) return true
  const now = sourceFingerprint(srcDir)
  return recorded.files === now.files && now.newestMtimeMs <= recorded.newestMtimeMs
}
