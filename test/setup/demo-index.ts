/**
 * Vitest global setup: saves the demo library once per run (`toolsel index
 * src/library/demo/servers --name demo`, the command a user runs) under the run's temporary
 * directory (test/setup/tmp-dir.ts, which runs first) and names it in `TEST_SAVED_DEMO_INDEX`
 * for the test processes. `startServe(args, { savedDemo: true })` copies it into the server's
 * fresh index directory, so that the start loads the demo as saved (its fingerprint compared)
 * instead of importing and indexing its 197 tools: about 0.5 s a start at rest, a second or two
 * at load 15, in the ~30 tests that need a server on the demo but test something else.
 * @module
 */
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The environment variable that names the saved demo's directory (`<index dir>/demo`). */
export const SAVED_DEMO_ENV = 'TEST_SAVED_DEMO_INDEX'

export default function setup(): void {
  const indexDir = join(tmpdir(), 'saved-demo')
  execFileSync(
    process.execPath,
    [
      'bin/toolsel.mjs',
      'index',
      'src/library/demo/servers',
      '--name',
      'demo',
      '--index-dir',
      indexDir,
    ],
    {
      cwd: ROOT,
      // As startServe runs `toolsel serve`: no library or port of the caller's environment.
      env: { ...process.env, TOOLSEL_LIBRARY: '', TOOLSEL_PORT: '' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  process.env[SAVED_DEMO_ENV] = join(indexDir, 'demo')
}
