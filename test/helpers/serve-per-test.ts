/**
 * For tests of a real `toolsel serve` over an index directory that other `toolsel` processes
 * write: one work directory and at most one server per test, stopped and removed after it, and
 * `toolsel` commands run as processes of their own on that index directory.
 * @module
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, afterEach } from 'vitest'
import { ROOT, startServe, type RunningServe, type StartServeOptions } from './start-serve.ts'

const run = promisify(execFile)

export interface ServePerTest {
  /** A fresh work directory (under the system's temporary one) for this test. */
  workDir(): Promise<string>
  /** `startServe(args, options)`, after stopping this test's server if it has one (a restart). */
  serve(args?: string[], options?: StartServeOptions): Promise<RunningServe>
}

/** Registers the `afterEach` that stops the test's server and removes its work directory. */
export function servePerTest(prefix: string): ServePerTest {
  let server: RunningServe | undefined
  let work: string | undefined
  afterEach(async () => {
    await server?.stop()
    server = undefined
    if (work) await rm(work, { recursive: true, force: true })
    work = undefined
  })
  return {
    async workDir() {
      work = await mkdtemp(join(tmpdir(), prefix))
      return work
    },
    async serve(args = [], options = {}) {
      await server?.stop()
      server = undefined
      server = await startServe(args, options)
      return server
    },
  }
}

/**
 * `servePerTest` for tests that run side by side (`concurrent`), each with one work directory
 * and one server of its own: `serve` starts another server (no restart), and every server is
 * stopped and every directory removed after the file's last test (`afterAll`): an `afterEach`
 * would end those of the tests still running.
 */
export function servesSideBySide(prefix: string): ServePerTest {
  const servers: RunningServe[] = []
  const works: string[] = []
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()))
    await Promise.all(works.splice(0).map((work) => rm(work, { recursive: true, force: true })))
  })
  return {
    async workDir() {
      const work = await mkdtemp(join(tmpdir(), prefix))
      works.push(work)
      return work
    },
    async serve(args = [], options = {}) {
      const server = await startServe(args, options)
      servers.push(server)
      return server
    },
  }
}

/** `toolsel <args> --index-dir <indexDir>` as a process of its own; rejects when it fails. */
export async function toolselOn(indexDir: string, ...args: string[]): Promise<void> {
  await run(process.execPath, ['bin/toolsel.mjs', ...args, '--index-dir', indexDir], {
    cwd: ROOT,
    env: { ...process.env, TOOLSEL_LIBRARY: '' },
  })
}
