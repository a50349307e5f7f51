import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMMANDS, JSON_COMMANDS } from '../../src/main.ts'
import { runCli } from './run-cli.ts'

/** Each command's flags, from its module. */
const COMMAND_FLAGS: Record<string, object> = Object.fromEntries(
  await Promise.all(
    Object.keys(COMMANDS).map(async (name) => [
      name,
      (await import(`../../src/cli/${name}-command.ts`)).OPTIONS as object,
    ]),
  ),
)

let dir: string
let closedPort: number
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-json-errors-'))
  // A port nothing listens on: one the system gave a server that has closed since.
  const server = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  closedPort = (server.address() as AddressInfo).port
  await new Promise((resolve) => server.close(resolve))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

/** A real failure of each command that takes --json, and the code it fails with. */
function failures(): Array<[argv: string[], code: string, exit: number]> {
  return [
    [['select', 'hi', '--library', 'nosuch', '--index-dir', dir], 'UNKNOWN_LIBRARY', 1],
    [['select', 'hi', '--libary', 'x'], 'INVALID_INPUT', 2],
    [['libraries', 'show', 'nosuch', '--index-dir', dir], 'UNKNOWN_LIBRARY', 1],
    [
      ['libraries', 'list', '--server', `http://127.0.0.1:${closedPort}`],
      'UPSTREAM_UNAVAILABLE',
      1,
    ],
    [['models', 'check', join(dir, 'no-model')], 'INVALID_INPUT', 2],
    [['snapshot', 'restore', join(dir, 'no-snapshot'), '--index-dir', dir], 'INVALID_INPUT', 2],
    [['bench', '--suite', `file:${join(dir, 'none.jsonl')}`], 'INVALID_INPUT', 2],
    [['bench', '--suite', 'demo', '--limit', '0'], 'INVALID_INPUT', 2],
  ]
}

describe('--json on a failure', () => {
  it('prints {"error":{"code","message"}} on stdout; stderr and the exit code as without --json', async () => {
    const commands = new Set<string>()
    for (const [argv, code, exit] of failures()) {
      commands.add(argv[0])
      const plain = await runCli(argv)
      const json = await runCli([...argv, '--json'])
      expect({ argv, exit: plain.code, stdout: plain.stdout }).toEqual({ argv, exit, stdout: '' })
      expect({ argv, exit: json.code, stderr: json.stderr }).toEqual({
        argv,
        exit,
        stderr: plain.stderr,
      })
      expect(json.stdout.endsWith('\n'), json.stdout).toBe(true)
      const parsed = JSON.parse(json.stdout)
      expect(Object.keys(parsed)).toEqual(['error'])
      expect(parsed.error.code, argv.join(' ')).toBe(code)
      expect(plain.stderr).toBe(`error [${code}]: ${parsed.error.message}\n`)
    }
    // Every command that takes --json is among the failures above, and JSON_COMMANDS is those.
    expect([...commands].sort()).toEqual([...JSON_COMMANDS].sort())
    const takeJson = Object.entries(COMMAND_FLAGS).filter(([, flags]) => 'json' in flags)
    expect(takeJson.map(([name]) => name).sort()).toEqual([...JSON_COMMANDS].sort())
  })

  it('a --json after "--" is a positional word, not the flag', async () => {
    const result = await runCli([
      'select',
      '--index-dir',
      dir,
      '--library',
      'nosuch',
      '--',
      '--json',
    ])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/^error \[UNKNOWN_LIBRARY\]/)
  })
})
