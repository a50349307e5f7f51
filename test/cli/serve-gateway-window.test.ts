/**
 * `toolsel serve` with a gateway never answers that the gateway library does not exist: from the
 * moment it listens until it is ready, a call naming that library is "not ready" (503, retry) or
 * answered over it, on /v1 and on /mcp (real serve child, real upstream process). Before: the
 * service was ready before the gateway registered its (empty) library, and calls in between were
 * UNKNOWN_LIBRARY. The window is made wide by a real slow step: a `dense:static:glove-100d` part
 * in `retrieve.build` whose vectors first load when the gateway library is built (the default
 * library is a saved BM25-only index, so nothing loads them before).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/start-serve.ts'
import { callMcpTool } from '../helpers/mcp-fetch.ts'
import { runCli } from './run-cli.ts'

const NODE_UPSTREAM = fileURLToPath(new URL('../mcp/fixtures/node-upstream.mjs', import.meta.url))
const TOOLS = fileURLToPath(new URL('../fixtures/formats/anthropic-tools.json', import.meta.url))

const dirs: string[] = []
const children: ChildProcess[] = []
const markers: string[] = []
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  for (const marker of markers.splice(0))
    for (const line of execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n'))
      if (line.includes(marker)) process.kill(Number.parseInt(line.trim(), 10), 'SIGKILL')
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** An answer as `status code`: `503 NOT_READY`, `404 UNKNOWN_LIBRARY`, `200 ok`. */
async function v1Search(url: string): Promise<string> {
  const response = await fetch(`${url}/v1/search-tools`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'weather', library: 'gateway' }),
  })
  const body = (await response.json()) as { error?: { code: string } }
  return `${response.status} ${body.error?.code ?? 'ok'}`
}

/** The MCP search_tools call's answer as `status code` (`200 ok`, `200 UNKNOWN_LIBRARY`…). */
async function mcpSearch(url: string): Promise<string> {
  const response = await callMcpTool(`${url}/mcp`, 'search_tools', {
    query: 'weather',
    library: 'gateway',
  })
  const text = await response.text()
  if (response.status !== 200)
    return `${response.status} ${text.includes('loading') ? 'NOT_READY' : text}`
  const code = /"isError":true/.test(text) ? (/[A-Z_]{6,}/.exec(text)?.[0] ?? 'error') : 'ok'
  return `200 ${code}`
}

describe('toolsel serve with a gateway: the gateway library from the first answer', () => {
  it('answers not-ready or over the library, never UNKNOWN_LIBRARY, on /v1 and /mcp', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-gw-window-'))
    dirs.push(dir)
    const marker = `gw-window-${process.pid}-${Date.now()}`
    markers.push(marker)
    const indexDir = join(dir, 'indexes')
    const indexed = await runCli([
      'index',
      TOOLS,
      '--name',
      'small',
      '--retriever',
      'bm25',
      '--index-dir',
      indexDir,
    ])
    expect(indexed.code, indexed.stderr).toBe(0)
    const config = join(dir, 'config.json')
    await writeFile(
      config,
      JSON.stringify({
        library: { default: 'small', loadAll: false, indexDir },
        retrieve: { build: 'bm25,dense:static:glove-100d' },
        gateway: { servers: { ok: { command: process.execPath, args: [NODE_UPSTREAM, marker] } } },
      }),
    )
    const child = spawn(
      process.execPath,
      ['bin/toolsel.mjs', 'serve', '--port', '0', '--host', '127.0.0.1', '--config', config],
      {
        cwd: ROOT,
        env: { ...process.env, TOOLSEL_LIBRARY: '', TOOLSEL_PORT: '', TOOLSEL_INDEX_DIR: '' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    children.push(child)
    let logs = ''
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        logs += chunk.toString()
        const listening = /Listening on (http:\/\/\S+)/.exec(logs)
        if (listening) resolve(listening[1])
      })
      child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${logs}`)))
    })
    // From listening on, each in its own loop: every answer until it is served over the library.
    const seen = new Map<string, number>()
    const deadline = Date.now() + 90_000
    const poll = async (name: string, ask: (url: string) => Promise<string>) => {
      for (;;) {
        if (Date.now() > deadline)
          throw new Error(`not served: ${JSON.stringify([...seen])}\n${logs}`)
        const answer = `${name} ${await ask(url)}`
        seen.set(answer, (seen.get(answer) ?? 0) + 1)
        if (answer.endsWith(' 200 ok')) return
      }
    }
    await Promise.all([poll('v1', v1Search), poll('mcp', mcpSearch)])
    const answers = [...seen.keys()].sort()
    expect(answers, JSON.stringify([...seen])).toEqual(
      expect.arrayContaining(['mcp 200 ok', 'v1 200 ok']),
    )
    for (const answer of answers)
      expect(answer, JSON.stringify([...seen])).toMatch(/^(v1|mcp) (200 ok|503 NOT_READY)$/)
  }, 120_000)
})
