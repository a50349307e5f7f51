/**
 * The npm that started a server (`npm start`, `npx toolsel serve`, a script `toolsel serve …`)
 * and the processes between them, watched so that the server stops when npm stops.
 *
 * npm runs a script's command in `sh -c` (cmd.exe on Windows) and passes the SIGTERM and SIGINT
 * it gets to that shell only, which exits without passing them on: the server is re-parented,
 * and that is its stop signal. npm killed outright (SIGKILL, the OOM killer) leaves its shell
 * waiting on the server, re-parented itself; a script that runs npm again (`"start": "npm run
 * serve"`) puts a second npm and its shell in between. So on Linux the watch also follows the
 * server's ancestors up to the outermost npm: every process whose environment npm set
 * (`npm_lifecycle_event`, read from /proc) and the one that started it. Elsewhere (no /proc) only
 * the server's own parent is watched.
 * @module
 */
import cluster from 'node:cluster'
import { readFileSync } from 'node:fs'

/** The process that started the server under npm, and the processes up to npm. */
export interface Launcher {
  /** The server's parent at start: npm's shell, or npm itself. */
  pid: number
  /** npm's `npm_lifecycle_event`: `start` for `npm start`, `npx` for `npx toolsel serve`… */
  event: string
  /**
   * Linux: each ancestor from the server's parent up and the parent it had at start, up to the
   * outermost npm (the first whose environment has no `npm_lifecycle_event`); empty elsewhere.
   */
  links: ReadonlyArray<{ pid: number; parent: number }>
}

/** npm's command that runs toolsel: its `toolsel` bin (npx, a user's script) or its bin file. */
const RUNS_TOOLSEL = /(?:^|[\s'"/\\])toolsel(?:\.mjs)?(?:$|[\s'"])/

/** The most ancestors followed (npm in npm in npm… is rare beyond two). */
const MAX_LINKS = 8

/**
 * The server's launcher when npm started it: only when npm's command (`npm_lifecycle_script`;
 * npx: the bin's name, without its arguments) runs toolsel itself. A server that a program
 * under `npm test` or `npx vitest` spawns inherits npm's variables too, and its parent is that
 * program, which may well let it run on. Not for a `--workers` worker (its primary watches),
 * nor for a server started otherwise (`nohup toolsel serve &` outlives the shell that started it).
 */
export function npmLauncher(env: NodeJS.ProcessEnv = process.env): Launcher | undefined {
  const { npm_lifecycle_event: event, npm_lifecycle_script: script } = env
  if (!event || !script || !RUNS_TOOLSEL.test(script) || cluster.isWorker) return undefined
  return { pid: process.ppid, event, links: ancestorLinks(process.ppid) }
}

/**
 * The process of the launcher that went, or undefined while all are there: the server's parent
 * changed (its shell exited), or a process between it and npm was re-parented (the one that
 * started it exited, e.g. npm killed).
 */
export function launcherGone(launcher: Launcher): number | undefined {
  if (process.ppid !== launcher.pid) return launcher.pid
  for (const { pid, parent } of launcher.links) {
    const now = parentOf(pid)
    // A process that has gone is the same as its child re-parented: found at that child.
    if (now !== undefined && now !== parent) return parent
  }
  return undefined
}

function ancestorLinks(first: number): Array<{ pid: number; parent: number }> {
  const links: Array<{ pid: number; parent: number }> = []
  let pid = first
  while (links.length < MAX_LINKS && pid > 1 && underNpm(pid)) {
    const parent = parentOf(pid)
    if (parent === undefined || parent <= 1) break
    links.push({ pid, parent })
    pid = parent
  }
  return links
}

/** The parent of `pid` (Linux /proc), or undefined when it can't be read (gone, no /proc). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    return Number.isSafeInteger(ppid) ? ppid : undefined
  } catch {
    return undefined
  }
}

/** Whether npm set the environment `pid` started with (its script shell, an npm in a script). */
function underNpm(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1')
      .split('\0')
      .some((entry) => entry.startsWith('npm_lifecycle_event='))
  } catch {
    return false
  }
}
