/**
 * `serve --workers 2`: a worker of the first start that was ready and then died while the other
 * was still loading was counted as "exited before it was ready; stopping" (the check was the
 * cumulative number of ready messages), and the server exited 1. It is a worker that died after
 * it was ready: replaced, the server serves on. The one worker that removes the
 * TOOLSEL_TEST_STOP_BEFORE_READY_FILE stops itself before it is ready (a slow load), and every
 * worker exits (code 70) once it is ready while TOOLSEL_TEST_CRASH_AFTER_READY_FILE exists.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { procState, until } from '../helpers/process-wait.ts'
import { ROOT, workerPids } from '../helpers/start-serve.ts'

let scratch: string | undefined
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

describe.skipIf(process.platform !== 'linux')(
  'serve --workers: a worker ready and dead while another of the first start still loads',
  () => {
    it('is replaced (a worker that died after it was ready), not a failed start; Ready once both are; SIGTERM exits 0', async () => {
      scratch = await mkdtemp(join(tmpdir(), 'toolsel-ready-then-died-'))
      const crash = join(scratch, 'crash')
      const hold = join(scratch, 'hold')
      await writeFile(crash, '')
      await writeFile(hold, '')
      let logs = ''
      const child = spawn(
        process.execPath,
        [
          ...['bin/toolsel.mjs', 'serve', '--port', '0', '--host', '127.0.0.1'],
          ...['--index-dir', join(scratch, 'indexes'), '--workers', '2'],
        ],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            TOOLSEL_LIBRARY: '',
            TOOLSEL_PORT: '',
            TOOLSEL_TEST_CRASH_AFTER_READY_FILE: crash,
            TOOLSEL_TEST_STOP_BEFORE_READY_FILE: hold,
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      )
      child.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
      const exited = new Promise((resolve) => child.once('exit', resolve))
      try {
        const running = () => {
          if (child.exitCode !== null) throw new Error(`the server exited:\n${logs}`)
          return true
        }
        // One worker holds before it is ready; the other was ready and died (code 70).
        await until(
          'a ready worker of the first start to die',
          // (Before: "exited before it was ready (code 70); stopping", the held worker never exits.)
          () => running() && /Worker \d+ exited (\(code 70\)|before it was ready)/.test(logs),
          60_000,
        )
        expect(logs).not.toMatch(/exited before it was ready/)
        expect(logs).toMatch(/WARN Worker \d+ exited \(code 70\); starting another/)
        expect(logs).not.toMatch(/Ready: 2 workers/)
        // Workers stop dying once ready; the held one of the first start goes on.
        await rm(crash)
        const held = workerPids(child.pid!).find((pid) => procState(pid) === 'T')
        expect(held).toBeDefined()
        process.kill(held!, 'SIGCONT')
        await until('both workers ready', () => running() && /Ready: 2 workers/.test(logs), 60_000)
        const port = /Listening on http:\/\/[^:]+:(\d+)/.exec(logs)![1]
        expect((await call(`http://127.0.0.1:${port}`, 'GET', '/readyz')).status).toBe(200)
        child.kill('SIGTERM')
        await exited
        expect(child.exitCode, logs).toBe(0)
        expect(logs.trimEnd().split('\n').at(-1)).toMatch(
          /INFO Stopped: every worker has exited \(SIGTERM received\); exit code 0 \{"restarts":\d+\}$/,
        )
      } finally {
        if (child.exitCode === null && child.signalCode === null) {
          for (const pid of workerPids(child.pid!)) process.kill(pid, 'SIGKILL')
          child.kill('SIGKILL')
        }
      }
    }, 120_000)
  },
)
