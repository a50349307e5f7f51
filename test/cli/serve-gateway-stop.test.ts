/**
 * `toolsel serve` with a gateway stops within `server.shutdownGraceMs` on SIGTERM while upstreams
 * are still starting, and leaves none of their processes behind (real child processes, checked
 * with `ps`): during the first sync (before: Node's default SIGTERM exit, the upstreams that read
 * no stdin yet orphaned) and once ready with some still connecting (before: 2 s of the SDK's
 * stdin grace for each, 4 s for one that ignores SIGTERM). Connected upstreams that ignore the end
 * of their stdin and SIGTERM are SIGKILLed at the end of the grace, and logged (before: the SDK's
 * 2 s + 2 s after the drain, the stop taking grace + 4 s).
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { type MarkedNode, writeGatewayStopConfig } from '../helpers/gateway-stop-config.ts'
import { processesWith } from '../helpers/process-wait.ts'
import { ROOT } from '../helpers/start-serve.ts'

const HUNG = fileURLToPath(new URL('../mcp/fixtures/hung-upstream.mjs', import.meta.url))
const NODE_UPSTREAM = fileURLToPath(new URL('../mcp/fixtures/node-upstream.mjs', import.meta.url))
const GRACE_MS = 3000

const dirs: string[] = []
const markers: string[] = []
afterEach(async () => {
  // A failed run's upstreams (the test's own, found by their marker) go too.
  for (const marker of markers.splice(0))
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL')
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function until(check: () => boolean | Promise<boolean>, what: string, logs: () => string) {
  const deadline = Date.now() + 90_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not seen: ${what}\n${logs()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * A serve child: `gateway` makes its config section (`node(script, env)`: an upstream that
 * carries the test's marker), `graceMs` is its `server.shutdownGraceMs`.
 */
async function serveWithGateway(
  graceMs: number,
  gateway: (node: MarkedNode) => object,
  env: Record<string, string> = {},
) {
  const { marker, dir, config } = await writeGatewayStopConfig('gw-stop', graceMs, gateway)
  markers.push(marker)
  dirs.push(dir)
  const child = spawn(
    process.execPath,
    ['bin/toolsel.mjs', 'serve', '--port', '0', '--host', '127.0.0.1'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        TOOLSEL_CONFIG: config,
        TOOLSEL_INDEX_DIR: dir,
        TOOLSEL_LIBRARY: '',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let logs = ''
  child.stderr.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (code, signal) => resolve([code, signal])),
  )
  /** SIGTERM; the exit code and signal, and how long it took to exit, in ms. */
  const stop = async () => {
    const started = Date.now()
    child.kill('SIGTERM')
    const [code, signal] = await exited
    return { code, signal, stoppedMs: Date.now() - started }
  }
  return { marker, dir, logs: () => logs, stop }
}

