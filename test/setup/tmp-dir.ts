/**
 * Vitest global setup: every temporary file of the run goes under one fresh directory, removed
 * when the run ends (XDG_CACHE_HOME too: the demo index `toolsel select` caches). Tests (and the
 * servers, CLIs and Python processes they start) make their index directories, snapshots and
 * sockets with `os.tmpdir()`; many never remove them, and /tmp filled with thousands of
 * `toolsel-*` directories over the runs. `TMPDIR` is set here,
 * before the test processes are forked, so they and their children inherit it.
 * `TOOLSEL_KEEP_TEST_TMP=1` keeps the directory (its path is printed) to look into a failure.
 * A vitest killed by SIGTERM runs no teardown: test/setup/end-children.ts removes it then.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'toolsel-tests-'))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = dir
  // `toolsel select` caches the demo's index in the user's cache directory: the run's, not $HOME's.
  const previousCache = process.env.XDG_CACHE_HOME
  process.env.XDG_CACHE_HOME = join(dir, 'xdg-cache')
  return () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    if (previousCache === undefined) delete process.env.XDG_CACHE_HOME
    else process.env.XDG_CACHE_HOME = previousCache
    if (process.env.TOOLSEL_KEEP_TEST_TMP) process.stderr.write(`Test files kept in ${dir}\n`)
    else rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  }
}
