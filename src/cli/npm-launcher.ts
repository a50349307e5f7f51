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
 *
 * pnpm and yarn set npm's variables too (run with pnpm 12, yarn 1.22 and yarn 4 in round 34):
 * pnpm sets `npm_lifecycle_script`, runs the script in `sh -c` and passes SIGTERM on; yarn 1 sets
 * it for a script but not for a bin it runs (`yarn toolsel serve`: the event is the bin's name);
 * yarn 2+ never sets it (the script is read from `npm_package_json`'s `scripts`) and runs the
 * command in a shell of its own, so the server is yarn's own child.
 * @module
 */
import cluster from 'node:cluster'
import { closeSync, openSync, readFileSync, readlinkSync, readSync } from 'node:fs'
import { basename } from 'node:path'

/** The process that started the server under npm, and the processes up to npm. */
export interface Launcher {
  /** The server's parent at start: npm's shell, or npm itself. */
  pid: number
  /**
   * npm's `npm_lifecycle_event`: `start` for `npm start`, `npx` for `npx toolsel serve`, the bin's
   * name for yarn 1's `yarn toolsel serve`…
   */
  event: string
  /**
   * The package manager, as `npm_config_user_agent` names it (`npm/10.8.2 node/v20…`, `pnpm/9.1.0
   * npm/? node/…`, `yarn/1.22.22 npm/? node/…`): `npm`, `pnpm`, `yarn`…; `npm` when unset or not a
   * plain name. For the log lines only.
   */
  manager: string
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

/** The most of a `package.json` read for its scripts (yarn 2+); a larger one is not read. */
const MAX_PACKAGE_JSON_BYTES = 1024 * 1024

/**
 * The server's launcher when npm (pnpm, yarn) started it: only when the package manager's command
 * runs toolsel itself: `npm_lifecycle_script` (npx: the bin's name, without its arguments); without
 * it, the script named `npm_lifecycle_event` in `npm_package_json` (yarn 2+), else the event itself
 * (yarn 1 running a bin). A server that a program under `npm test` or `npx vitest` spawns
 * inherits npm's variables too, and its parent is that program, which may well let it run on. Not
 * for a `--workers` worker (its primary watches), nor for a server started otherwise (`nohup
 * toolsel serve &` outlives the shell that started it).
 */
export function npmLauncher(env: NodeJS.ProcessEnv = process.env): Launcher | undefined {
  const { npm_lifecycle_event: event } = env
  if (!event || cluster.isWorker) return undefined
  if (!RUNS_TOOLSEL.test(scriptOf(env, event))) return undefined
  return { pid: process.ppid, event, manager: managerOf(env), links: ancestorLinks(process.ppid) }
}

/** A package manager's name: what `npm_config_user_agent` starts with, up to its `/`. */
const MANAGER_NAME = /^([a-z][a-z0-9-]{0,31})\//i

/** The package manager `npm_config_user_agent` names (see Launcher.manager). */
function managerOf(env: NodeJS.ProcessEnv): string {
  return MANAGER_NAME.exec(env.npm_config_user_agent ?? '')?.[1] ?? 'npm'
}

/** The command the package manager ran for `event` (see npmLauncher). */
function scriptOf(env: NodeJS.ProcessEnv, event: string): string {
  return env.npm_lifecycle_script || packageScript(env.npm_package_json, event) || event
}

/** Shells a script file of the user's runs in (`/proc/<pid>/exe`'s name). */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox', 'fish'])

/**
 * For a server npm (pnpm, yarn) started that watches no launcher because the script runs toolsel
 * through a file of the user's (`"start": "./run.sh"`): what to change, so that stopping npm stops
 * it. Only when the server's parent is a shell (Linux: `/proc/<ppid>/exe`), which npm's signal
 * does not pass through; a server that a program under `npm test` spawns has that program as its
 * parent and gets no hint.
 */
export function unwatchedLauncherHint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { npm_lifecycle_event: event } = env
  if (!event || cluster.isWorker) return undefined
  const script = scriptOf(env, event)
  if (RUNS_TOOLSEL.test(script)) return undefined
  let parent: string
  try {
    parent = basename(readlinkSync(`/proc/${process.ppid}/exe`))
  } catch {
    return undefined
  }
  if (!SHELLS.has(parent)) return undefined
  return (
    `Started by the "${event}" script (${JSON.stringify(script.slice(0, 200))}) through a shell (${parent}), ` +
    `which does not pass a SIGTERM on: stopping npm or yarn leaves this server running, and pnpm kills it without its drain. ` +
    `Write "exec toolsel serve …" in that file and "exec <the file>" in the script (README: Operations, Shutdown)`
  )
}

/**
 * `scripts[event]` of the package.json at `path` (yarn 2+ sets `npm_package_json`, not
 * `npm_lifecycle_script`), or undefined: no path, no such script, a file that can't be read, over
 * 1 MiB or not JSON.
 */
function packageScript(path: string | undefined, event: string): string | undefined {
  if (!path) return undefined
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const buffer = Buffer.alloc(MAX_PACKAGE_JSON_BYTES + 1)
    let length = 0
    for (let read = -1; read !== 0 && length < buffer.length; length += read)
      read = readSync(fd, buffer, length, buffer.length - length, null)
    if (length > MAX_PACKAGE_JSON_BYTES) return undefined
    const scripts: unknown = (
      JSON.parse(buffer.toString('utf8', 0, length)) as { scripts?: unknown }
    )?.scripts
    if (typeof scripts !== 'object' || scripts === null || !Object.hasOwn(scripts, event))
      return undefined
    const script: unknown = (scripts as Record<string, unknown>)[event]
    return typeof script === 'string' ? script : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
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
