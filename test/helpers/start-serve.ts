/**
 * Starts a real `toolsel serve` (a child process on a free port, its own empty index directory)
 * for tests that talk HTTP to it: the typed client, the integration examples, the playground.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SAVED_DEMO_ENV } from '../setup/demo-index.ts'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface RunningServe {
  url: string
  logs: () => string
  /** SIGTERM, wait for the exit, remove the index directory (nothing to stop once it exited). */
  stop: () => Promise<void>
  /** The server process, for tests of signals and exit codes. */
  child: ChildProcess
  /** The index directory it serves. */
  indexDir: string
}

export interface StartServeOptions {
  /** The `toolsel` entry point to run (default this checkout's `bin/toolsel.mjs`). */
  bin?: string
  /** Its working directory (default this checkout). */
  cwd?: string
  /** More environment variables. */
  env?: Record<string, string>
  /** The index directory to serve (kept by `stop`); default a fresh one, removed by `stop`. */
  indexDir?: string
  /**
   * The fresh index directory starts with a copy of the demo saved once per run
   * (test/setup/demo-index.ts): the start loads it as saved, not imported and indexed (a second
   * or two at load 15). For tests of what a server does on the demo, not of how it gets it;
   * not with `indexDir`.
   */
  savedDemo?: boolean
}

/**
 * Copies the demo saved once per run (test/setup/demo-index.ts) into `indexDir` (fresh, empty):
 * a `toolsel serve` started on it, however it is started (startServe's `savedDemo`, npm, a
 * shell), loads the demo as saved instead of importing and indexing its 197 tools.
 */
export async function copySavedDemo(indexDir: string): Promise<void> {
  const saved = process.env[SAVED_DEMO_ENV]
  if (saved === undefined)
    throw new Error(`the saved demo needs ${SAVED_DEMO_ENV} (vitest's global setup)`)
  await cp(saved, join(indexDir, 'demo'), { recursive: true })
}

/**
 * Resolves with the base URL once the server logs `Ready:` (with `--workers N`, N > 1: once all
 * N are ready); 90 s at most.
 */
export async function startServe(
  args: string[] = [],
  {
    bin = 'bin/toolsel.mjs',
    cwd = ROOT,
    env = {},
    indexDir: given,
    savedDemo,
  }: StartServeOptions = {},
): Promise<RunningServe> {
  const indexDir = given ?? (await mkdtemp(join(tmpdir(), 'toolsel-serve-')))
  if (savedDemo) {
    if (given !== undefined) throw new Error('savedDemo needs a fresh index directory')
    await copySavedDemo(indexDir)
  }
  const workers = Number(args[args.indexOf('--workers') + 1] ?? 1)
  const ready =
    args.includes('--workers') && workers > 1 ? new RegExp(`Ready: ${workers} workers`) : /Ready:/
  let logs = ''
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, 'serve', '--port', '0', '--host', '127.0.0.1', '--index-dir', indexDir, ...args],
    {
      cwd,
      env: { ...process.env, TOOLSEL_LIBRARY: '', TOOLSEL_PORT: '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  child.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  const stop = async () => {
    // Still running (a process ended by a signal has exitCode null too).
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    if (given === undefined) await rm(indexDir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 90_000
  while (!ready.test(logs)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop()
      throw new Error(`toolsel serve did not start:\n${logs}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  // Loaded as saved: a start that imports the demo's files to compare (its fingerprint not the
  // one saved) says so at info level, and would cost more than the import it was to save.
  if (savedDemo && /Library "demo": /.test(logs)) {
    await stop()
    throw new Error(`the saved demo (test/setup/demo-index.ts) did not load as saved:\n${logs}`)
  }
  const port = /Listening on http:\/\/[^:]+:(\d+)/.exec(logs)![1]
  return { url: `http://127.0.0.1:${port}`, logs: () => logs, stop, child, indexDir }
}

/** The worker processes of the `serve --workers N` primary `pid` (Linux). */
export function workerPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
}
