/**
 * Runs a Python process from the checkout's root for the tests of the Python files (the TRL
 * reward example, the Python client), collecting its exit code and output.
 * @module
 */
import { spawn, spawnSync } from 'node:child_process'
import { ROOT } from './start-serve.ts'

export interface PythonRun {
  code: number | null
  out: string
  err: string
}

/** `python args…` in ROOT with `env` as its whole environment, `stdin` written to it if given. */
export function runPython(
  python: string,
  args: string[],
  { env, stdin }: { env: Record<string, string | undefined>; stdin?: string },
): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { cwd: ROOT, env })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
    child.stdin.end(stdin)
  })
}

/** `python3 --version` when it is 3.9 or later, else why not. */
export function findPython(): { ok: true; version: string } | { ok: false; reason: string } {
  const probe = spawnSync('python3', ['--version'], { encoding: 'utf8' })
  if (probe.error || probe.status !== 0) return { ok: false, reason: 'no python3 on PATH' }
  const version = (probe.stdout || probe.stderr).trim()
  const [, major, minor] = /Python (\d+)\.(\d+)/.exec(version) ?? []
  if (Number(major) !== 3 || Number(minor) < 9) {
    return { ok: false, reason: `${version} on PATH, the client needs 3.9+` }
  }
  return { ok: true, version }
}
