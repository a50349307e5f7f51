/**
 * SIGTERM (or Ctrl-C) to `toolsel serve` while an upload's index is being written: serve's
 * graceful stop owns the signal, so signal-cleanup leaves the staged directory
 * (`.tmp-<name>+<pid>…`) to it; the stop lets the upload finish (committed, answered) and the
 * process then exits 0 with no staged directory left behind. (Round 48 left this branch of
 * src/signal-cleanup.ts, "another listener handles it", without a test.)
 *
 * The server stops itself mid-write (test-only TOOLSEL_TEST_STOP_IN_INDEX_WRITE: SIGSTOP, after
 * the tools file is written); the signal sent while it is stopped is handled once it goes on
 * (SIGCONT), as one arriving at that point would be. A write still under way when the grace
 * period ends (abandoned): serve-stop-held-writes.test.ts.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { procState, until } from '../helpers/process-wait.ts'
import { startServe } from '../helpers/start-serve.ts'
import { SMS_FUNCTION_TOOL as SMS_TOOL } from '../helpers/sample-tools.ts'

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
  },
)
