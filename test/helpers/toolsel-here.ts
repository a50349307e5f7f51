/**
 * `toolsel <args> --index-dir <indexDir>` in this process (src/main.ts), for what a test puts in
 * an index directory before the part it checks: a process of its own (serve-per-test.ts'
 * `toolselOn`, for what is under test) only adds a start there, seconds on a loaded machine.
 * @module
 */
import { expect } from 'vitest'
import { main } from '../../src/main.ts'

/** Runs the command in this process; fails the test (with its stderr) when it exits non-zero. */
export async function toolselHere(indexDir: string, ...args: string[]): Promise<void> {
  let stderr = ''
  const io = { stdout: () => undefined, stderr: (text: string) => void (stderr += text), env: {} }
  const code = await main([...args, '--index-dir', indexDir], io)
  expect(code, stderr).toBe(0)
}
