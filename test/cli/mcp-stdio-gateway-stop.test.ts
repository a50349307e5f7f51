/**
 * `toolsel mcp --stdio` with a gateway stops within `server.shutdownGraceMs` when its stdin closes
 * or on SIGTERM, as `toolsel serve` does: connected upstreams that ignore the end of their stdin
 * and SIGTERM are SIGKILLed at the end of the grace and named in a warning (before: the SDK's
 * 2 s + 2 s for them, about 4 s whatever the grace). Stopped by SIGTERM with its stdin still
 * open, it exits (it used to read stdin on and never exit). Real child processes, checked with `ps`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { writeGatewayStopConfig } from '../helpers/gateway-stop-config.ts'
import { processesWith, until } from '../helpers/process-wait.ts'
import { ROOT } from '../helpers/start-serve.ts'

const NODE_UPSTREAM = fileURLToPath(new URL('../mcp/fixtures/node-upstream.mjs', import.meta.url))
const GRACE_MS = 1500

const dirs: string[] = []
const markers: string[] = []
const children: ChildProcess[] = []
afterEach(async () => {
  // A failed run's toolsel child and upstreams (found by the test's marker) go too.
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  for (const marker of markers.splice(0))
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL')
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

describe('toolsel mcp --stdio with a gateway: the stop fits server.shutdownGraceMs', () => {
  it.each([['stdin closed'], ['SIGTERM']])(
    'SIGKILLs connected upstreams deaf to stdin and SIGTERM at the grace (%s)',
    async (how) => {
      const { marker, dir, config } = await writeGatewayStopConfig(
        'stdio-stop',
        GRACE_MS,
        (node) => ({
          servers: {
            deaf1: node(NODE_UPSTREAM, { UPSTREAM_DEAF: '1' }),
            ok: node(NODE_UPSTREAM),
            deaf2: node(NODE_UPSTREAM, { UPSTREAM_DEAF: '1' }),
          },
        }),
      )
      markers.push(marker)
      dirs.push(dir)
      const child = spawn(process.execPath, ['bin/toolsel.mjs', 'mcp', '--stdio'], {
        cwd: ROOT,
        env: {
          ...process.env,
          TOOLSEL_CONFIG: config,
          TOOLSEL_INDEX_DIR: dir,
          TOOLSEL_LIBRARY: '',
        },
        stdio: ['pipe', 'ignore', 'pipe'],
      })
      children.push(child)
      let logs = ''
      child.stderr.on('data', (chunk: Buffer) => (logs += chunk.toString()))
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.once('exit', (code, signal) => resolve([code, signal])),
      )
      // All three listed their tools: connected, their processes running.
      await until(
        `all three upstreams listed\n${logs}`,
        () => /re-indexed.*"tools":9/.test(logs) && logs.includes('MCP server ready on stdio'),
        90_000,
      )
      expect(processesWith(marker)).toHaveLength(3)

      const started = Date.now()
      if (how === 'SIGTERM') child.kill('SIGTERM')
      else child.stdin.end()
      // Stopped by SIGTERM with its stdin still open, it exits too (main at 0aa3556: never,
      // stdin's pipe into the line gate held it).
      const ended = await Promise.race([
        exited,
        new Promise<'still running'>((resolve) =>
          setTimeout(() => resolve('still running'), 20_000),
        ),
      ])
      const stoppedMs = Date.now() - started
      expect(ended, logs).toEqual([0, null])
      // Before: about 4 s (the SDK's 2 s + 2 s); now the grace and a little.
      expect(stoppedMs, logs).toBeLessThan(GRACE_MS + 1500)
      expect(logs).toMatch(/killed \(SIGKILL\) 2: deaf1, deaf2\n/)
      expect(processesWith(marker)).toEqual([])
    },
    120_000,
  )
})
