/**
 * `toolsel index` refuses a tool id longer than MAX_TOOL_ID_CHARS (500) as a real process does:
 * IMPORT_FAILED naming the file, the record and the id (escaped, cut), exit 1, no index written;
 * an id of exactly 500 is indexed and can be asked for by `toolsel select`. importToolsFromPath,
 * which the command calls, is tested on real files in test/library/importers/tool-id-length.test.ts;
 * this runs bin/toolsel.mjs as a user does (dist/ when it matches src/, else the sources: not the
 * sources always, whose start through tsx took seconds of CPU more a process; round 46).
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_TOOL_ID_CHARS } from '../../src/library/tool-id-limit.ts'

const BIN = fileURLToPath(new URL('../../bin/toolsel.mjs', import.meta.url))

/** `toolsel <argv>` in a child process, with its exit code and output. */
function toolsel(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...argv],
      { env: { PATH: process.env.PATH }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        resolve({ code, stdout, stderr })
      },
    )
  })
}

const fn = (name: string) => ({
  type: 'function',
  function: { name, description: `Send a message (${name.length})`, parameters: {} },
})

let scratch: string
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'toolsel-cli-id-length-'))
})
afterAll(async () => rm(scratch, { recursive: true, force: true }))

describe('toolsel index and the tool id bound', () => {
  it('exits 1 with IMPORT_FAILED for an id of 501, writing nothing; indexes one of 500', async () => {
    const tooLong = join(scratch, 'too-long.json')
    await writeFile(
      tooLong,
      JSON.stringify([fn('send_sms'), fn('x'.repeat(MAX_TOOL_ID_CHARS + 1))]),
    )
    const indexDir = join(scratch, 'indexes')
    const refused = await toolsel(['index', tooLong, '--name', 'long', '--index-dir', indexDir])
    expect(refused.stderr).toContain(
      `error [IMPORT_FAILED]: ${tooLong}: record 1: tool id "${'x'.repeat(64)}"… is ${MAX_TOOL_ID_CHARS + 1} characters long; a tool id has at most ${MAX_TOOL_ID_CHARS}: shorten the name or id it is made from`,
    )
    expect(refused.code).toBe(1)
    expect(existsSync(join(indexDir, 'long'))).toBe(false)

    const edge = 'y'.repeat(MAX_TOOL_ID_CHARS)
    const fits = join(scratch, 'fits.json')
    await writeFile(fits, JSON.stringify([fn('send_sms'), fn(edge)]))
    const indexed = await toolsel(['index', fits, '--name', 'edge', '--index-dir', indexDir])
    expect(indexed.code, indexed.stderr).toBe(0)
    const selected = await toolsel([
      'select',
      `Send a message (${MAX_TOOL_ID_CHARS})`,
      '--library',
      'edge',
      '--index-dir',
      indexDir,
      '--retriever',
      'bm25',
      '--json',
    ])
    expect(selected.code, selected.stderr).toBe(0)
    const ids = JSON.parse(selected.stdout).tools.map((tool: { id: string }) => tool.id)
    expect(ids).toContain(edge)
  }, 120_000)
})
