import { spawn } from 'node:child_process'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/start-serve.ts'
import { runCli } from './run-cli.ts'

describe('toolsel select - (the instruction from stdin)', () => {
  it('reads the instruction from a real pipe, as the same words given as an argument', async () => {
    const words = 'Send a text message to Ann saying I am late'
    const fromArgument = await runCli(['select', words, '--json'])
    expect(fromArgument.code, fromArgument.stderr).toBe(0)
    // The built CLI as a script runs it: `echo … | toolsel select - --json`.
    const child = spawn(process.execPath, ['bin/toolsel.mjs', 'select', '-', '--json'], {
      cwd: ROOT,
      env: { ...process.env, TOOLSEL_LIBRARY: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.resume()
    child.stdin.end(`${words}\n`)
    const code = await new Promise((resolve) => child.once('exit', resolve))
    // Was: the instruction "-" (a step of its own, no tool), exit 0.
    expect(code).toBe(0)
    const piped = JSON.parse(stdout)
    const argued = JSON.parse(fromArgument.stdout)
    expect(piped.steps.map((step: { text: string }) => step.text)).toEqual(
      argued.steps.map((step: { text: string }) => step.text),
    )
    expect(piped.tools.map((tool: { id: string }) => tool.id)).toEqual(
      argued.tools.map((tool: { id: string }) => tool.id),
    )
    expect(piped.tools.length).toBeGreaterThan(0)
  }, 180_000)

  it('refuses stdin past the bound, empty, or not UTF-8 (exit 2, one line)', async () => {
    const big = await runCli(
      ['select', '-', '--json'],
      {},
      Readable.from([Buffer.alloc(30_000, 'a')]),
    )
    expect(big.code).toBe(2)
    expect(JSON.parse(big.stdout).error.message).toBe(
      'The instruction from stdin is larger than 24000 bytes; nothing past that was read',
    )
    const empty = await runCli(['select', '-'], {}, Readable.from([' \n']))
    expect(empty.code).toBe(2)
    expect(empty.stderr).toMatch(/^error \[INVALID_INPUT\]: Give an instruction: .*, or - to read/)
    const latin1 = await runCli(
      ['select', '-'],
      {},
      Readable.from([Buffer.from([0x63, 0x61, 0x66, 0xe9])]),
    )
    expect(latin1).toMatchObject({
      code: 2,
      stderr:
        'error [INVALID_INPUT]: The instruction from stdin is not UTF-8 text at byte 3 (line 1): send it as UTF-8\n',
    })
    const long = await runCli(['select', 'a '.repeat(4001)])
    expect(long.code).toBe(2)
    expect(long.stderr).toContain('at most 8000 are taken (server.maxInstructionChars)')
  })
})
