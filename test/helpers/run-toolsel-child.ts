/**
 * Runs `node bin/toolsel.mjs <argv>` as a child process (its own memory, killed at `timeoutMs`):
 * for inputs that could make an in-process run read forever (/dev/zero) or exhaust memory.
 */
import { spawn } from 'node:child_process'
import { expect } from 'vitest'
import { ROOT } from './start-serve.ts'

export interface ChildRun {
  code: number | null
  /** The signal that ended it (SIGKILL at the timeout), else null. */
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export function runToolselChild(
  argv: string[],
  { timeoutMs = 30_000, env = {} }: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/toolsel.mjs', ...argv], {
      cwd: ROOT,
      env: { ...process.env, TOOLSEL_CONFIG: '', TOOLSEL_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/**
 * The run ended by itself (no signal: it did not hang until the timeout) with exit code `code`
 * (2: refused input, the default) and said `message` on stderr.
 */
export function expectExit(run: ChildRun, message: string, code = 2): void {
  expect(run.signal, run.stderr).toBeNull()
  expect(run.stderr).toContain(message)
  expect(run.code, run.stderr).toBe(code)
}
