/**
 * `toolsel serve` as a child process for the request benchmarks (bench/request-profile.ts,
 * bench/request-ab.ts): started on a saved index, ready when `/readyz` answers, and its CPU time
 * read from /proc.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { measureInProcess } from './in-process.ts'

export interface ServeProcess {
  server: ChildProcess
  url: string
}

/**
 * Starts `bin/toolsel.mjs serve` of the checkout at `root` on a random local port, serving
 * `library` from `indexDir`, and waits until it is ready. `nodeArgs` go before the script
 * (e.g. `--cpu-prof`).
 */
export async function startServe(options: {
  root: string
  indexDir: string
  library: string
  nodeArgs?: string[]
  /** More environment for the server (e.g. `TOOLSEL_WORKERS`). */
  env?: Record<string, string>
  /** Called with each chunk the server writes to stdout (else stdout is inherited). */
  onStdout?: (chunk: string) => void
}): Promise<ServeProcess> {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const server = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      join(options.root, 'bin/toolsel.mjs'),
      'serve',
      ...['--host', '127.0.0.1', '--port', String(port), '--library', options.library],
      ...['--index-dir', options.indexDir, '--log-level', 'warn'],
    ],
    {
      cwd: options.root,
      stdio: ['ignore', options.onStdout ? 'pipe' : 'inherit', 'inherit'],
      env: { ...process.env, TOOLSEL_LIBRARY: '', ...options.env },
    },
  )
  const onStdout = options.onStdout
  if (onStdout) server.stdout!.on('data', (chunk: Buffer) => onStdout(chunk.toString()))
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (server.exitCode !== null) throw new Error(`toolsel serve exited with ${server.exitCode}`)
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    )
    if (ready) return { server, url }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * CPU time (user + system) a process and its descendants (`--workers N`'s workers) have used, in
 * milliseconds (10 ms clock ticks), from /proc.
 */
export async function cpuMillis(pid: number): Promise<number> {
  const processes = await Promise.all(
    (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry)).map(statOf),
  )
  const children = new Map<number, number[]>()
  for (const stat of processes) {
    if (stat === undefined) continue
    const siblings = children.get(stat.parent) ?? []
    siblings.push(stat.pid)
    children.set(stat.parent, siblings)
  }
  const ticks = new Map(processes.flatMap((stat) => (stat ? [[stat.pid, stat.ticks]] : [])))
  let total = 0
  const pending = [pid]
  while (pending.length > 0) {
    const next = pending.pop()!
    total += ticks.get(next) ?? 0
    pending.push(...(children.get(next) ?? []))
  }
  return total * 10
}

/** A process's parent and CPU clock ticks; undefined when it is gone. */
async function statOf(
  entry: string,
): Promise<{ pid: number; parent: number; ticks: number } | undefined> {
  try {
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return {
      pid: Number(entry),
      parent: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]),
    }
  } catch {
    return undefined
  }
}

/**
 * Builds and saves the benchmark library of `size` tools in `work` (as bench/perf.ts does) and
 * returns its name with the `/v1/select-tools` bodies of the benchmark instructions
 * (`includeSchemas: true`).
 */
export async function buildSelectLoad(
  dataDir: string,
  size: number,
  work: string,
): Promise<{ library: string; bodies: string[] }> {
  process.stderr.write(`Building ${size} tools…\n`)
  const built = await measureInProcess(dataDir, size, work)
  const instructions = JSON.parse(
    await readFile(join(work, 'instructions.json'), 'utf8'),
  ) as string[]
  const bodies = instructions.map((instruction) =>
    JSON.stringify({ instruction, includeSchemas: true }),
  )
  return { library: built.library, bodies }
}