describe('toolsel serve with a gateway: SIGTERM while upstreams start', () => {
  it.each([
    ['during the first sync', 600_000],
    ['once ready at firstSyncTimeoutMs, upstreams still connecting', 1500],
  ])(
    'stops within server.shutdownGraceMs %s, no upstream process left',
    async (_when, firstSyncTimeoutMs) => {
      const { marker, logs, stop } = await serveWithGateway(GRACE_MS, (node) => ({
        servers: {
          // Never answers; one ignores SIGTERM too. "busy" burns CPU before it reads stdin.
          hung: node(HUNG),
          deaf: node(HUNG, { HUNG_IGNORE_TERM: '1' }),
          busy: node(NODE_UPSTREAM, { UPSTREAM_CPU_SECONDS: '600' }),
          ok: node(NODE_UPSTREAM),
        },
        spawnTimeoutMs: 600_000,
        connectSlotMs: 600_000,
        firstSyncTimeoutMs,
      }))

      await until(() => /Listening on http:\/\/[^:]+:\d+/.test(logs()), 'listening', logs)
      const port = /Listening on http:\/\/[^:]+:(\d+)/.exec(logs())![1]
      // "ok" listed its tools (firstSync.done 1) and the other three are running.
      await until(
        async () => {
          const answer = await fetch(`http://127.0.0.1:${port}/readyz`)
          const body = (await answer.json()) as { firstSync?: { done: number } }
          return (body.firstSync?.done ?? 0) >= 1 && processesWith(marker).length === 4
        },
        'ok listed and 4 upstream processes',
        logs,
      )
      if (firstSyncTimeoutMs < 600_000) await until(() => /Ready:/.test(logs()), 'ready', logs)
      else expect(logs()).not.toContain('Ready:')

      const { code, signal, stoppedMs } = await stop()
      expect({ code, signal }).toEqual({ code: 0, signal: null })
      expect(stoppedMs).toBeLessThan(GRACE_MS)
      expect(logs()).toContain('SIGTERM received: closing')
      expect(processesWith(marker)).toEqual([])
    },
    150_000,
  )

  it('SIGKILLs connected upstreams that ignore stdin and SIGTERM at the grace, and logs them', async () => {
    const graceMs = 1500
    const { marker, logs, stop } = await serveWithGateway(graceMs, (node) => ({
      servers: {
        deaf1: node(NODE_UPSTREAM, { UPSTREAM_DEAF: '1' }),
        ok: node(NODE_UPSTREAM),
        deaf2: node(NODE_UPSTREAM, { UPSTREAM_DEAF: '1' }),
      },
    }))

    await until(() => /Ready:/.test(logs()), 'ready', logs)
    // All three listed their tools: connected, their processes running.
    expect(logs()).toMatch(/re-indexed.*"tools":9/)
    expect(processesWith(marker)).toHaveLength(3)

    const { code, signal, stoppedMs } = await stop()
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    // Before: about 4.3 s (the drain, then the SDK's 2 s + 2 s); now the grace and a little.
    expect(stoppedMs).toBeLessThan(graceMs + 2000)
    expect(logs()).toMatch(/killed \(SIGKILL\) 2: deaf1, deaf2\n/)
    expect(processesWith(marker)).toEqual([])
  }, 120_000)

  it('closes its upstreams at the drain, not after a library write that runs on past the grace', async () => {
    // A PUT held mid-write (TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE) whose client left: the write
    // runs on (only the stop abandons it), the connections are all closed at once. Before: the
    // gateway was closed only once the write was settled, past the grace, its deadline gone: the
    // connected upstream, which exits when its stdin ends, was SIGKILLed at once.
    const graceMs = 2000
    const work = await mkdtemp(join(tmpdir(), 'toolsel-gw-write-'))
    dirs.push(work)
    const hold = join(work, 'hold')
    await writeFile(hold, '')
    const { marker, logs, stop } = await serveWithGateway(
      graceMs,
      (node) => ({ servers: { ok: node(NODE_UPSTREAM) } }),
      { TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE: hold, TOOLSEL_LOG_LEVEL: 'info' },
    )
    await until(() => /Ready:/.test(logs()), 'ready', logs)
    expect(processesWith(marker)).toHaveLength(1)
    const url = /Listening on (http:\/\/\S+)/.exec(logs())![1]
    // One connection of its own (no pool): fetch's pool opened another connection to the
    // server ~0.3 s after an abort, which the drain then rightly waited on until the grace.
    const body = JSON.stringify([{ name: 'send_sms', description: 'Send an SMS text message' }])
    const put = request(`${url}/v1/libraries/sms`, {
      method: 'PUT',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    })
    put.on('error', () => undefined)
    put.end(body)
    await until(() => readFileSync(hold, 'utf8') === 'held', 'the upload to hold mid-write', logs)
    // The client leaves: its one connection closed.
    const closed = new Promise((resolve) => put.once('close', resolve))
    put.destroy()
    await closed

    const { code, signal } = await stop()
    expect({ code, signal }, logs()).toEqual({ code: 0, signal: null })
    expect(logs()).toMatch(/"writesUnfinished":1/)
    expect(logs()).not.toMatch(/killed \(SIGKILL\)/)
    expect(processesWith(marker)).toEqual([])
  }, 120_000)
})
