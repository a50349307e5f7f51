/**
 * `library.maxTools` (env TOOLSEL_MAX_TOOLS, default 2,000,000): the most tools one import may
 * produce and records one tool file may hold, obeyed by the importers, `toolsel index` and the
 * HTTP PUT; and tool files read from disk are UTF-8 checked (bytes that are not were read as
 * U+FFFD, silently). Before: no count cap (9,000,000 tiny TaskBench nodes under the byte cap
 * imported for over a minute, 0.9 GB).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  importTools,
  importToolsFromFile,
  importToolsFromPath,
} from '../../../src/library/importers/index.ts'
import { runToolselChild } from '../../helpers/run-toolsel-child.ts'
import { startServe } from '../../helpers/start-serve.ts'
import { runCli } from '../../cli/run-cli.ts'
import { expectToolselErrorAsync } from './expect-toolsel-error.ts'

let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-tool-count-'))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

const tool = (at: number) => ({ id: `t${at}`, name: `t${at}`, description: `tool ${at}` })

describe('library.maxTools', () => {
  it('refuses JSON Lines at the record past the cap, the rest unparsed', async () => {
    const text = [1, 2, 3, 4].map((at) => JSON.stringify(tool(at))).join('\n') + '\nnot json\n'
    await expectToolselErrorAsync(
      () => importTools(text, { fileName: 'tools.jsonl', maxTools: 3 }),
      'IMPORT_FAILED',
      'tools.jsonl: more than 3 records (line 4 is one more; nothing past it was parsed): refused (library.maxTools, env TOOLSEL_MAX_TOOLS, raises the limit)',
    )
    expect(
      (await importTools(text.split('\n').slice(0, 3).join('\n'), { maxTools: 3 })).tools,
    ).toHaveLength(3)
  })

  it('refuses a JSON document whose record list is longer, before importing it; and tools past it', async () => {
    const nodes = Array.from({ length: 5 }, (_, at) => ({ id: `n${at}`, desc: 'x' }))
    await expectToolselErrorAsync(
      () => importTools(JSON.stringify({ nodes }), { fileName: 'tool_desc.json', maxTools: 4 }),
      'IMPORT_FAILED',
      'tool_desc.json: more than 4 records (5): refused (library.maxTools',
    )
    // An OpenAPI spec's operations are counted as the tools they import as.
    const paths = Object.fromEntries(
      [1, 2, 3].map((at) => [`/p${at}`, { get: { operationId: `op${at}`, summary: 'x' } }]),
    )
    const spec = JSON.stringify({ openapi: '3.0.0', info: { title: 'x', version: '1' }, paths })
    await expectToolselErrorAsync(
      () => importTools(spec, { fileName: 'spec.json', maxTools: 2 }),
      'IMPORT_FAILED',
      'spec.json: more than 2 tools (3 imported)',
    )
    expect((await importTools(spec, { maxTools: 3 })).tools).toHaveLength(3)
  })

  it('counts a directory of tool files together', async () => {
    const dir = join(root, 'dir')
    await rm(dir, { recursive: true, force: true })
    await mkdir(dir)
    await writeFile(join(dir, 'a.json'), JSON.stringify([tool(1), tool(2)]))
    await writeFile(join(dir, 'b.json'), JSON.stringify([tool(3), tool(4)]))
    await expectToolselErrorAsync(
      () => importToolsFromPath(dir, { maxTools: 3 }),
      'IMPORT_FAILED',
      `${dir}: the directory's files hold more than 3 tools (4 up to b.json)`,
    )
    expect((await importToolsFromPath(dir, { maxTools: 4 })).tools).toHaveLength(4)
  })

  it('toolsel index (TOOLSEL_MAX_TOOLS) refuses 3,000,000 JSON Lines tools at the 1,001st, in a 128 MB heap', async () => {
    // Before: every record parsed and imported first: out of memory under 128 MB.
    const file = join(root, 'many.jsonl')
    const lines: string[] = []
    for (let at = 0; at < 3_000_000; at += 1) lines.push(`{"id":"t${at}","name":"t${at}"}`)
    await writeFile(file, `${lines.join('\n')}\n`)
    lines.length = 0
    const run = await runToolselChild(
      ['index', file, '--name', 'many', '--index-dir', join(root, 'many-index')],
      {
        env: { NODE_OPTIONS: '--max-old-space-size=128', TOOLSEL_MAX_TOOLS: '1000' },
        timeoutMs: 120_000,
      },
    )
    expect(run.stderr).toContain(
      `${file}: more than 1000 records (line 1001 is one more; nothing past it was parsed): refused (library.maxTools, env TOOLSEL_MAX_TOOLS, raises the limit)`,
    )
    expect(run.code).toBe(1)
  }, 180_000)

  it('PUT /v1/libraries/:library obeys library.maxTools', async () => {
    const small = join(root, 'small.json')
    await writeFile(small, JSON.stringify([tool(0)]))
    const serve = await startServe(['--library', small], { env: { TOOLSEL_MAX_TOOLS: '3' } })
    try {
      const put = (tools: unknown[]) =>
        fetch(`${serve.url}/v1/libraries/few`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(tools),
        })
      const tools = Array.from({ length: 4 }, (_, at) => tool(at))
      const refused = await put(tools)
      expect(refused.status).toBe(400)
      const body = (await refused.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe('IMPORT_FAILED')
      expect(body.error.message).toContain('more than 3 records (4): refused (library.maxTools')
      expect((await put(tools.slice(0, 3))).status).toBe(201)
    } finally {
      await serve.stop()
    }
  }, 120_000)
})

describe('tool files are UTF-8', () => {
  it('bytes that are not UTF-8 are refused naming their byte offset and line, not read as U+FFFD', async () => {
    const file = join(root, 'latin1.json')
    const head = '[\n{"id": "a", "name": "a", "description": "caf'
    await writeFile(
      file,
      Buffer.concat([Buffer.from(head), Buffer.from([0xe9]), Buffer.from(' menu"}\n]')]),
    )
    await expectToolselErrorAsync(
      () => importToolsFromFile(file),
      'IMPORT_FAILED',
      `Tool file "${file}" is not UTF-8 text at byte ${Buffer.byteLength(head)} (line 2): save it as UTF-8. Nothing was imported.`,
    )
    const run = await runCli(['index', file, '--index-dir', join(root, 'latin1-index')])
    expect(run.stderr).toContain(`is not UTF-8 text at byte ${Buffer.byteLength(head)} (line 2)`)
    expect(run.code).toBe(1)
    // A character of several bytes before it is counted in bytes; valid UTF-8 imports.
    await writeFile(file, '[{"id": "a", "name": "a", "description": "café ✓"}]')
    expect((await importToolsFromFile(file)).tools[0].description).toBe('café ✓')
  })
})
