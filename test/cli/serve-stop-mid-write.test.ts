/**
 * SIGTERM (or Ctrl-C) to `toolsel serve` while an upload's index is being written: serve's
 * graceful stop owns the signal, so signal-cleanup leaves the staged directory
 * (`.tmp-<name>+<pid>…`) to it; the stop lets the upload finish (committed, answered) and the
 * process then exits 0 with no staged directory left behind. (Round 48 left this branch of
 * src/signal-cleanup.ts, "another listener handles it", without a test.)
 *
 * The server stops itself mid-write (test-only TOOLSEL_TEST_STOP_IN_INDEX_WRITE: SIGSTOP, after
 * the tools file is written); the signal sent while it is stopped is handled once it goes on
 * (SIGCONT), as one arriving at that point would be.
 *
 * A write still under way when the grace period (server.shutdownGraceMs) ends is abandoned: held
 * mid-write (TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE: the process runs on, as on a slow disk), it
 * is stopped by the shutdown, its staged directory removed, and only then does the server say
 * "Stopped" (with writesUnfinished) and exit; the library saved before is served after a restart.
 * Before round 52 "Stopped" came at the grace's end and the process lingered while the write ran
 * on (here: forever, the hold never ending).
 */
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { procState, until } from '../helpers/process-wait.ts'
import { copySavedDemo, startServe } from '../helpers/start-serve.ts'

const SMS_TOOL = {
  type: 'function',
  function: {
    name: 'send_sms',
    description: 'Send an SMS text message to a phone number',
    parameters: { type: 'object', properties: { to: { type: 'string' } } },
  },
}

const TOOLS = JSON.stringify([SMS_TOOL])

describe.skipIf(process.platform !== 'linux')(
  'toolsel serve stopped during a library write',
  () => {
    it.each(['SIGTERM', 'SIGINT'] as const)(
      'by %s: the upload is finished and answered (201), the process exits 0, no staged directory is left',
      async (signal) => {
        const serve = await startServe([], {
          savedDemo: true,
          env: { TOOLSEL_TEST_STOP_IN_INDEX_WRITE: '1', TOOLSEL_LOG_LEVEL: 'info' },
        })
        const { child, indexDir } = serve
        try {
          const answer = fetch(`${serve.url}/v1/libraries/sms`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: TOOLS,
          }).then(async (response) => ({ status: response.status, body: await response.text() }))
          await until(
            'the server to stop itself mid-write',
            () => procState(child.pid!) === 'T',
            60_000,
            serve.logs,
          )
          const staged = (await readdir(indexDir)).filter((entry) => entry.startsWith('.tmp-'))
          expect(staged).toHaveLength(1)
          expect(staged[0]).toMatch(/^\.tmp-sms\+/)

          const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
            (resolve) => child.once('exit', (code, signal) => resolve({ code, signal })),
          )
          child.kill(signal)
          child.kill('SIGCONT')
          const { status, body } = await answer
          expect(status, body).toBe(201)
          expect(JSON.parse(body)).toMatchObject({ name: 'sms', toolCount: 1, persisted: true })
          expect(await exited, serve.logs()).toEqual({ code: 0, signal: null })
          const entries = await readdir(indexDir)
          expect(entries.filter((entry) => entry.startsWith('.tmp-'))).toEqual([])
          const manifest = JSON.parse(
            await readFile(join(indexDir, 'sms', 'manifest.json'), 'utf8'),
          )
          expect(manifest.toolCount ?? manifest.tools ?? 1).toBeTruthy()
          expect(await readFile(join(indexDir, 'sms', 'tools.jsonl'), 'utf8')).toContain('send_sms')
        } finally {
          child.kill('SIGCONT')
          await serve.stop()
        }
      },
      120_000,
    )
    it('past the grace period: a write held mid-way is abandoned, its staged directory removed, then "Stopped" (writesUnfinished 1), exit 0; the old library is served after a restart', async () => {
      const work = await mkdtemp(join(tmpdir(), 'toolsel-stop-write-'))
      const indexDir = join(work, 'index')
      const hold = join(work, 'hold')
      const config = join(work, 'config.json')
      await writeFile(config, JSON.stringify({ server: { shutdownGraceMs: 300 } }))
      await copySavedDemo(indexDir)
      const env = { TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE: hold, TOOLSEL_LOG_LEVEL: 'info' }
      const put = (url: string, tools: unknown[]) =>
        fetch(`${url}/v1/libraries/sms`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(tools),
        })
      const serve = await startServe(['--config', config], { indexDir, env })
      const { child } = serve
      try {
        // Saved before: no hold file yet.
        const first = await put(serve.url, [SMS_TOOL])
        expect(first.status).toBe(201)
        const saved = (await first.json()) as { contentHash: string }
        await writeFile(hold, '')
        const replaced = [
          SMS_TOOL,
          { ...SMS_TOOL, function: { ...SMS_TOOL.function, name: 'send_mms' } },
        ]
        const answer = put(serve.url, replaced).then(
          (response) => response.status,
          (error: unknown) => String(error),
        )
        await until(
          'the upload to hold mid-write',
          () => readFileSync(hold, 'utf8') === 'held',
          60_000,
          serve.logs,
        )
        const staged = (await readdir(indexDir)).filter((entry) => entry.startsWith('.tmp-'))
        expect(staged).toEqual([expect.stringMatching(/^\.tmp-sms\+/)])

        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
          (resolve) => child.once('exit', (code, signal) => resolve({ code, signal })),
        )
        const started = performance.now()
        child.kill('SIGTERM')
        // The grace (300 ms), then the abandoned write's wait (at most 2 s more), and the
        // stop's own work; without the abort the hold (still there) kept it running for good.
        const outcome = await Promise.race([
          exited,
          new Promise((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000)),
        ])
        expect(outcome, serve.logs()).toEqual({ code: 0, signal: null })
        expect(performance.now() - started).toBeLessThan(15_000)
        // The client got no answer (its connection closed at the grace's end).
        expect(await answer).not.toBe(201)
        expect(existsSync(hold)).toBe(true)
        expect((await readdir(indexDir)).filter((entry) => entry.startsWith('.tmp-'))).toEqual([])
        const lines = serve.logs().trimEnd().split('\n')
        expect(lines.at(-1), serve.logs()).toMatch(
          /Stopped \{"answeredWhileStopping":0,"unfinished":1,"writesUnfinished":1\}/,
        )
        expect(serve.logs()).toContain('Grace period over')
        expect(serve.logs()).not.toMatch(/Library "sms" replaced/)
        expect(await readFile(join(indexDir, 'sms', 'tools.jsonl'), 'utf8')).not.toContain(
          'send_mms',
        )

        // Restarted on the same directory: the library saved before, whole.
        await rm(hold)
        const again = await startServe([], { indexDir })
        try {
          const response = await fetch(`${again.url}/v1/libraries/sms`)
          expect(response.status).toBe(200)
          expect(await response.json()).toMatchObject({
            toolCount: 1,
            contentHash: saved.contentHash,
            persisted: true,
          })
        } finally {
          await again.stop()
        }
      } finally {
        await serve.stop()
        await rm(work, { recursive: true, force: true })
      }
    }, 180_000)
  },
)
