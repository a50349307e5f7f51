/**
 * Runs a Python process from the checkout's root for the tests of the Python files (the TRL
 * reward example, the Python client), collecting its exit code and output.
 * @module
 */
import { spawn } from 'node:child_process'
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
