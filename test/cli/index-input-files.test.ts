/**
 * `toolsel index`'s input files. A path that names no file: the tool path and the --examples file
 * are refused alike, INVALID_INPUT and exit 2 (README: "exits 2 for input it refuses"), nothing
 * written; a tool file that is read but does not import stays IMPORT_FAILED, exit 1.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'

const TOOL = {
  type: 'function',
  function: {
    name: 'send_sms',
    description: 'Send an SMS text message',
    parameters: { type: 'object', properties: { to: { type: 'string' } } },
  },
}

describe('toolsel index with a missing input file', () => {
  it('exits 2 with INVALID_INPUT for a missing tool path as for a missing --examples file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-index-missing-'))
    const toolFile = join(dir, 'tools.json')
    await writeFile(toolFile, JSON.stringify([TOOL]))
    const indexDir = join(dir, 'indexes')

    const examples = await runCli([
      'index',
      toolFile,
      '--index-dir',
      indexDir,
      '--examples',
      join(dir, 'missing.jsonl'),
    ])
    expect(examples.stderr).toContain(
      `error [INVALID_INPUT]: Cannot read --examples file "${join(dir, 'missing.jsonl')}": no such file or directory`,
    )
    expect(examples.code).toBe(2)

    // Was exit 1, IMPORT_FAILED: the same mistake (a path with a typo) got another exit code.
    const tools = await runCli(['index', join(dir, 'missing.json'), '--index-dir', indexDir])
    expect(tools.stderr).toContain(
      `error [INVALID_INPUT]: Cannot read tool path "${join(dir, 'missing.json')}": no such file or directory`,
    )
    expect(tools.code).toBe(2)
    expect(existsSync(indexDir)).toBe(false)

    // A file that is there but holds no tools does not import: exit 1, as before.
    const empty = join(dir, 'empty.json')
    await writeFile(empty, '[]')
    const bad = await runCli(['index', empty, '--index-dir', indexDir])
    expect(bad.stderr).toContain('error [IMPORT_FAILED]')
    expect(bad.code).toBe(1)
    expect(existsSync(indexDir)).toBe(false)

    // And the one tool of a good file is "1 tool", not "1 tools".
    const good = await runCli(['index', toolFile, '--index-dir', indexDir])
    expect(good.code).toBe(0)
    expect(good.stderr).toContain(`1 tool written to ${join(indexDir, 'tools')}`)
  })
})
